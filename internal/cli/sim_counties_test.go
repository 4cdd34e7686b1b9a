package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// countyTruth is the truth's articles on the generated county hosts.
func countyTruth(t *testing.T, truth []sim.TruthArticle) []sim.TruthArticle {
	t.Helper()
	var out []sim.TruthArticle
	for _, a := range truth {
		if strings.HasSuffix(a.Host, "."+sim.CountyDomain) {
			out = append(out, a)
		}
	}
	return out
}

// startCounties runs `zhizhi sim --seed 1 --counties n --write-config DIR`
// with the bundled configuration directory and returns it with DIR.
func startCounties(ctx context.Context, t testing.TB, n int) (*simProcess, string) {
	t.Helper()
	bin := zhizhiBinary(t)
	bundled, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "counties")
	return startSim(ctx, t, bin, []string{"ZHIZHI_CONFIG_DIR=" + bundled}, "sim", "--seed", "1", "--counties", fmt.Sprint(n), "--write-config", cfg), cfg
}

// TestSimCountiesCrawl: `zhizhi sim --counties 4 --write-config DIR`
// writes a configuration that `config lint` accepts and `dept import` and
// `config sync` load, and a polite `crawl --all` of it stores exactly the
// articles the simulation's truth lists for the generated counties — each
// once, with its title, publish time, department and body — and none of a
// column robots.txt forbids or nobody configured.
func TestSimCountiesCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and crawls four generated counties at polite rates (about a minute)")
	}
	waitBound(t)
	// Only a safety net against a hung child; nothing measures time.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	p, cfg := startCounties(ctx, t, 4)
	data := t.TempDir()
	if !strings.Contains(strings.Join(p.printed, "\n"), cfg) {
		t.Errorf("zhizhi sim does not say where it wrote the configuration:\n%s", strings.Join(p.printed, "\n"))
	}

	env := []string{"ZHIZHI_DATA_DIR=" + data, "ZHIZHI_CONFIG_DIR=" + cfg, "ZHIZHI_RESOLVE=" + p.resolve,
		"ZHIZHI_CHROMIUM=" + filepath.Join(data, "no-chromium")}
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "lint"}, "ok: 4 sites"},
		{[]string{"migrate"}, ""},
		{[]string{"dept", "import", filepath.Join(cfg, config.DepartmentsFile)}, ""},
		{[]string{"config", "sync"}, "sites:   4 created"},
	} {
		r := runZhizhi(t, env, step.args...)
		if r.code != 0 || !strings.Contains(r.stdout, step.want) {
			t.Fatalf("zhizhi %s: exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", strings.Join(step.args, " "), r.code, step.want, r.stdout, r.stderr)
		}
	}
	r := runZhizhiFor(t, 10, env, "crawl", "--all")
	if r.code != 0 {
		t.Fatalf("zhizhi crawl --all: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	client := &http.Client{Timeout: time.Minute}
	var all []sim.TruthArticle
	getJSON(ctx, t, client, p.control+"/__sim/truth", &all)
	truth := countyTruth(t, all)

	// What the written configuration binds each target to, read from the
	// files rather than from the database under test.
	b, problems := config.Load(cfg)
	if config.HasErrors(problems) {
		t.Fatalf("written config: %v", config.Errors(problems))
	}
	deptOf := map[string]*int64{}
	for _, s := range b.Sites {
		for _, spec := range s.Targets() {
			deptOf[spec.TargetCode] = spec.LocalDeptID
		}
	}

	st, err := store.Open(ctx, "sqlite://"+filepath.Join(data, "zhizhi.db"), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := crawltest.AllArticles(t, st)

	hosts := map[string]bool{}
	var forbidden, unconfigured, expected int
	wanted := map[string]bool{}
	for _, a := range truth {
		hosts[a.Host] = true
		_, hash, err := extract.URLHash(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := stored[hash]
		switch {
		case a.TargetCode == "":
			unconfigured++
			if ok {
				t.Errorf("%s: stored, but its column is not configured", a.URL)
			}
			continue
		case a.RobotsDisallowed:
			forbidden++
			if ok {
				t.Errorf("%s: stored, but robots.txt forbids it", a.URL)
			}
			continue
		}
		expected++
		wanted[hash] = true
		if !ok {
			t.Errorf("%s (%s): not stored", a.URL, a.TargetCode)
			continue
		}
		id, known := deptOf[a.TargetCode]
		if !known || id == nil {
			t.Errorf("%s: target %s is not a mapped target of the written config", a.URL, a.TargetCode)
			continue
		}
		pt := ""
		if got.PublishTime != nil {
			pt = got.PublishTime.UTC().Format(time.RFC3339)
		}
		for _, f := range []struct{ field, want, have string }{
			{"title", a.Title, got.Title},
			{"publish_time", a.PublishTime.UTC().Format(time.RFC3339), pt},
			{"publish_date", a.PublishDate, got.PublishDate},
			{"index_no", a.IndexNo, got.IndexNo},
			{"publisher", a.Publisher, got.Publisher},
			{"dept_id", fmt.Sprint(*id), fmtID(got.DeptID)},
			{"status", model.StatusReady, got.Status},
			{"attachments", fmt.Sprint(len(a.Attachments)), fmt.Sprint(len(got.Attachments))},
		} {
			if f.want != f.have {
				t.Errorf("%s: %s %q, the truth has %q", a.URL, f.field, f.have, f.want)
			}
		}
		if s := crawltest.Similarity(a.BodyText, got.ContentText); s < 0.95 {
			t.Errorf("%s: body similarity %.3f", a.URL, s)
		}
	}
	for hash, a := range stored {
		if !wanted[hash] {
			t.Errorf("%s: stored, but the truth does not list it for a configured county column", a.URL)
		}
	}
	if len(hosts) != 4 || expected == 0 {
		t.Fatalf("the truth lists %d articles of %d county hosts, want articles on 4", expected, len(hosts))
	}
	// The awkward parts the crawl had to get right were there.
	if forbidden == 0 || unconfigured == 0 {
		t.Errorf("the four counties have %d robots-forbidden and %d unconfigured articles; want some of each", forbidden, unconfigured)
	}
	t.Logf("%d articles stored of %d expected (%d forbidden by robots.txt, %d in unconfigured columns)", len(stored), expected, forbidden, unconfigured)

	// The sites saw the crawl: every county host's access log has the
	// crawler's robots.txt request and never two requests in flight.
	for h := range hosts {
		var log []sim.Access
		getJSON(ctx, t, client, p.control+"/__sim/log?host="+h, &log)
		robots := false
		for _, e := range log {
			robots = robots || e.Path == "/robots.txt"
			if e.InFlightAtArrival > 0 {
				t.Errorf("%s: %s arrived with %d other requests in flight", h, e.Path, e.InFlightAtArrival)
			}
		}
		if !robots {
			t.Errorf("%s: no robots.txt request in its access log of %d requests", h, len(log))
		}
	}
	if err := p.interrupt(ctx); err != nil {
		t.Fatal(err)
	}
}

func fmtID(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// TestSimCounties200: the largest world starts, `config lint` accepts the
// configuration written for it, and its truth lists 200 distinct county
// hosts, half of them gkmlpt sites, none sharing a department with another.
func TestSimCounties200(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, cfg := startCounties(ctx, t, 200)

	r := runZhizhi(t, []string{"ZHIZHI_RESOLVE=" + p.resolve}, "config", "lint", "--dir", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "ok: 200 sites") {
		t.Fatalf("config lint: exit %d, want 0 and 200 sites\nstdout:\n%.2000s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	var all []sim.TruthArticle
	getJSON(ctx, t, &http.Client{Timeout: time.Minute}, p.control+"/__sim/truth", &all)
	hosts := map[string]bool{}
	for _, a := range countyTruth(t, all) {
		hosts[a.Host] = true
	}
	if len(hosts) != 200 {
		t.Errorf("the truth lists %d distinct county hosts, want 200", len(hosts))
	}
	for i := 1; i <= 200; i++ {
		h := fmt.Sprintf("c%03d.%s", i, sim.CountyDomain)
		if !hosts[h] {
			t.Errorf("%s: no article in the truth", h)
		}
		if !strings.Contains(","+p.resolve, ","+h+"=127.0.0.1:") {
			t.Errorf("%s: not in the printed resolve map", h)
		}
	}

	b, _ := config.Load(cfg)
	gkmlpt := 0
	owner := map[int64]string{}
	for _, s := range b.Sites {
		if s.CMSAdapter == "gkmlpt" {
			gkmlpt++
		}
		for _, spec := range s.Targets() {
			if spec.LocalDeptID == nil {
				t.Errorf("%s: target %s has no department", s.SiteCode, spec.TargetCode)
				continue
			}
			if o, ok := owner[*spec.LocalDeptID]; ok && o != s.SiteCode {
				t.Errorf("department %d is bound on both %s and %s", *spec.LocalDeptID, o, s.SiteCode)
			}
			owner[*spec.LocalDeptID] = s.SiteCode
		}
	}
	if gkmlpt != 100 {
		t.Errorf("%d of 200 generated sites run gkmlpt, want 100", gkmlpt)
	}
	if err := p.interrupt(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSimCountiesBadInput: a number of counties out of range, a config
// directory without counties, into a directory that is not empty or
// without the bundled adapter to copy: exit 2, one message naming what to
// fix, nothing written.
func TestSimCountiesBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bundled, err := filepath.Abs(bundledConfig)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "mine.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(parent, "fresh")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"too many counties", []string{"sim", "--counties", "201"}, "--counties 201: give 1 to 200"},
		{"negative counties", []string{"sim", "--counties", "-1"}, "--counties -1: give 1 to 200"},
		{"config without counties", []string{"sim", "--write-config", fresh}, "give --counties N too"},
		{"directory not empty", []string{"--config-dir", bundled, "sim", "--counties", "2", "--write-config", full}, full + " is not empty"},
		// The adapter and synonyms it copies come from the simulated web's
		// configuration built into the binary, whatever --config-dir says.
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runZhizhiFor(t, 2, nil, c.args...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, c.want)
			}
		})
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "full" {
		t.Errorf("%s holds %v after the refusals, want only full/", parent, entries)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "mine.txt")); string(b) != "keep" {
		t.Errorf("full/mine.txt changed: %q", b)
	}
}
