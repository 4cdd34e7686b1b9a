package portal_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"zhizhi/internal/chrometest"
	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// browser is a headless Chromium tab that collects script errors and
// refused resources (a CSP violation is logged as an error).
type browser struct {
	t        *testing.T
	tab      context.Context
	shots    string
	mu       sync.Mutex
	problems []string
}

func openBrowser(t *testing.T, ua string) *browser {
	t.Helper()
	b := &browser{t: t, shots: chrometest.ArtifactDir(t, "portal")}
	b.tab = chrometest.Start(t, chrometest.Options{UserAgent: ua, Listen: func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				b.problems = append(b.problems, string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}})
	return b
}

func (b *browser) shoot(name string) {
	b.t.Helper()
	chrometest.Shoot(b.t, b.tab, b.shots, name)
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	// A step has a minute (a safety net, not a measure), so that when one
	// hangs the tab can still say where it is and show it.
	ctx, cancel := context.WithTimeout(b.tab, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, lerr := chromedp.Run(b.tab, chromedp.Location())
		if lerr == nil {
			b.shoot("failed-step")
		}
		b.t.Fatalf("%s: %v (the tab is at %q, %v; see failed-step.png)", what, err, loc, lerr)
	}
}

func (b *browser) eval(expr string) bool {
	b.t.Helper()
	ok, err := chromedp.Run(b.tab, chromedp.Evaluate[bool](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return ok
}

// read moves the pointer about, wheels down the page and presses a key
// or two, as a person reading does.
func (b *browser) read() {
	b.t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	for i := range 12 {
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, float64(200+23*i), float64(150+17*i)))
	}
	for range 3 {
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, 640, 400, func(p *input.DispatchMouseEventParams) {
			p.DeltaX, p.DeltaY = 1, 240 // a zero deltaX would be left out, and Chromium wants both
		}))
	}
	steps = append(steps, chromedp.KeyEvent("\ue015")) // arrow down
	b.do("read the page", steps...)
	b.settle()
}

// settle waits until the page has stopped scrolling, so that the next
// click is aimed where the link is.
func (b *browser) settle() {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a safety net, not a measure
	last := -1.0
	for {
		y, err := chromedp.Run(b.tab, chromedp.Evaluate[float64](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(window.scrollY))))`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			b.t.Fatalf("read the scroll position: %v", err)
		}
		if y == last {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the page is still scrolling after 30 s (at %v)", y)
		}
		last = y
	}
}

// styled says the page has its style sheet and its logo loaded.
func (b *browser) styled() bool {
	b.t.Helper()
	return b.eval(`getComputedStyle(document.querySelector("header.masthead")).backgroundColor === "rgb(29, 43, 58)" &&
		document.querySelector(".brand img").complete && document.querySelector(".brand img").naturalWidth > 0`)
}

// waitFor flushes the recorder until cond holds on today's visitors: the
// page's beacon travels on its own schedule.
func (w *world) waitFor(t *testing.T, what string, cond func([]store.VisitorDay) bool) []store.VisitorDay {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a safety net, not a measure
	for {
		vs := w.visitors(t)
		if cond(vs) {
			return vs
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: visitors %s", what, dump(vs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHumanAndBotLandInTheirLedgers is the portal's acceptance test: a
// person in a real browser — who loads the style sheet and images,
// scrolls, moves the pointer and pauses between pages — and two scripts —
// one naming itself a bot, one posing as a browser, both fast and loading
// no assets — visit the portal. The person is scored human and their
// views and click-through reach the humans' tallies; the scripts are
// scored bot and do not.
func TestHumanAndBotLandInTheirLedgers(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()

	// The source site the door sends the reader to, on this machine.
	var sourceHits sync.Map
	source := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sourceHits.Store(r.URL.Path, true)
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, `<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>原文</title></head><body><h1 id="source">原文全文</h1></body></html>`)
	}))
	defer source.Close()
	card := w.addCard(t, cardSeed{label: "read", title: "清远市关于做好2026年春耕生产工作的通知",
		summary: "各县（市、区）人民政府：为做好2026年春耕生产工作，现就有关事项通知如下。", grade: model.GradeGreen,
		channel: "政策文件", dept: deptFGW, published: day(2026, 4, 22), url: source.URL + "/zcwj/post_spring.html"})
	other := w.cards["green"]

	// The person.
	b := openBrowser(t, browserUA)
	b.do("open the front page", chromedp.Navigate(w.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#card-list`)))
	if !b.styled() {
		t.Error("the front page's style sheet or logo did not load")
	}
	b.shoot("1-front-page")
	b.read()
	w.clock.Advance(45 * time.Second)
	b.do("open the card", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#card-list h2 a[href="/card/%d"]`, card))),
		chromedp.WaitVisible(chromedp.CSS(`#card`)))
	if !b.styled() {
		t.Error("the card page's style sheet or logo did not load")
	}
	b.shoot("2-card")
	b.read()
	w.clock.Advance(70 * time.Second)
	b.do("follow the door to the full text", chromedp.Click(chromedp.CSS(`.door a`)),
		chromedp.WaitVisible(chromedp.CSS(`#source`)))
	if loc, err := chromedp.Run(b.tab, chromedp.Location()); err != nil || loc != source.URL+"/zcwj/post_spring.html" {
		t.Errorf("after the door the browser is at %q (%v), want the source page", loc, err)
	}
	if _, ok := sourceHits.Load("/zcwj/post_spring.html"); !ok {
		t.Error("the source site did not see the reader's own request")
	}
	w.clock.Advance(50 * time.Second)
	b.do("come back to the front page", chromedp.Navigate(w.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#card-list`)))
	b.read()
	b.do("open another card", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#card-list h2 a[href="/card/%d"]`, other))),
		chromedp.WaitVisible(chromedp.CSS(`#card`)))
	b.mu.Lock()
	if len(b.problems) > 0 {
		t.Errorf("the browser reported problems:\n%s", strings.Join(b.problems, "\n"))
	}
	b.mu.Unlock()

	// The scripts: a declared bot and one posing as a browser.
	bots := map[string]string{
		"declared": "ExampleScraper/1.0 (+https://scraper.example/bot)",
		"posing":   "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
	}
	for _, ua := range bots {
		for _, path := range []string{"/", fmt.Sprintf("/card/%d", card), fmt.Sprintf("/go/%d", card),
			fmt.Sprintf("/card/%d", other), fmt.Sprintf("/go/%d", other), "/?page=2", fmt.Sprintf("/card/%d", card)} {
			w.clock.Advance(300 * time.Millisecond)
			if r := w.do(t, http.MethodGet, path, ua, nil); r.status >= 400 {
				t.Fatalf("bot GET %s: %d", path, r.status)
			}
		}
	}

	// The person's beacons arrive on the page's own schedule: wait for
	// the scrolls and pointer moves to be counted.
	vs := w.waitFor(t, "the reader's interaction events", func(vs []store.VisitorDay) bool {
		for _, v := range vs {
			if v.UAClass == "browser" && v.Assets > 0 && v.Events.Scroll > 0 && v.Events.Pointer > 0 && v.Events.Key > 0 {
				return true
			}
		}
		return false
	})
	if len(vs) != 3 {
		t.Fatalf("%d visitors, want the person and two scripts: %s", len(vs), dump(vs))
	}
	var human *store.VisitorDay
	bands := map[string]int{}
	for i, v := range vs {
		t.Logf("visitor %s…: score %d (%s), %d requests, %d assets, %d pages, %d click-throughs, %d sleep windows, events %+v",
			v.Key[:8], v.Score, v.Band, v.Requests, v.Assets, v.Pages, v.Clicks, v.SleepWindows, v.Events)
		bands[v.Band]++
		if v.Assets > 0 {
			human = &vs[i]
		} else if v.Band != store.BandBot {
			t.Errorf("a script is scored %d (%s), want the bot band: %s", v.Score, v.Band, dump(v))
		}
	}
	if human == nil {
		t.Fatalf("no visitor loaded assets: %s", dump(vs))
	}
	if human.Band != store.BandHuman || human.Pages != 4 || human.Clicks != 1 || human.SleepWindows != 3 {
		t.Errorf("the person: score %d band %s, %d pages, %d click-throughs, %d sleep windows; want human, 4, 1, 3: %s",
			human.Score, human.Band, human.Pages, human.Clicks, human.SleepWindows, dump(human))
	}
	if bands[store.BandHuman] != 1 || bands[store.BandBot] != 2 {
		t.Errorf("bands %v, want one human and two bots", bands)
	}

	// The humans' ledger holds the person's card views and click-through,
	// and nothing of the scripts' (14 views and 4 click-throughs).
	want := []store.DayTally{{CardID: other, Views: 1}, {CardID: card, Views: 1, Clicks: 1}}
	if other > card {
		want[0], want[1] = want[1], want[0]
	}
	tallies, err := w.st.HumanTallies(ctx, w.today())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tallies) != fmt.Sprint(want) {
		t.Errorf("human tallies %v, want %v", tallies, want)
	}
	stats, err := w.st.PortalDayStats(ctx, w.today())
	if err != nil {
		t.Fatal(err)
	}
	if h, bot := stats.Band(store.BandHuman), stats.Band(store.BandBot); h.Visitors != 1 || h.PageViews != 4 || h.Clicks != 1 ||
		bot.Visitors != 2 || bot.PageViews != 10 || bot.Clicks != 4 {
		t.Errorf("day stats %+v, want human 1 visitor 4 pages 1 click, bot 2 visitors 10 pages 4 clicks", stats.Bands)
	}

	// After the day is over the tallies stand and the visitors are gone.
	today := w.today()
	w.clock.Advance(24 * time.Hour)
	if closed, err := w.rec.CloseDays(ctx); err != nil || len(closed) != 1 || closed[0] != today {
		t.Fatalf("close the day: %v %v", closed, err)
	}
	if after, err := w.st.HumanTallies(ctx, today); err != nil || fmt.Sprint(after) != fmt.Sprint(want) {
		t.Errorf("the closed day's tallies %v (%v), want %v", after, err, want)
	}
	if left, err := w.st.Visitors(ctx, today); err != nil || len(left) != 0 {
		t.Errorf("the closed day keeps %d visitors (%v)", len(left), err)
	}

	// The public dashboard shows the closed day: 4 human views, 1
	// click-through (α = 1 − 1/4 = 0.75), 10 bot views against 4 human ones
	// (ratio 2.5, inside the healthy 1–5).
	b.do("open the transparency ledger", chromedp.Navigate(w.srv.URL+"/ledger?day="+today),
		chromedp.WaitVisible(chromedp.CSS(`.ledger .charts`)))
	text, err := chromedp.Run(b.tab, chromedp.Text(chromedp.CSS(`.ledger`)))
	if err != nil {
		t.Fatalf("read the ledger: %v", err)
	}
	for _, want := range []string{"0.75", "2.50", "人机比（机器/人工） · 正常"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dashboard of %s does not show %q:\n%s", today, want, text)
		}
	}
	b.shoot("3-ledger")

	// Sealed, the day's human ledger holds the person's tallies, none of
	// the scripts'. (The chain starts on the day of the crawler's first
	// request: one is logged.)
	if err := w.st.InsertCrawlLog(ctx, &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list", Method: "GET",
		OccurredAt: w.clock.Now().Add(-24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	sealer := &ledger.Sealer{Store: w.st, Now: w.clock.Now, Human: func(ctx context.Context, day string) ([]model.HumanTally, error) {
		ts, err := w.st.HumanTallies(ctx, day)
		out := make([]model.HumanTally, len(ts))
		for i, t := range ts {
			out[i] = model.HumanTally{CardID: t.CardID, Views: t.Views, Clicks: t.Clicks}
		}
		return out, err
	}}
	w.clock.Advance(time.Hour)
	if sealed, err := sealer.SealDue(ctx); err != nil || len(sealed) != 1 || sealed[0] != today {
		t.Fatalf("sealed %v, %v; want %s", sealed, err, today)
	}
	humanLedger, err := w.st.SealedLedger(ctx, today, model.LedgerHuman)
	if err != nil {
		t.Fatal(err)
	}
	var records []string
	for _, r := range humanLedger.Records {
		records = append(records, r.Data)
	}
	wantRecords := []string{fmt.Sprintf(`{"card":%d,"views":1,"clicks":1}`, card), fmt.Sprintf(`{"card":%d,"views":1,"clicks":0}`, other)}
	if other < card {
		wantRecords[0], wantRecords[1] = wantRecords[1], wantRecords[0]
	}
	if strings.Join(records, "\n") != strings.Join(wantRecords, "\n") {
		t.Errorf("sealed human ledger\n%s\nwant\n%s", strings.Join(records, "\n"), strings.Join(wantRecords, "\n"))
	}
}
