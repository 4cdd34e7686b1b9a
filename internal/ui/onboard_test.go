package ui

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/onboard/onboardtest"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// Hosts the wizard's tests add to the simulated web.
const (
	hostileHost = "www.hostile.gov.test" // a gkmlpt look-alike whose names are markup
	gateHost    = "www.gate.gov.test"    // answers only when the test lets it
	deadHost    = "www.dead.gov.test"    // nothing listens
)

// wizardWorld is the console's world with the onboarding wizard on: a
// simulated web of four generated counties (c001 and c003 run gkmlpt,
// c002 and c004 are template sites) beside the hand-written sites, the
// counties' departments imported, and a polite fetcher at the default
// pace. The wizard reads the world's configuration directory as serve
// gives it the live configuration.
type wizardWorld struct {
	*world
	counties *onboardtest.Counties
	gate     chan struct{} // closed: the gate host answers
	resolve  string        // where the fetcher finds the simulated hosts
	runs     *queue.Queue  // the console's queue, working wizard runs
}

func newWizardWorld(t *testing.T, st *store.Store) *wizardWorld {
	t.Helper()
	w := newWorld(t, st)
	bundled, err := filepath.Abs(filepath.Join("..", "..", "demo", "config"))
	if err != nil {
		t.Fatal(err)
	}
	cs := onboardtest.StartCounties(t, bundled)
	onboardtest.ImportDepartments(t, st, filepath.Join(cs.Dir, config.DepartmentsFile))

	ww := &wizardWorld{world: w, counties: cs, gate: make(chan struct{})}
	hostile := httptest.NewServer(hostileSite())
	t.Cleanup(hostile.Close)
	gate := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-ww.gate:
		case <-r.Context().Done():
			return
		}
		http.NotFound(rw, r)
	}))
	t.Cleanup(gate.Close)
	t.Cleanup(ww.openGate) // before the server closes: no request left hanging
	ww.resolve = cs.Sim.ResolveString() + "," + hostileHost + "=" + hostile.Listener.Addr().String() +
		"," + gateHost + "=" + gate.Listener.Addr().String() + "," + deadHost + "=" + onboardtest.ClosedAddr(t)
	h, q := ww.console(t, st, queue.Options{})
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.h, ww.runs = h, q
	return ww
}

// console builds what a serve process has on st: the console, and a queue
// whose workers run the wizard (serve's also crawl) with a polite fetcher
// of its own. The queue is started by the caller and stops with the test.
func (ww *wizardWorld) console(t *testing.T, st *store.Store, opts queue.Options) (http.Handler, *queue.Queue) {
	t.Helper()
	client := onboardtest.Client(t, st, ww.resolve, nil)
	// As serve does: the polite fetcher and the configuration in force.
	build := func(ctx context.Context) (*onboard.Wizard, error) {
		b, problems := config.Load(ww.cfgDir)
		if config.HasErrors(problems) {
			return nil, fmt.Errorf("config: %v", config.Errors(problems))
		}
		return &onboard.Wizard{Fetch: client, Bundle: b}, nil
	}
	now := func() time.Time { return ww.now }
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Store, opts.Onboard, opts.Now, opts.Log = st, build, now, discard
	q, err := queue.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.Stop(30 * time.Second); err != nil {
			t.Errorf("stop the queue: %v", err)
		}
	})
	h, err := New(Options{Store: st, Sessions: ww.sessions, Jobs: q, ConfigDir: ww.cfgDir, Onboard: build, Corpus: ww.corpus,
		Log: discard, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return h, q
}

func (ww *wizardWorld) openGate() {
	select {
	case <-ww.gate:
	default:
		close(ww.gate)
	}
}

// hostileSite is a gkmlpt look-alike whose title, dept link, dept name and
// column name are markup: what a hostile or broken site could send.
func hostileSite() http.Handler {
	const esc = `&lt;script&gt;alert(&quot;zz&quot;)&lt;/script&gt;`
	const js = `\u003cscript\u003ealert(\"zz\")\u003c/script\u003e`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /robots.txt", func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprint(rw, "User-agent: *\nDisallow:\n")
	})
	mux.HandleFunc("GET /{$}", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!DOCTYPE html><html><head><title>恶意县%s</title></head><body>
<a href="/evil/gkmlpt/index">%s局信息公开</a></body></html>`, esc, esc)
	})
	mux.HandleFunc("GET /evil/gkmlpt/index", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!DOCTYPE html><html><head><title>x</title><script>
window._CONFIG = {"SID": "9", "SITE_NAME": "恶意局%s", "TREE": [{"id": "1", "name": "通知%s", "post_count": 3}]};
</script></head><body></body></html>`, js, js)
	})
	return mux
}

// truthSite is the counties' configured site of host.
func (ww *wizardWorld) truthSite(t *testing.T, host string) *config.SiteFile {
	t.Helper()
	return ww.counties.Site(t, host)
}

// startRun pastes text as who and returns the run's page.
func (ww *wizardWorld) startRun(t *testing.T, c *http.Cookie, text string) string {
	t.Helper()
	rec := ww.post(t, "/admin/onboard", c, url.Values{"urls": {text}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start a run: status %d\n%s", rec.Code, rec.Body)
	}
	loc := rec.Header().Get("Location")
	if !regexp.MustCompile(`^/admin/onboard/[0-9a-f]{32}$`).MatchString(loc) {
		t.Fatalf("start a run: sent to %q", loc)
	}
	return loc
}

// waitRun polls the run's progress as the page does until it says the run
// is over; it returns the progress fragments seen.
func (ww *wizardWorld) waitRun(t *testing.T, c *http.Cookie, run string) []string {
	t.Helper()
	var seen []string
	// A safety net against a hung run, not a measure of speed.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		req := httptest.NewRequest(http.MethodGet, run+"/progress", nil)
		req.Header.Set("HX-Request", "true")
		req.AddCookie(c)
		rec := httptest.NewRecorder()
		ww.h.ServeHTTP(rec, req)
		if rec.Header().Get("HX-Redirect") == run {
			return seen
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("progress: status %d\n%s", rec.Code, rec.Body)
		}
		seen = append(seen, rec.Body.String())
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish; last progress:\n%s", rec.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// configRows counts the configuration rows: sites, targets, site departments.
func configRows(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := context.Background()
	sites, err := st.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	depts := 0
	for _, s := range sites {
		sd, err := st.ListSiteDepartments(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		depts += len(sd)
	}
	return fmt.Sprintf("%d sites, %d targets, %d site departments", len(sites), len(targets), depts)
}

// selected is the value of the form field name as the page renders it
// chosen: a select's selected option or an input's value.
func selected(body, name string) string {
	sel := regexp.MustCompile(`(?s)<select name="` + regexp.QuoteMeta(name) + `"[^>]*>(.*?)</select>`).FindStringSubmatch(body)
	if sel != nil {
		if m := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(sel[1]); m != nil {
			return html.UnescapeString(m[1])
		}
		return ""
	}
	if m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return "(no field " + name + ")"
}

// TestWizardRunToDrafts runs the wizard as an operator does: a paste with a
// bad line is refused by line; the good paste runs in the background while
// the page polls its progress; the results say which site matched which
// adapter and why, which did not (and what the person must decide), and
// list each dept row with its suggestion; a pending row is refused by name
// with every choice kept; the chosen bindings make drafts shown escaped in
// the preview, and the zip's drafts load through the real configuration
// loader — while nothing is written to the configuration directory or the
// configuration tables.
func TestWizardRunToDrafts(t *testing.T) {
	if testing.Short() {
		t.Skip("reads simulated county sites at the polite pace")
	}
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ww := newWizardWorld(t, st)
		cfgBefore, rowsBefore := onboardtest.TreeSum(t, ww.cfgDir), configRows(t, st)
		c := ww.login(t, "operator")

		body := ww.get(t, "/admin/onboard", c).Body.String()
		for _, want := range []string{"粘贴站点网址", `name="urls"`, "保存在数据库中", "不会"} {
			if !strings.Contains(body, want) {
				t.Errorf("step 1 lacks %q", want)
			}
		}
		if strings.Contains(body, "批量接入向导<small>") || !strings.Contains(body, `<a href="/admin/onboard" class="active"`) {
			t.Errorf("the menu still shows the wizard as coming soon")
		}

		// A bad line stops the start, named by its number; the paste stays.
		bad := "http://c001.county.gov.test\nc002.county.gov.test/fgj\n"
		rec := ww.post(t, "/admin/onboard", c, url.Values{"urls": {bad}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "第 2 行") ||
			!strings.Contains(rec.Body.String(), ">"+bad+"</textarea>") {
			t.Errorf("a bad line: status %d, want 400 naming line 2 with the paste kept\n%s", rec.Code, rec.Body)
		}
		if rec := ww.post(t, "/admin/onboard", c, url.Values{"urls": {"\n \n"}}); rec.Code != http.StatusBadRequest {
			t.Errorf("an empty paste: status %d, want 400", rec.Code)
		}

		run := ww.startRun(t, c, "http://c001.county.gov.test\nhttp://c002.county.gov.test\nhttp://c003.county.gov.test\nhttp://www.qingcheng.gov.test\nhttp://"+deadHost)
		progress := ww.waitRun(t, c, run)
		for _, p := range progress {
			if !strings.Contains(p, `hx-trigger="every 2s"`) || !strings.Contains(p, "<progress") || !strings.Contains(p, "站点识别") {
				t.Errorf("a progress fragment lacks its polling, bar or label:\n%s", p)
				break
			}
		}
		if len(progress) > 0 {
			t.Logf("%d progress polls; the first:\n%s", len(progress), progress[0])
		}
		page := ww.get(t, run, c)
		body = page.Body.String()
		if page.Code != http.StatusOK {
			t.Fatalf("run page: status %d\n%s", page.Code, body)
		}
		for _, want := range []string{
			"识别结果", "gkmlpt", "首页链接", // matched, with the evidence
			"未匹配任何 CMS 适配器", "通用页面模板", "新建一个适配器", // c002: the person decides
			"已接入为", "qingcheng", // onboarded already
			deadHost, "无法识别", // a site that does not answer
			"部门路径", "栏目数", "绑定方式", "本地部门",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("results lack %q", want)
			}
		}
		c001, c003 := ww.truthSite(t, "c001.county.gov.test"), ww.truthSite(t, "c003.county.gov.test")
		// Sites come in paste order: c001, c003, then qingcheng (left out).
		for i, truth := range []*config.SiteFile{c001, c003} {
			if got := selected(body, fmt.Sprintf("site-%d-code", i)); got != truth.SiteCode {
				t.Errorf("site %d: site_code %q, want %q", i, got, truth.SiteCode)
			}
			for j, d := range truth.Depts {
				field := fmt.Sprintf("dept-%d-%d-", i, j)
				if !strings.Contains(body, "<code>"+d.DeptPath+"</code>") || !strings.Contains(body, d.DeptDisplayName) {
					t.Errorf("%s: dept row %s %s missing", truth.SiteCode, d.DeptPath, d.DeptDisplayName)
				}
				if b, l := selected(body, field+"binding"), selected(body, field+"local"); b != model.BindingMapped || l != fmt.Sprint(*d.LocalDeptID) {
					t.Errorf("%s/%s: suggested %s %s, want mapped %d", truth.SiteCode, d.DeptPath, b, l, *d.LocalDeptID)
				}
			}
		}
		if !strings.Contains(body, `name="site-0-include" value="1" checked`) || strings.Contains(body, `name="site-2-include" value="1" checked`) {
			t.Errorf("the new sites should start included and the onboarded qingcheng left out")
		}

		// The person leaves a row pending and renames a site: refused, the
		// row named, every choice as it was made.
		choices := url.Values{"submitted": {"1"}, "site-0-include": {"1"}, "site-1-include": {"1"},
			"site-0-name": {"连州测试县（改名）"}}
		for i, truth := range []*config.SiteFile{c001, c003} {
			for j, d := range truth.Depts {
				choices.Set(fmt.Sprintf("dept-%d-%d-binding", i, j), model.BindingMapped)
				choices.Set(fmt.Sprintf("dept-%d-%d-local", i, j), fmt.Sprint(*d.LocalDeptID))
			}
		}
		choices.Set("dept-1-0-binding", model.BindingPending)
		choices.Set("dept-0-0-binding", model.BindingCrossDept)
		rec = ww.post(t, run, c, choices)
		body = rec.Body.String()
		pendingRow := c003.SiteCode + "/" + c003.Depts[0].DeptPath
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "待定") || !strings.Contains(body, pendingRow) {
			t.Errorf("a pending row: status %d, want 422 naming %s\n%s", rec.Code, pendingRow, body)
		}
		for field, want := range map[string]string{"dept-1-0-binding": "pending", "dept-0-0-binding": "cross_dept",
			"site-0-name": "连州测试县（改名）", "dept-0-1-local": fmt.Sprint(*c001.Depts[1].LocalDeptID)} {
			if got := selected(body, field); got != want {
				t.Errorf("after the refusal %s shows %q, want the choice %q kept", field, got, want)
			}
		}
		if rec := ww.get(t, run+"/drafts.zip", c); rec.Code != http.StatusNotFound {
			t.Errorf("drafts of a refused submission: status %d, want 404", rec.Code)
		}

		// Every row chosen: the drafts are made and previewed.
		choices.Set("dept-1-0-binding", model.BindingExternalRef)
		rec = ww.post(t, run, c, choices)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != run+"/preview" {
			t.Fatalf("submit: status %d Location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		body = ww.get(t, run+"/preview", c).Body.String()
		for _, want := range []string{`<pre class="yaml">`, "sites/" + c001.SiteCode + ".yaml", "sites/" + c003.SiteCode + ".yaml",
			"dept_binding: cross_dept", "dept_binding: external_ref", "连州测试县（改名）", run + "/drafts.zip", "没有</strong>写入"} {
			if !strings.Contains(body, want) {
				t.Errorf("preview lacks %q", want)
			}
		}

		rec = ww.get(t, run+"/drafts.zip", c)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/zip" ||
			!regexp.MustCompile(`^attachment; filename="zhizhi-onboard-drafts-[0-9]{8}-[0-9]{4}\.zip"$`).MatchString(rec.Header().Get("Content-Disposition")) {
			t.Fatalf("download: status %d, %q, %q", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"))
		}
		cfg := t.TempDir()
		for _, f := range []string{filepath.Join(config.CMSDir, "gkmlpt.yaml"), config.TopicsFile} {
			onboardtest.CopyFile(t, filepath.Join(ww.cfgDir, f), filepath.Join(cfg, f))
		}
		onboardtest.CopyFile(t, filepath.Join(ww.counties.Dir, config.DepartmentsFile), filepath.Join(cfg, config.DepartmentsFile))
		var names []string
		for _, f := range onboardtest.Unzip(t, rec.Body.Bytes()) {
			names = append(names, f.Name)
			onboardtest.WriteFile(t, filepath.Join(cfg, filepath.FromSlash(f.Name)), f.Body)
		}
		if want := fmt.Sprint([]string{"sites/" + c001.SiteCode + ".yaml", "sites/" + c003.SiteCode + ".yaml"}); fmt.Sprint(names) != want {
			t.Errorf("zip holds %v, want %s", names, want)
		}
		loaded, problems := config.Load(cfg)
		if config.HasErrors(problems) {
			t.Fatalf("the downloaded drafts do not load: %v", config.Errors(problems))
		}
		got := map[string]*config.SiteFile{}
		for _, s := range loaded.Sites {
			got[s.SiteCode] = s
		}
		for i, truth := range []*config.SiteFile{c001, c003} {
			s := got[truth.SiteCode]
			if s == nil || s.BaseURL != truth.BaseURL || s.CMSAdapter != "gkmlpt" || len(s.Depts) != len(truth.Depts) {
				t.Errorf("draft %s: %+v", truth.SiteCode, s)
				continue
			}
			for j, d := range s.Depts {
				want, wantID := model.BindingMapped, truth.Depts[j].LocalDeptID
				if i == 0 && j == 0 {
					want, wantID = model.BindingCrossDept, nil
				}
				if i == 1 && j == 0 {
					want, wantID = model.BindingExternalRef, nil
				}
				if d.DeptPath != truth.Depts[j].DeptPath || d.DeptBinding != want || fmt.Sprint(ptrVal(d.LocalDeptID)) != fmt.Sprint(ptrVal(wantID)) {
					t.Errorf("%s/%s drafted as %s %v, want %s %v", s.SiteCode, d.DeptPath, d.DeptBinding, ptrVal(d.LocalDeptID), want, ptrVal(wantID))
				}
			}
		}
		if got[c001.SiteCode] != nil && got[c001.SiteCode].SiteName != "连州测试县（改名）" {
			t.Errorf("the renamed site drafted as %q", got[c001.SiteCode].SiteName)
		}

		// Nothing written: the configuration and its rows are as they were.
		if onboardtest.TreeSum(t, ww.cfgDir) != cfgBefore {
			t.Errorf("the configuration directory changed")
		}
		if after := configRows(t, st); after != rowsBefore {
			t.Errorf("configuration rows %s after the wizard, %s before", after, rowsBefore)
		}
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "onboard_run", ObjectID: strings.TrimPrefix(run, "/admin/onboard/")})
		if err != nil || len(entries) != 1 || entries[0].Actor != "user:operator" || entries[0].Action != "onboard.start" {
			t.Errorf("audit of the run: %+v %v", entries, err)
		}
	})
}

func ptrVal(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestWizardIsAnOperatorsOwn: viewers may not use the wizard; a run is its
// starter's alone — another person, an admin too, finds no such run; a run
// is kept 24 hours, then gone.
func TestWizardIsAnOperatorsOwn(t *testing.T) {
	ww := newWizardWorld(t, storetest.SQLite(t))
	viewer, op, admin := ww.login(t, "viewer"), ww.login(t, "operator"), ww.login(t, "admin")
	for _, path := range []string{"/admin/onboard", "/admin/onboard/departments?field=dept-0-0-local&q=x"} {
		if rec := ww.get(t, path, viewer); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
			t.Errorf("viewer GET %s: status %d, want 403", path, rec.Code)
		}
	}
	if rec := ww.post(t, "/admin/onboard", viewer, url.Values{"urls": {"http://" + hostileHost}}); rec.Code != http.StatusForbidden {
		t.Errorf("viewer starts a run: status %d, want 403", rec.Code)
	}
	if body := ww.get(t, "/admin/adapters/gkmlpt", viewer).Body.String(); strings.Contains(body, "/admin/onboard?adapter=") {
		t.Errorf("the adapter page offers a viewer the wizard")
	}
	body := ww.get(t, "/admin/adapters/gkmlpt", op).Body.String()
	if !strings.Contains(body, `href="/admin/onboard?adapter=gkmlpt"`) || !strings.Contains(body, "从该适配器批量接入") {
		t.Errorf("the adapter page does not lead an operator to the wizard")
	}
	body = ww.get(t, "/admin/onboard?adapter=gkmlpt", op).Body.String()
	if !strings.Contains(body, "从适配器 <code>gkmlpt</code> 批量接入") || !strings.Contains(body, `name="adapter" value="gkmlpt"`) {
		t.Errorf("the wizard does not say it came from the gkmlpt adapter")
	}

	start := ww.now
	run := ww.startRun(t, op, "http://"+hostileHost)
	ww.waitRun(t, op, run)
	id := strings.TrimPrefix(run, "/admin/onboard/")
	if rec := ww.get(t, run, viewer); rec.Code != http.StatusForbidden {
		t.Errorf("viewer opens the run: status %d, want 403", rec.Code)
	}
	for _, path := range []string{run, run + "/preview", run + "/drafts.zip"} {
		rec := ww.get(t, path, admin)
		if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), hostileHost) {
			t.Errorf("another user GET %s: status %d, want 404 telling nothing", path, rec.Code)
		}
	}
	for _, path := range []string{run, run + "/cancel"} {
		if rec := ww.post(t, path, admin, url.Values{"submitted": {"1"}}); rec.Code != http.StatusNotFound {
			t.Errorf("another user POST %s: status %d, want 404", path, rec.Code)
		}
	}
	req := httptest.NewRequest(http.MethodGet, run+"/progress", nil)
	req.Header.Set("HX-Request", "true")
	req.AddCookie(admin)
	rec := httptest.NewRecorder()
	ww.h.ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), hostileHost) || rec.Code == http.StatusOK && rec.Body.Len() > 0 {
		t.Errorf("another user polls the run: status %d, body %q", rec.Code, rec.Body)
	}
	if strings.Contains(ww.get(t, "/admin/onboard", admin).Body.String(), id) {
		t.Errorf("another user's list shows the run")
	}
	if !strings.Contains(ww.get(t, "/admin/onboard", op).Body.String(), run) {
		t.Errorf("the starter's list lacks the run")
	}

	// Kept a day, then gone.
	ww.now = start.Add(23*time.Hour + 59*time.Minute)
	if rec := ww.get(t, run, op); rec.Code != http.StatusOK {
		t.Errorf("a run 23 h 59 min old: status %d, want 200", rec.Code)
	}
	ww.now = start.Add(24 * time.Hour)
	if rec := ww.get(t, run, op); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "24 小时") {
		t.Errorf("a run 24 h old: status %d, want 404 saying runs are kept 24 hours", rec.Code)
	}
}

// TestWizardLimitsRunningRuns: at most 3 runs read the web at once, all
// people together; a fourth is refused in words with the paste kept, and
// goes once one of the three is cancelled.
func TestWizardLimitsRunningRuns(t *testing.T) {
	ww := newWizardWorld(t, storetest.SQLite(t))
	op, admin := ww.login(t, "operator"), ww.login(t, "admin")
	paste := "http://" + gateHost
	var runs []string
	for _, c := range []*http.Cookie{op, op, admin} {
		runs = append(runs, ww.startRun(t, c, paste))
	}
	for _, run := range runs[:2] {
		if body := ww.get(t, run, op).Body.String(); !strings.Contains(body, `id="wizard-progress"`) {
			t.Fatalf("%s is not running while the gate is shut", run)
		}
	}
	rec := ww.post(t, "/admin/onboard", op, url.Values{"urls": {paste}})
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "已有 3 个向导任务正在运行") ||
		!strings.Contains(rec.Body.String(), ">"+paste+"</textarea>") {
		t.Fatalf("a fourth run: status %d, want 429 saying 3 are running, paste kept\n%s", rec.Code, rec.Body)
	}
	if rec := ww.post(t, runs[0]+"/cancel", op, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("cancel: status %d", rec.Code)
	}
	ww.waitRun(t, op, runs[0])
	if body := ww.get(t, runs[0], op).Body.String(); !strings.Contains(body, "任务已取消") {
		t.Errorf("the cancelled run does not say so")
	}
	runs = append(runs, ww.startRun(t, op, paste))
	ww.openGate()
	for i, run := range runs[1:] {
		c := op
		if i == 1 {
			c = admin
		}
		ww.waitRun(t, c, run)
	}
}

// TestWizardEscapesHostileText: a site's title, dept names and column
// names, a local department's name and the paste itself reach every page
// of the wizard as text, never as markup.
func TestWizardEscapesHostileText(t *testing.T) {
	ww := newWizardWorld(t, storetest.SQLite(t))
	parent := int64(1)
	if _, _, err := ww.st.ImportDepartments(context.Background(), []model.Department{
		{DeptID: 9901, DeptName: "恶意局" + hostile, ParentDeptID: &parent, State: 1},
	}); err != nil {
		t.Fatal(err)
	}
	op := ww.login(t, "operator")
	check := func(what, body string) {
		t.Helper()
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: hostile script reached the page unescaped", what)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("%s: the hostile text is not shown (escaped) at all; the test proves nothing", what)
		}
	}
	check("a refused paste", ww.post(t, "/admin/onboard", op, url.Values{"urls": {"http://x.gov.test/" + hostile}}).Body.String())
	run := ww.startRun(t, op, "http://"+hostileHost)
	for i, p := range ww.waitRun(t, op, run) {
		if strings.Contains(p, "<script>alert") {
			t.Errorf("progress %d: hostile script unescaped", i)
		}
	}
	body := ww.get(t, run, op).Body.String()
	check("results", body)
	if !strings.Contains(body, "恶意县") || !strings.Contains(body, "<code>evil</code>") {
		t.Fatalf("the hostile site was not scanned:\n%s", body)
	}
	check("department search", ww.get(t, "/admin/onboard/departments?field=dept-0-0-local&q="+url.QueryEscape("恶意局"), op).Body.String())
	rec := ww.post(t, run, op, url.Values{"submitted": {"1"}, "site-0-include": {"1"}, "site-0-code": {"hostile"},
		"dept-0-0-binding": {model.BindingMapped}, "dept-0-0-local": {"9901"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("submit: status %d\n%s", rec.Code, rec.Body)
	}
	body = ww.get(t, run+"/preview", op).Body.String()
	check("preview", body)
	if !strings.Contains(body, "local_dept_id: 9901") {
		t.Errorf("the preview lacks the chosen department")
	}
}

// TestWizardDepartmentSearch: a row's department choice is searched by
// name; the current choice stays; a bad field is refused.
func TestWizardDepartmentSearch(t *testing.T) {
	w := sqliteWorld(t)
	op := w.login(t, "operator")
	body := w.get(t, "/admin/onboard/departments?field=dept-2-5-local&q="+url.QueryEscape("清远市教育局")+"&dept-2-5-local=37", op).Body.String()
	if !strings.Contains(body, `<select name="dept-2-5-local" id="dept-2-5-local"`) ||
		!strings.Contains(body, `<option value="37" selected>清远市发展和改革局`) || !strings.Contains(body, `<option value="41">清远市教育局`) {
		t.Errorf("search answer:\n%s", body)
	}
	if body := w.get(t, "/admin/onboard/departments?field=dept-0-0-local&q="+url.QueryEscape("火星探测局"), op).Body.String(); !strings.Contains(body, "没有名称相近的本地部门") {
		t.Errorf("a search that finds nothing:\n%s", body)
	}
	for _, field := range []string{"", "urls", `dept-0-0-local"><script>`} {
		if rec := w.get(t, "/admin/onboard/departments?q=x&field="+url.QueryEscape(field), op); rec.Code != http.StatusBadRequest {
			t.Errorf("field %q: status %d, want 400", field, rec.Code)
		}
	}
}

// TestApplyChoices: the form's choices land on a copy of the run's sites;
// a site name stays on one line (a draft repeats it in a comment, where a
// line break would start YAML of the sender's making); a department left
// chosen on a row switched away from mapped is dropped; an unticked site is
// left out only when the whole form was sent.
func TestApplyChoices(t *testing.T) {
	id := int64(37)
	sites := []onboard.Site{{BaseURL: "http://a.gov.test", SiteCode: "a", SiteName: "甲", Depts: []onboard.Dept{
		{DeptPath: "x", Binding: model.BindingMapped, LocalDeptID: &id},
		{DeptPath: "y", Binding: model.BindingPending},
	}}}
	got, inc := applyChoices(sites, []bool{true}, url.Values{
		"submitted":        {"1"},
		"site-0-name":      {"甲县\nsite_code: evil\r\n\t政府"},
		"site-0-code":      {" a2 "},
		"dept-0-0-binding": {model.BindingCityLevel},
		"dept-0-0-local":   {"37"},
		"dept-0-1-binding": {model.BindingMapped},
		"dept-0-1-local":   {"41"},
	})
	if inc[0] {
		t.Errorf("a site not ticked in a sent form is still included")
	}
	s := got[0]
	if s.SiteName != "甲县 site_code: evil 政府" || s.SiteCode != "a2" {
		t.Errorf("site fields %q %q", s.SiteName, s.SiteCode)
	}
	if d := s.Depts[0]; d.Binding != model.BindingCityLevel || d.LocalDeptID != nil {
		t.Errorf("row x: %s %v, want city_level without a department", d.Binding, ptrVal(d.LocalDeptID))
	}
	if d := s.Depts[1]; d.Binding != model.BindingMapped || d.LocalDeptID == nil || *d.LocalDeptID != 41 {
		t.Errorf("row y: %s %v, want mapped 41", d.Binding, ptrVal(d.LocalDeptID))
	}
	if sites[0].Depts[0].Binding != model.BindingMapped || sites[0].SiteName != "甲" {
		t.Errorf("the run's own sites were changed in place")
	}
	if _, inc := applyChoices(sites, []bool{true}, url.Values{}); !inc[0] {
		t.Errorf("a form without the sites' ticks dropped the site")
	}
}
