package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// Two serve processes on one PostgreSQL: each has its own store, polite
// fetcher, River client and console, sharing only the database (and the
// test's sign-in sessions).

// openShared opens another store on the database at dbURL, as a second
// process would.
func openShared(t *testing.T, dbURL string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// progressAt polls the run's progress on h as the page does: the fragment
// while it runs, "" once h says it is over.
func progressAt(t *testing.T, h http.Handler, c *http.Cookie, run string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, run+"/progress", nil)
	req.Header.Set("HX-Request", "true")
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("HX-Redirect") == run {
		return ""
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("progress of %s: status %d\n%s", run, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// waitAt polls h until the run is over, or until want shows in its
// progress (want non-empty); it returns the last fragment.
func waitAt(t *testing.T, h http.Handler, c *http.Cookie, run, want string) string {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute) // a safety net, not a measure of speed
	last := ""
	for {
		p := progressAt(t, h, c, run)
		if p == "" {
			if want != "" {
				t.Fatalf("the run ended before its progress showed %q; last progress:\n%s", want, last)
			}
			return ""
		}
		if want != "" && strings.Contains(p, want) {
			return p
		}
		last = p
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for the run (want %q); last progress:\n%s", want, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageAt is the run's page on h.
func pageAt(t *testing.T, h http.Handler, c *http.Cookie, path string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%s", path, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestWizardRunAcrossServeProcesses: a run started through one serve
// process's console is followed, finished and turned into drafts through
// another's, which shows what the first shows.
func TestWizardRunAcrossServeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("reads simulated county sites at the polite pace")
	}
	dbURL := storetest.PostgresURL(t)
	stA, stB := openShared(t, dbURL), openShared(t, dbURL)
	ww := newWizardWorld(t, stA) // process A: ww.h, its queue working runs
	hB, qB := ww.console(t, stB, queue.Options{})
	if err := qB.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := ww.login(t, "operator")

	// The gate holds the run mid-way, so B is seen following it.
	run := ww.startRun(t, c, "http://c001.county.gov.test\nhttp://"+gateHost)
	p := waitAt(t, hB, c, run, "1 / 2 个站点")
	if !strings.Contains(p, "c001.county.gov.test") || !strings.Contains(p, `id="wizard-progress"`) {
		t.Errorf("B's progress does not show the site A's run detected:\n%s", p)
	}
	if pa := progressAt(t, ww.h, c, run); !strings.Contains(pa, "1 / 2 个站点") {
		t.Errorf("A's progress differs from B's:\n%s", pa)
	}
	listB := pageAt(t, hB, c, "/admin/onboard")
	if !strings.Contains(listB, run) || !strings.Contains(listB, "进行中") {
		t.Errorf("B's list of the person's runs lacks the running run")
	}
	ww.openGate()
	waitAt(t, hB, c, run, "")

	bodyA, bodyB := pageAt(t, ww.h, c, run), pageAt(t, hB, c, run)
	for _, want := range []string{"识别结果", "gkmlpt", "部门路径", `name="site-0-code"`, gateHost} {
		if !strings.Contains(bodyB, want) {
			t.Errorf("B's results lack %q", want)
		}
	}
	if bodyA != bodyB {
		t.Errorf("A and B show the run's results differently:\nA:\n%s\nB:\n%s", bodyA, bodyB)
	}

	// The choices made through B are A's to preview and download.
	c001 := ww.truthSite(t, "c001.county.gov.test")
	form := url.Values{"submitted": {"1"}, "site-0-include": {"on"}}
	for _, m := range regexp.MustCompile(`name="(dept-0-\d+)-binding"`).FindAllStringSubmatch(bodyB, -1) {
		form.Set(m[1]+"-binding", "external_ref")
	}
	if len(form) < 3 {
		t.Fatalf("B's results have no dept rows to bind:\n%s", bodyB)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, run, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(c)
	hB.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != run+"/preview" {
		t.Fatalf("submit through B: status %d, sent to %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if preview := pageAt(t, ww.h, c, run+"/preview"); !strings.Contains(preview, "sites/"+c001.SiteCode+".yaml") {
		t.Errorf("A's preview lacks the draft made through B")
	}
	if zip := ww.get(t, run+"/drafts.zip", c); zip.Code != http.StatusOK || zip.Header().Get("Content-Type") != "application/zip" {
		t.Errorf("A's drafts.zip: status %d, type %q", zip.Code, zip.Header().Get("Content-Type"))
	}
	if list := pageAt(t, ww.h, c, "/admin/onboard"); !strings.Contains(list, run) || !strings.Contains(list, "已完成") {
		t.Errorf("A's list lacks the finished run")
	}
}

// TestWizardRunOutlivesItsProcess: the serve process working a run stops
// mid-way; another finishes it, going on from what was done — the site
// detected before the stop is not read again, and nothing is counted twice.
func TestWizardRunOutlivesItsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("reads simulated county sites at the polite pace")
	}
	ctx := context.Background()
	dbURL := storetest.PostgresURL(t)
	stA, stB := openShared(t, dbURL), openShared(t, dbURL)
	ww := newWizardWorld(t, stA)
	hB, qB := ww.console(t, stB, queue.Options{}) // not working yet: A has the run
	c := ww.login(t, "operator")

	run := ww.startRun(t, c, "http://c001.county.gov.test\nhttp://"+gateHost)
	waitAt(t, hB, c, run, "1 / 2 个站点")
	// A stops (as serve does on a signal) while its run waits for the gate.
	if err := ww.runs.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop A's queue: %v", err)
	}
	if p := progressAt(t, hB, c, run); !strings.Contains(p, "1 / 2 个站点") {
		t.Fatalf("after A stopped, B's progress lost the detected site:\n%s", p)
	}
	if err := qB.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ww.openGate()
	waitAt(t, hB, c, run, "")

	body := pageAt(t, hB, c, run)
	if strings.Contains(body, "任务已取消") || strings.Contains(body, "出错") {
		t.Errorf("the run taken over does not read as simply finished:\n%s", body)
	}
	if n := strings.Count(body, `name="site-0-code"`); n != 1 || strings.Contains(body, `name="site-1-code"`) {
		t.Errorf("the results hold the one matched site %d times, or a second site", n)
	}
	if n := strings.Count(body, "<code>http://"+gateHost+"</code>"); n != 1 {
		t.Errorf("the gate site is listed %d times in the results, want once", n)
	}
	id := strings.TrimPrefix(run, "/admin/onboard/")
	lines, err := stB.OnboardLines(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Errorf("the run keeps %d lines, want 2", len(lines))
	}
	var homes int
	if err := stB.DB().QueryRowContext(ctx, `SELECT count(*) FROM crawl_log WHERE host = 'c001.county.gov.test'
		AND article_url IN ('http://c001.county.gov.test', 'http://c001.county.gov.test/')`).Scan(&homes); err != nil {
		t.Fatal(err)
	}
	if homes != 1 {
		t.Errorf("c001's home page was fetched %d times, want once: the process taking over read it again", homes)
	}
	r, err := stB.OnboardRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var by string
	if err := stB.DB().QueryRowContext(ctx, `SELECT array_to_string(attempted_by, ',') FROM river_job
		WHERE kind = 'onboard_run'`).Scan(&by); err != nil {
		t.Fatal(err)
	}
	if r.Attempt < 2 || len(strings.Split(by, ",")) < 2 {
		t.Errorf("the run was worked %d times (by %s), want by A and then B", r.Attempt, by)
	}
}

// TestWizardRunOfAKilledProcess: the serve process working a run was
// killed an hour ago — its job stays "running" in the queue with nobody
// behind it, as River sees a dead worker's job. Another process takes it
// back (River's rescuer takes jobs whose attempt began longer ago than the
// job timeout and a margin) and finishes the run.
func TestWizardRunOfAKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("reads simulated county sites at the polite pace")
	}
	ctx := context.Background()
	dbURL := storetest.PostgresURL(t)
	stA, stB := openShared(t, dbURL), openShared(t, dbURL)
	ww := newWizardWorld(t, stA)
	if err := ww.runs.Stop(30 * time.Second); err != nil { // A's workers are gone
		t.Fatal(err)
	}
	ww.openGate()
	hB, qB := ww.console(t, stB, queue.Options{})
	c := ww.login(t, "operator")
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/admin/onboard",
		strings.NewReader(url.Values{"urls": {"http://c001.county.gov.test\nhttp://" + hostileHost}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(c)
	hB.ServeHTTP(rec, req)
	run := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(run, "/admin/onboard/") {
		t.Fatalf("start a run through B: status %d, sent to %q", rec.Code, run)
	}
	id := strings.TrimPrefix(run, "/admin/onboard/")
	// A took the job and began the run's work, then was killed.
	if n, err := stA.BeginOnboardAttempt(ctx, id); err != nil || n != 1 {
		t.Fatalf("A begins the run: attempt %d, %v", n, err)
	}
	res, err := stA.DB().ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - interval '1 hour', attempted_by = ARRAY['serve-a-killed'] WHERE kind = 'onboard_run'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d onboarding jobs queued, want 1", n)
	}
	if err := qB.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if p := progressAt(t, hB, c, run); !strings.Contains(p, `id="wizard-progress"`) {
		t.Fatalf("the killed process's run does not read as running before it is taken back:\n%s", p)
	}
	waitAt(t, hB, c, run, "")
	body := pageAt(t, ww.h, c, run)
	for _, want := range []string{"识别结果", "gkmlpt", `name="site-0-code"`, `name="site-1-code"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the run taken back lacks %q in its results", want)
		}
	}
	if strings.Contains(body, "任务已取消") || strings.Contains(body, "出错") {
		t.Errorf("the run taken back does not read as simply finished")
	}
	// The killed process's attempt, were it somehow still writing, counts
	// for nothing.
	if err := stA.RecordOnboardDetection(ctx, id, 1, 1, []byte(`{"line":1,"base_url":"http://x.test","problem":"zombie"}`)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pageAt(t, hB, c, run), "zombie") {
		t.Errorf("a write of the killed process's attempt reached the run")
	}
}

// TestWizardRunNobodyFinishes: a run that no process finishes — every
// serve process that could was stopped for good — is not shown as running
// forever: past its time it reads as failed, saying why in words.
func TestWizardRunNobodyFinishes(t *testing.T) {
	ww := newWizardWorld(t, storetest.SQLite(t))
	c := ww.login(t, "operator")
	run := ww.startRun(t, c, "http://"+gateHost)
	waitAt(t, ww.h, c, run, `id="wizard-progress"`)
	if err := ww.runs.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	start := ww.now
	ww.now = start.Add(3 * time.Hour)
	if p := progressAt(t, ww.h, c, run); !strings.Contains(p, `id="wizard-progress"`) {
		t.Errorf("a run 3 h old is over already:\n%s", p)
	}
	ww.now = start.Add(4 * time.Hour)
	if p := progressAt(t, ww.h, c, run); p != "" {
		t.Errorf("a run 4 h old that nobody works still polls as running:\n%s", p)
	}
	body := ww.get(t, run, c).Body.String()
	if !strings.Contains(body, "出错") || !strings.Contains(body, "服务进程可能已停止") {
		t.Errorf("the abandoned run does not say it failed and why:\n%s", body)
	}
	if list := ww.get(t, "/admin/onboard", c).Body.String(); !strings.Contains(list, "出错") {
		t.Errorf("the person's list does not show the abandoned run as failed")
	}
}
