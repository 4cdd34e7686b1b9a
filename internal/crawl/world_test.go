package crawl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"zhizhi/internal/config"
	"zhizhi/internal/crawl"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

const configDir = "../../config"

// world is the simulated web, a store synced with the bundled config and a
// polite client that treats the simulation's hosts as owned (fast), unless
// polite is set.
type world struct {
	sim    *sim.World
	st     *store.Store
	bundle *config.Bundle
	client *fetch.Client
}

func chromium(t testing.TB) bool {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return true
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI=true (make test installs it)")
	}
	t.Log("CHROMIUM MISSING: the city portal's targets are skipped")
	return false
}

func newWorld(t testing.TB, st *store.Store, browser bool) *world {
	t.Helper()
	ctx := context.Background()
	w, err := sim.Start(ctx, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	b, problems := config.Load(configDir)
	if config.HasErrors(problems) {
		t.Fatalf("bundled config: %v", config.Errors(problems))
	}
	f, err := os.Open(filepath.Join(configDir, config.DepartmentsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	depts, bad := config.ReadDepartmentsCSV(f, "departments.csv")
	if len(bad) > 0 {
		t.Fatalf("departments: %v", bad)
	}
	if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Sync(ctx, st, b); err != nil {
		t.Fatal(err)
	}
	rm, err := fetch.ParseResolveMap(w.ResolveString())
	if err != nil {
		t.Fatal(err)
	}
	opts := fetch.ClientOptions{Store: st, Resolve: rm, Version: "test", ContactURL: "https://zhizhi.example/contact"}
	if browser {
		opts.Browser = fetch.Chromium("", nil)
	}
	c, err := fetch.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sites, err := st.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		p := fetch.PolicyFor(s, crawl.Resilience(b)(s))
		// The simulation is ours: loosen the limiter so the test is quick.
		// robots.txt is still obeyed (RespectRobots stays as configured).
		p.Owned, p.Interval, p.Burst = true, time.Millisecond, 1000
		c.SetSitePolicy(fetch.SiteHost(s), p)
	}
	return &world{sim: w, st: st, bundle: b, client: c}
}

// crawl runs every enabled target (without the city portal's when there
// is no browser) and fails the test on a failed target.
func (w *world) crawl(t testing.TB, now func() time.Time, browser bool) []crawl.Result {
	t.Helper()
	ctx := context.Background()
	targets, err := w.st.ListTargets(ctx, store.TargetFilter{EnabledOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !browser {
		var kept []model.Target
		for _, tg := range targets {
			if s, _ := w.st.SiteByID(ctx, tg.SiteID); s.DefaultFetchStrategy != model.StrategyBrowser {
				kept = append(kept, tg)
			}
		}
		targets = kept
	}
	c := &crawl.Crawler{Store: w.st, Blobs: w.st.Blobs(), Fetch: w.client, Bundle: w.bundle, Now: now}
	results := c.Run(ctx, targets)
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("target %s failed: %v", r.TargetCode, r.Err)
		}
	}
	return results
}

// allArticles returns every stored article by url_hash.
func allArticles(t testing.TB, st *store.Store) map[string]model.Article {
	t.Helper()
	out := map[string]model.Article{}
	for _, status := range []string{model.StatusReady, model.StatusFailed, model.StatusRaw} {
		cursor := ""
		for {
			rows, next, err := st.ExportArticles(context.Background(), store.ExportFilter{SinceCursor: cursor, Status: status, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range rows {
				out[a.URLHash] = a
			}
			if len(rows) == 0 || next == cursor {
				break
			}
			cursor = next
		}
	}
	return out
}

// similarity is the Dice coefficient of the character bigrams of a and b
// with white space removed: 1 for equal texts.
func similarity(a, b string) float64 {
	strip := func(s string) []rune {
		var out []rune
		for _, r := range s {
			if !unicode.IsSpace(r) && r != '\u3000' {
				out = append(out, r)
			}
		}
		return out
	}
	ra, rb := strip(a), strip(b)
	if len(ra) < 2 || len(rb) < 2 {
		if string(ra) == string(rb) {
			return 1
		}
		return 0
	}
	grams := map[[2]rune]int{}
	for i := 0; i+1 < len(ra); i++ {
		grams[[2]rune{ra[i], ra[i+1]}]++
	}
	common := 0
	for i := 0; i+1 < len(rb); i++ {
		g := [2]rune{rb[i], rb[i+1]}
		if grams[g] > 0 {
			grams[g]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(ra)-1+len(rb)-1)
}

// scoreReport compares the store with the simulation's truth.
type scoreReport struct {
	expected, matched     int
	missing, extra, dupes []string
	fieldOK               map[string]int
	fieldBad              map[string][]string
	bodyChecked, bodyOK   int
	summaryWithContent    []string
	attachmentsExpected   int
	attachmentsMatched    int
}

func score(t testing.TB, st *store.Store, truth []sim.TruthArticle, browser bool) *scoreReport {
	t.Helper()
	ctx := context.Background()
	stored := allArticles(t, st)
	r := &scoreReport{fieldOK: map[string]int{}, fieldBad: map[string][]string{}}
	wanted := map[string]bool{}
	deptOf := map[string]*int64{}
	for _, a := range truth {
		if a.TargetCode == "" || (!browser && a.Host == "www.qingyuan.gov.test") {
			continue
		}
		_, hash, err := extract.URLHash(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		if a.RobotsDisallowed {
			if _, ok := stored[hash]; ok {
				r.extra = append(r.extra, a.URL+" (robots-disallowed)")
			}
			continue
		}
		wanted[hash] = true
		r.expected++
		got, ok := stored[hash]
		if !ok {
			r.missing = append(r.missing, a.URL)
			continue
		}
		r.matched++
		if _, ok := deptOf[a.TargetCode]; !ok {
			tg, err := st.TargetByCode(ctx, a.TargetCode)
			if err != nil {
				t.Fatalf("target %s: %v", a.TargetCode, err)
			}
			deptOf[a.TargetCode] = tg.DeptID
		}
		check := func(field, want, have string) {
			if want == have {
				r.fieldOK[field]++
				return
			}
			r.fieldBad[field] = append(r.fieldBad[field], fmt.Sprintf("%s: want %q, have %q", a.URL, want, have))
		}
		check("title", a.Title, got.Title)
		check("index_no", a.IndexNo, got.IndexNo)
		check("doc_no", a.DocNo, got.DocNo)
		check("publisher", a.Publisher, got.Publisher)
		check("publish_date", a.PublishDate, got.PublishDate)
		check("effective_date", a.EffectiveDate, got.EffectiveDate)
		check("topic_words", a.TopicWords, got.TopicWords)
		check("open_category", a.OpenCategory, got.OpenCategory)
		pt := ""
		if got.PublishTime != nil {
			pt = got.PublishTime.UTC().Format(time.RFC3339)
		}
		check("publish_time", a.PublishTime.UTC().Format(time.RFC3339), pt)
		check("dept_id", fmtID(deptOf[a.TargetCode]), fmtID(got.DeptID))
		if got.Status == model.StatusReady {
			r.fieldOK["status"]++
		} else {
			r.fieldBad["status"] = append(r.fieldBad["status"], fmt.Sprintf("%s: %s (%s)", a.URL, got.Status, got.StatusReason))
		}
		if a.Access == model.AccessSummary {
			if got.ContentText != "" || got.RawHTMLPath != "" || len(got.Attachments) > 0 {
				r.summaryWithContent = append(r.summaryWithContent, a.URL)
			}
			continue
		}
		r.bodyChecked++
		if s := similarity(a.BodyText, got.ContentText); s >= 0.95 {
			r.bodyOK++
		} else {
			r.fieldBad["body"] = append(r.fieldBad["body"], fmt.Sprintf("%s: similarity %.3f", a.URL, s))
		}
		r.attachmentsExpected += len(a.Attachments)
		for _, ta := range a.Attachments {
			for _, ga := range got.Attachments {
				if ga.FileHash == ta.SHA256 {
					r.attachmentsMatched++
					break
				}
			}
		}
	}
	for hash, a := range stored {
		if !wanted[hash] && !strings.Contains(strings.Join(r.extra, " "), a.URL) {
			r.extra = append(r.extra, a.URL)
		}
	}
	return r
}

func fmtID(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func (r *scoreReport) assert(t testing.TB) {
	t.Helper()
	if r.expected == 0 {
		t.Fatal("the truth holds no configured article")
	}
	if len(r.missing) > 0 {
		t.Errorf("%d of %d articles missing, e.g. %v", len(r.missing), r.expected, first(r.missing, 5))
	}
	if len(r.extra) > 0 {
		t.Errorf("%d articles stored that the truth does not list (or robots forbids): %v", len(r.extra), first(r.extra, 5))
	}
	if len(r.summaryWithContent) > 0 {
		t.Errorf("summary-access articles with stored content: %v", first(r.summaryWithContent, 5))
	}
	for _, f := range []string{"title", "publish_time", "dept_id", "index_no", "doc_no", "publisher", "publish_date",
		"effective_date", "topic_words", "open_category", "status"} {
		ok, bad := r.fieldOK[f], len(r.fieldBad[f])
		if ok+bad == 0 {
			continue
		}
		rate := float64(ok) / float64(ok+bad)
		t.Logf("%-15s %5.1f%% (%d/%d)", f, 100*rate, ok, ok+bad)
		if rate < 0.99 {
			t.Errorf("%s right for %.1f%% of articles (< 99%%), e.g. %v", f, 100*rate, first(r.fieldBad[f], 3))
		}
	}
	if r.bodyChecked > 0 {
		rate := float64(r.bodyOK) / float64(r.bodyChecked)
		t.Logf("%-15s %5.1f%% (%d/%d) at ≥95%% similarity", "body", 100*rate, r.bodyOK, r.bodyChecked)
		if rate < 0.99 {
			t.Errorf("body ≥95%% similar for %.1f%% of articles (< 99%%), e.g. %v", 100*rate, first(r.fieldBad["body"], 3))
		}
	}
	if r.attachmentsMatched != r.attachmentsExpected {
		t.Errorf("attachments: %d of %d stored with the true sha256", r.attachmentsMatched, r.attachmentsExpected)
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
