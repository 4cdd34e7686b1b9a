package fetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/browser"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// The browser tier's second visits and its give-ups: a clearance the site
// no longer honours sends the client through the browser once more, and a
// challenge the browser cannot pass or a CAPTCHA it meets ends in a typed
// error, logged, with no Chromium left behind. Each test starts one
// Chromium and shares it between its steps.

// chromiumLaunches starts Chromium through the client's BrowserStarter,
// remembers every browser it started and records the gate's decisions on
// the requests of rendered pages, on the client's clock.
type chromiumLaunches struct {
	clock *FakeClock

	mu        sync.Mutex
	started   []*browser.Browser
	decisions []gateDecision
}

type gateDecision struct {
	at      time.Time
	path    string
	allowed bool
}

func (l *chromiumLaunches) starter() BrowserStarter {
	chromium := Chromium("", quietLogger())
	return func(ctx context.Context, cfg BrowserConfig) (Renderer, error) {
		allow := cfg.Allow
		cfg.Allow = func(ctx context.Context, u *url.URL) error {
			err := allow(ctx, u)
			l.mu.Lock()
			l.decisions = append(l.decisions, gateDecision{at: l.clock.Now(), path: u.RequestURI(), allowed: err == nil})
			l.mu.Unlock()
			return err
		}
		r, err := chromium(ctx, cfg)
		if b, ok := r.(*browser.Browser); ok {
			l.mu.Lock()
			l.started = append(l.started, b)
			l.mu.Unlock()
		}
		return r, err
	}
}

func (l *chromiumLaunches) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.started)
}

// mark is a point in the decisions to count from.
func (l *chromiumLaunches) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.decisions)
}

// since returns the gate's decisions after mark.
func (l *chromiumLaunches) since(mark int) (allowed, refused []gateDecision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.decisions[mark:] {
		if d.allowed {
			allowed = append(allowed, d)
		} else {
			refused = append(refused, d)
		}
	}
	return allowed, refused
}

// checkGated checks that every page request the site saw from the
// browser (browserSeen, in arrival order) passed the client's gate: a
// request still paused when a render ends is refused on the live tab, never
// released untallied as the tab goes away. It returns how many did not.
func checkGated(t *testing.T, browserSeen []sim.Access, allowed, refused []gateDecision) (leaked int) {
	t.Helper()
	leaked = len(browserSeen) - len(allowed)
	if leaked > 0 {
		t.Errorf("the site saw %d requests from the browser; the gate let %d through (and refused %d): %d reached the site ungated",
			len(browserSeen), len(allowed), len(refused), leaked)
	}
	return max(leaked, 0)
}

// closeAndCheckGone closes the client and checks that every Chromium it
// started has ended, and that none of the chromium processes this test
// binary had spawned is still running.
func (l *chromiumLaunches) closeAndCheckGone(t *testing.T, c *Client) {
	t.Helper()
	procs := chromiumChildren()
	if len(procs) == 0 {
		t.Error("no chromium process found under the test before Close: the process check would prove nothing")
	}
	c.Close()
	l.mu.Lock()
	started := slices.Clone(l.started)
	l.mu.Unlock()
	for _, b := range started {
		select {
		case <-b.Done():
		case <-time.After(15 * time.Second):
			t.Error("Chromium still running 15 s after Close")
		}
	}
	for _, pid := range procs {
		if processRunning(pid) {
			t.Errorf("chromium process %d still running after Close", pid)
		}
	}
}

// chromiumChildren returns the chromium processes descended from this test
// binary (other engineers' browsers on the same machine are not ours).
func chromiumChildren() []int {
	parent := map[int]int{}
	comm := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[pid], comm[pid] = ppid, s[open+1:end]
	}
	self := os.Getpid()
	var out []int
	for pid, name := range comm {
		if !strings.Contains(strings.ToLower(name), "chrom") {
			continue
		}
		for p, hops := parent[pid], 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == self {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// processRunning: pid exists, is not a zombie and is still a chromium.
func processRunning(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	end := strings.LastIndexByte(s, ')')
	if end < 0 || !strings.Contains(strings.ToLower(s[:end]), "chrom") {
		return false // gone, and the number reused
	}
	f := strings.Fields(s[end+1:])
	return len(f) > 0 && f[0] != "Z"
}

// cityPolicy is the city portal's policy from the gkmlpt adapter's
// resilience rules.
func cityPolicy(strategy string) SitePolicy {
	return SitePolicy{
		RespectRobots: true, Strategy: strategy,
		EscalateStatus: []int{http.StatusPreconditionFailed}, EscalateSignatures: []string{sim.ChallengeMarker},
		CookieTTL: 20 * time.Minute,
	}
}

// cityArticles returns n live articles of the city portal's /qyfgw/.
func cityArticles(t *testing.T, w *sim.World, n int) []sim.TruthArticle {
	t.Helper()
	var out []sim.TruthArticle
	for _, a := range w.Truth() {
		if a.Host == qingyuan && strings.HasPrefix(a.URL, "http://"+qingyuan+"/qyfgw/") && !a.RobotsDisallowed {
			out = append(out, a)
			if len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("the city portal has %d articles under /qyfgw/, want %d", len(out), n)
	return nil
}

// clearanceOf returns the clearance cookie the pool holds as valid now on
// the client's clock, nil when none.
func clearanceOf(t *testing.T, e *simEnv) *model.Cookie {
	t.Helper()
	cookies, err := e.st.ValidCookies(context.Background(), qingyuan, e.clock.Now())
	if err != nil {
		t.Fatalf("cookie pool: %v", err)
	}
	for i := range cookies {
		if cookies[i].Name == sim.ClearanceCookie {
			return &cookies[i]
		}
	}
	return nil
}

// rowsAfter returns the crawl_log rows of host with an id above after, in
// the order they were written.
func rowsAfter(t *testing.T, e *simEnv, after int64) []model.CrawlLog {
	t.Helper()
	var out []model.CrawlLog
	for _, r := range crawlLogRows(t, e.st, qingyuan) {
		if r.ID > after {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b model.CrawlLog) int { return int(a.ID - b.ID) })
	return out
}

func lastRowID(t *testing.T, e *simEnv) int64 {
	t.Helper()
	var id int64
	for _, r := range crawlLogRows(t, e.st, qingyuan) {
		id = max(id, r.ID)
	}
	return id
}

func isBrowserUA(ua, token string) bool {
	return strings.Contains(ua, "Chrome") && strings.HasSuffix(ua, token)
}

// TestBrowserRechallengeWhenSiteDropsClearance: the harvested clearance
// opens the city portal to direct requests until the site stops honouring
// it. The stored cookie still looks valid on our clock (its TTL is 20 min
// of client time, and the client's clock barely moved), but the sim's
// clock is two hours on, so the site answers 412 again. That answer sends
// the page through the browser once more, the fresh clearance replaces the
// stale one, and the requests after it are direct again.
func TestBrowserRechallengeWhenSiteDropsClearance(t *testing.T) {
	needChromium(t)
	var launches chromiumLaunches
	e := newSimEnv(t, 1, ClientOptions{Browser: launches.starter()})
	launches.clock = e.clock
	e.advancing(t, false)
	e.c.SetSitePolicy(qingyuan, cityPolicy(TierDirect))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	index := "http://" + qingyuan + "/qyfgw/gkmlpt/index"
	arts := cityArticles(t, e.w, 4)
	ua := e.c.UserAgent()

	do := func(u, wantTier string) *Response {
		t.Helper()
		r, err := e.c.Do(ctx, Request{URL: u, Purpose: model.PurposeDetail})
		if err != nil {
			t.Fatalf("Do %s: %v", u, err)
		}
		if r.Tier != wantTier || r.Status != http.StatusOK {
			t.Fatalf("%s: tier %s status %d, want %s 200", u, r.Tier, r.Status, wantTier)
		}
		return r
	}

	// The first visit passes the challenge; direct requests follow.
	do(index, TierBrowser)
	stale := clearanceOf(t, e)
	if stale == nil {
		t.Fatal("no clearance cookie in the pool after the browser passed the challenge")
	}
	do(arts[0].URL, TierDirect)
	do(arts[1].URL, TierDirect)

	// The site's clock moves past the clearance's expiry; ours does not.
	e.w.Advance(2 * time.Hour)
	if still := clearanceOf(t, e); still == nil || still.Value != stale.Value {
		t.Fatalf("before the next request the pool holds %+v, want the harvested cookie still valid on the client's clock", still)
	}
	logFrom := len(e.w.AccessLog(qingyuan))
	rowFrom := lastRowID(t, e)
	mark := launches.mark()

	page := do(arts[2].URL, TierBrowser)
	if !bytes.Contains(page.Body, []byte(arts[2].Title)) {
		t.Errorf("the page the browser rendered lacks its title %q", arts[2].Title)
	}
	fresh := clearanceOf(t, e)
	if fresh == nil || fresh.Value == stale.Value || fresh.Source != "browser" {
		t.Fatalf("pool after the second challenge: %+v, want a new clearance from the browser", fresh)
	}

	// From the site's side: our stale cookie got 412, then the browser
	// (no cookie in its fresh context) got 412 and, after the script ran,
	// 200 with a valid clearance.
	seen := e.w.AccessLog(qingyuan)[logFrom:]
	path := strings.TrimPrefix(arts[2].URL, "http://"+qingyuan)
	if len(seen) < 3 || seen[0].UserAgent != ua || seen[0].Status != http.StatusPreconditionFailed ||
		!seen[0].Cookie || seen[0].Cleared {
		t.Fatalf("after the advance the site saw %+v first, want zhizhi's direct request with the stale cookie answered 412", seen)
	}
	var browserStatuses []int
	for _, a := range seen[1:] {
		if !isBrowserUA(a.UserAgent, ua) {
			t.Errorf("%s %s UA %q during the browser visit, want the browser's", a.Method, a.Path, a.UserAgent)
		}
		if a.Path == path {
			browserStatuses = append(browserStatuses, a.Status)
		}
		if a.InFlightAtArrival != 0 {
			t.Errorf("%s arrived with %d in flight", a.Path, a.InFlightAtArrival)
		}
	}
	if want := []int{412, 200}; !slices.Equal(browserStatuses, want) {
		t.Errorf("browser requests for %s answered %v, want %v", path, browserStatuses, want)
	}
	allowed, refused := launches.since(mark)
	if len(allowed) != len(seen)-1 || len(refused) != 0 {
		t.Errorf("the gate let %d page requests through and refused %d; the site saw %d from the browser",
			len(allowed), len(refused), len(seen)-1)
	}
	if last := seen[len(seen)-1]; last.Path != path || !last.Cleared {
		t.Errorf("the browser's last request %s cleared %v, want %s with a valid clearance", last.Path, last.Cleared, path)
	}

	// crawl_log tells the same story: the direct 412 classed as a
	// challenge, then the browser's requests.
	rows := rowsAfter(t, e, rowFrom)
	if wireRows(rows) != len(seen) {
		t.Errorf("crawl_log has %d rows that reached the site after the advance, the site saw %d requests", wireRows(rows), len(seen))
	}
	if r := rows[0]; r.Strategy != TierDirect || deref(r.HTTPStatus) != 412 || r.ErrorClass != ClassChallenge || r.ArticleURL != arts[2].URL {
		t.Errorf("first row after the advance: %s %s status %d class %q, want the direct 412 classed %q",
			r.Strategy, r.ArticleURL, deref(r.HTTPStatus), r.ErrorClass, ClassChallenge)
	}
	var browserRows []int
	for _, r := range rows[1:] {
		if r.Strategy != TierBrowser {
			t.Errorf("row %s tier %s during the browser visit", r.ArticleURL, r.Strategy)
		}
		if r.ArticleURL == arts[2].URL {
			browserRows = append(browserRows, deref(r.HTTPStatus))
		}
	}
	if want := []int{412, 200}; !slices.Equal(browserRows, want) {
		t.Errorf("crawl_log playwright rows for %s: %v, want %v", arts[2].URL, browserRows, want)
	}

	// Direct again with the fresh cookie.
	logFrom = len(e.w.AccessLog(qingyuan))
	do(index, TierDirect)
	do(arts[3].URL, TierDirect)
	for _, a := range e.w.AccessLog(qingyuan)[logFrom:] {
		if a.UserAgent != ua || a.Status != http.StatusOK || !a.Cleared {
			t.Errorf("after the second challenge: %s UA %q status %d cleared %v, want zhizhi's direct 200 with the clearance",
				a.Path, a.UserAgent, a.Status, a.Cleared)
		}
	}
	all := crawlLogRows(t, e.st, qingyuan)
	if got, want := wireRows(all), len(e.w.AccessLog(qingyuan)); got != want {
		t.Errorf("crawl_log has %d rows that reached the site, the sim saw %d requests", got, want)
	}
	if n := launches.count(); n != 1 {
		t.Errorf("%d Chromium launches, want 1 shared by both challenges", n)
	}
	launches.closeAndCheckGone(t, e.c)
}

// TestBrowserTierStops: a challenge the browser cannot clear, and a
// CAPTCHA shown to the browser, each end the fetch with a typed error that
// crawl_log records; neither leaves a cookie to reuse or a Chromium behind.
// The two share one client and one Chromium.
func TestBrowserTierStops(t *testing.T) {
	needChromium(t)
	var launches chromiumLaunches
	e := newSimEnv(t, 1, ClientOptions{Browser: launches.starter()})
	launches.clock = e.clock
	// The browser reloads a challenge that never clears for as long as it
	// waits (wall time); a slow clock keeps those reloads few, each still
	// paced by the host's bucket.
	stop := make(chan struct{})
	done := pacedAdvance(e.clock, stop, 200*time.Millisecond)
	t.Cleanup(func() { close(stop); <-done })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	ua := e.c.UserAgent()
	arts := cityArticles(t, e.w, 2)

	t.Run("challenge never clears", func(t *testing.T) {
		e.c.SetSitePolicy(qingyuan, cityPolicy(TierDirect))
		if err := e.w.SetFault(qingyuan, sim.Fault{Kind: sim.FaultChallenge}); err != nil {
			t.Fatal(err)
		}
		defer e.w.ClearFaults(qingyuan)
		logFrom := len(e.w.AccessLog(qingyuan))
		rowFrom := lastRowID(t, e)
		mark := launches.mark()

		resp, err := e.c.Do(ctx, Request{URL: arts[0].URL, Purpose: model.PurposeDetail})
		if !errors.Is(err, ErrChallengeNotCleared) || resp != nil {
			t.Fatalf("Do = %v, %v; want ErrChallengeNotCleared and no response", resp, err)
		}
		if c := ErrorClass(0, err); c != ClassChallenge {
			t.Errorf("error class %q, want %q", c, ClassChallenge)
		}
		if ck := clearanceOf(t, e); ck != nil {
			t.Errorf("pool holds %+v after a challenge that never cleared, want nothing to reuse", ck)
		}

		seen := e.w.AccessLog(qingyuan)[logFrom:]
		var fromBrowser []sim.Access
		var direct []sim.Access // robots.txt and the direct request
		for _, a := range seen {
			if a.InFlightAtArrival != 0 {
				t.Errorf("%s arrived with %d in flight", a.Path, a.InFlightAtArrival)
			}
			if !isBrowserUA(a.UserAgent, ua) {
				direct = append(direct, a)
			} else {
				fromBrowser = append(fromBrowser, a)
			}
			if a.Path != "/robots.txt" && a.Status != http.StatusPreconditionFailed {
				t.Errorf("%s %s answered %d under the unpassable challenge", a.UserAgent, a.Path, a.Status)
			}
		}
		if len(fromBrowser) == 0 {
			t.Fatal("the browser never tried the page")
		}
		// The client paces the browser's reloads of a challenge that never
		// clears like any request: what reached the site, direct and from
		// the browser, obeys the window rule (on the client's clock, which
		// the simulated web keeps too). A browser request spends its token
		// as the proxy sends it, not at the gate.
		allowed, refused := launches.since(mark)
		paced := slices.Clone(seen)
		checkWindowRule(t, qingyuan, paced)
		if t.Failed() {
			// What the window rule saw, for whoever has to find out why.
			for _, a := range paced {
				t.Logf("paced: %s %s", a.Arrived.Format("15:04:05.000"), a.Path)
			}
			for _, d := range refused {
				t.Logf("refused: %s %s", d.at.Format("15:04:05.000"), d.path)
			}
		}
		leaked := checkGated(t, fromBrowser, allowed, refused)

		rows := rowsAfter(t, e, rowFrom)
		// A leaked request went out after the render's record was taken:
		// its row has no status.
		if got := wireRows(rows); got > len(seen) || got < len(seen)-leaked {
			t.Errorf("crawl_log has %d rows with a status, the sim saw %d requests (%d leaked)", got, len(seen), leaked)
		}
		var pageRows int
		for _, r := range rows {
			if r.Strategy == TierBrowser && r.ArticleURL == arts[0].URL {
				pageRows++
			}
		}
		if pageRows < len(allowed) {
			t.Errorf("crawl_log has %d playwright rows for the page, the gate let %d requests through", pageRows, len(allowed))
		}
		if i := slices.IndexFunc(rows, func(r model.CrawlLog) bool { return r.ArticleURL == arts[0].URL }); i < 0 ||
			rows[i].Strategy != TierDirect || deref(rows[i].HTTPStatus) != 412 || rows[i].ErrorClass != ClassChallenge {
			t.Errorf("the page's first crawl_log row is not the direct 412 classed %q", ClassChallenge)
		}
		var gaveUp int
		for _, r := range rows {
			if r.Strategy == TierBrowser && r.ArticleURL == arts[0].URL && r.ErrorClass == ClassChallenge && !r.Success {
				gaveUp++
			}
		}
		if gaveUp != 1 {
			t.Errorf("%d playwright rows for %s classed %q, want the one that carries the verdict", gaveUp, arts[0].URL, ClassChallenge)
		}
		t.Logf("%d browser requests in %v of client time before giving up", len(fromBrowser), seen[len(seen)-1].Arrived.Sub(seen[0].Arrived))
	})

	t.Run("captcha shown to the browser", func(t *testing.T) {
		// fetch_strategy: browser sends the page to the browser first.
		e.c.SetSitePolicy(qingyuan, cityPolicy(TierBrowser))
		if err := e.w.SetFault(qingyuan, sim.Fault{Kind: sim.FaultCaptcha}); err != nil {
			t.Fatal(err)
		}
		defer e.w.ClearFaults(qingyuan)
		logFrom := len(e.w.AccessLog(qingyuan))
		rowFrom := lastRowID(t, e)
		mark := launches.mark()

		resp, err := e.c.Do(ctx, Request{URL: arts[1].URL, Purpose: model.PurposeDetail})
		if !errors.Is(err, ErrCaptcha) || !IsHostStop(err) || resp != nil {
			t.Fatalf("Do = %v, %v; want ErrCaptcha, a host stop, and no response", resp, err)
		}
		if c := ErrorClass(0, err); c != ClassCaptcha {
			t.Errorf("error class %q, want %q", c, ClassCaptcha)
		}
		if ck := clearanceOf(t, e); ck != nil {
			t.Errorf("pool holds %+v after a CAPTCHA, want nothing", ck)
		}
		var seen []sim.Access
		for _, a := range e.w.AccessLog(qingyuan)[logFrom:] {
			if a.Path != "/robots.txt" {
				seen = append(seen, a)
			}
		}
		if len(seen) == 0 {
			t.Fatal("the site saw nothing: the CAPTCHA was never met")
		}
		for _, a := range seen {
			if !isBrowserUA(a.UserAgent, ua) || a.Method != http.MethodGet || strings.HasPrefix(a.Path, "/__captcha") {
				t.Errorf("%s %s UA %q: want only the browser's GET of the page, nothing towards solving the CAPTCHA",
					a.Method, a.Path, a.UserAgent)
			}
		}
		allowed, refused := launches.since(mark)
		checkGated(t, seen, allowed, refused)
		rows := rowsAfter(t, e, rowFrom)
		var pageRows int
		for _, r := range rows {
			if r.ArticleURL != arts[1].URL {
				continue
			}
			pageRows++
			if r.Strategy != TierBrowser || r.ErrorClass != ClassCaptcha || r.Success || deref(r.HTTPStatus) != http.StatusOK {
				t.Errorf("crawl_log row for the page: %s status %d class %q success %v, want playwright 200 classed %q",
					r.Strategy, deref(r.HTTPStatus), r.ErrorClass, r.Success, ClassCaptcha)
			}
		}
		if pageRows != 1 {
			t.Errorf("%d crawl_log rows for the CAPTCHA page, want 1", pageRows)
		}
	})

	if n := launches.count(); n != 1 {
		t.Errorf("%d Chromium launches, want 1 shared by both cases", n)
	}
	launches.closeAndCheckGone(t, e.c)
}

// pacedAdvance moves the fake clock to the next sleeper's deadline at most
// once per every of wall time, until stop is closed.
func pacedAdvance(clock *FakeClock, stop <-chan struct{}, every time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if next, ok := clock.NextWake(); ok {
				clock.Set(next)
			}
		}
	}()
	return done
}
