package portal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/portal"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// clock is the visitors' clock: tests move it, nothing sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// world is a portal over a real store with a recorder, served over HTTP.
type world struct {
	st     *store.Store
	clock  *clock
	rec    *ledger.Recorder
	srv    *httptest.Server
	cards  map[string]int64 // by label
	site   int64
	target int64
	n      int // cards added
}

const (
	deptFGW = int64(37) // 清远市发展和改革局
	deptCZJ = int64(38) // 清远市财政局
)

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOn(t, storetest.SQLite(t))
}

// newWorldOn is newWorld on a given store (a dialect).
func newWorldOn(t *testing.T, st *store.Store) *world {
	t.Helper()
	// 10:00 in Shanghai, so the day does not end under the test.
	w := &world{st: st, clock: &clock{t: time.Date(2026, 4, 23, 2, 0, 0, 0, time.UTC)}, cards: map[string]int64{}}
	seedCards(t, w)
	w.rec = ledger.NewRecorder(st, ledger.RecorderOptions{Now: w.clock.Now, FlushEvery: time.Hour})
	t.Cleanup(func() { _ = w.rec.Close() })
	h, err := portal.New(portal.Options{Store: st, Visits: w.rec, Now: w.clock.Now})
	if err != nil {
		t.Fatalf("portal: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h) // as `zhizhi serve` mounts it
	w.srv = httptest.NewServer(mux)
	t.Cleanup(w.srv.Close)
	return w
}

func day(y int, m time.Month, d int) *time.Time {
	t := time.Date(y, m, d, 1, 0, 0, 0, time.UTC) // 09:00 in Shanghai
	return &t
}

type cardSeed struct {
	label, title, summary, grade, channel, url string
	dept                                       int64
	published                                  *time.Time
	dupOf                                      string
}

// seedCards writes a site, a target and articles with their cards: one per
// grade, a frozen one, a duplicate, hostile text, and a run of news items
// long enough to page.
func seedCards(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := w.st.ImportDepartments(ctx, []model.Department{
		{DeptID: deptFGW, DeptName: "清远市发展和改革局", State: 1},
		{DeptID: deptCZJ, DeptName: "清远市财政局", State: 1},
	}); err != nil {
		t.Fatal(err)
	}
	err := w.st.WithTx(ctx, func(tx *store.Tx) error {
		s := &model.Site{SiteCode: "qy", SiteName: "清远市人民政府", BaseURL: "https://www.gdqy.gov.test",
			SiteRole: model.RoleQingyuanLocal, YAMLPath: "config/sites/qy.yaml", Access: model.AccessSummary,
			DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
		if _, _, err := tx.UpsertSite(ctx, s); err != nil {
			return err
		}
		tg := &model.Target{SiteID: s.ID, TargetCode: "qy_zcwj", TargetName: "政策文件",
			EntryURL: "https://www.gdqy.gov.test/zcwj/", Enabled: true, Source: model.SourceYAML}
		if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
			return err
		}
		w.site, w.target = s.ID, tg.ID
		return nil
	})
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	seeds := []cardSeed{
		{label: "green", title: "关于印发清远市促进民营经济发展若干措施的通知", summary: "为进一步促进民营经济发展，现将若干措施印发给你们，请认真贯彻执行。",
			grade: model.GradeGreen, channel: "政策文件", dept: deptFGW, published: day(2026, 4, 20)},
		{label: "yellow", title: "清远市2026年第一季度财政收支情况", summary: "黄色摘要等待人工改写不应公开",
			grade: model.GradeYellow, channel: "财政信息", dept: deptCZJ, published: day(2026, 3, 10)},
		{label: "red", title: "清远市发展和改革局2025年工作总结", summary: "红色摘要不应公开",
			grade: model.GradeRed, channel: "政策文件", dept: deptFGW, published: day(2026, 2, 1)},
		{label: "frozen", title: "已被来源网站要求下线的通知", summary: "下线卡片的摘要",
			grade: model.GradeGreen, channel: "政策文件", dept: deptFGW, published: day(2026, 4, 21),
			url: "https://www.gdqy.gov.test/zcwj/frozen.html"},
		{label: "dup", title: "关于印发清远市促进民营经济发展若干措施的通知（转载）", summary: "重复卡片的摘要",
			grade: model.GradeGreen, channel: "政策文件", dept: deptFGW, published: day(2026, 4, 20), dupOf: "green"},
		{label: "hostile", title: `<script>alert("t")</script>恶意标题`, summary: `<img src=x onerror=alert("s")>恶意摘要`,
			grade: model.GradeGreen, channel: "政策文件", dept: deptFGW, published: day(2026, 1, 5)},
		{label: "badurl", title: "来源地址异常的通知", summary: "来源地址不是网页地址",
			grade: model.GradeGreen, channel: "政策文件", dept: deptFGW, published: day(2026, 1, 4),
			url: "javascript:alert(document.domain)"},
		{label: "badurl2", title: "来源地址带主机名的脚本地址", summary: "来源地址不是网页地址",
			grade: model.GradeRed, channel: "政策文件", dept: deptFGW, published: day(2026, 1, 3),
			url: "javascript://www.gdqy.gov.test/%0Aalert(document.domain)"},
	}
	for i := range 25 {
		seeds = append(seeds, cardSeed{label: fmt.Sprintf("news%02d", i), title: fmt.Sprintf("清远新闻第%02d期", i),
			summary: fmt.Sprintf("第%02d期新闻摘要。", i), grade: model.GradeGreen, channel: "新闻动态", dept: deptCZJ,
			published: day(2025, 12, 1+i)})
	}
	for _, sd := range seeds {
		w.addCard(t, sd)
	}
	k := &model.Takedown{SiteID: w.site, Scope: model.TakedownURLs, URLs: []string{"https://www.gdqy.gov.test/zcwj/frozen.html"},
		Requester: "清远市政务服务数据管理局", RecordedBy: "user:admin"}
	if err := w.st.RecordTakedown(ctx, k); err != nil {
		t.Fatal(err)
	}
	if k, err := w.st.FreezeTakedown(ctx, k.ID, "user:admin"); err != nil || k.CardsFrozen != 1 {
		t.Fatalf("freeze: %+v %v", k, err)
	}
}

// addCard saves an article with its card, as the crawler does.
func (w *world) addCard(t *testing.T, sd cardSeed) int64 {
	t.Helper()
	i := w.n
	w.n++
	url := sd.url
	if url == "" {
		url = fmt.Sprintf("https://www.gdqy.gov.test/zcwj/post_%d.html", 1000+i)
	}
	dept := sd.dept
	card := &model.SummaryCard{Title: sd.title, AutoSummary: sd.summary, SourceURL: url, PublishTime: sd.published,
		Simhash: uint64(0x1234_5678_9abc_0000 + i), SourceDNA: fmt.Sprintf("sha256:%064x", 7000+i),
		FetchedAt: w.clock.Now(), Sigma: 0.9, Relevance: 5, Grade: sd.grade}
	if sd.dupOf != "" {
		id := w.cards[sd.dupOf]
		card.DuplicateOf = &id
	}
	a := &model.Article{SiteID: w.site, TargetID: w.target, NativePostID: fmt.Sprint(1000 + i), URL: url,
		Title: sd.title, DeptID: &dept, ChannelName: sd.channel, PublishTime: sd.published,
		Status: model.StatusReady, FetchedAt: w.clock.Now(), Card: card}
	if _, _, err := w.st.SaveArticle(context.Background(), a, nil, 0, store.FrontierMark{}); err != nil {
		t.Fatalf("card %s: %v", sd.label, err)
	}
	w.cards[sd.label] = card.ID
	return card.ID
}

// client never follows redirects, so the door's answer can be read.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

const browserUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

type reply struct {
	status int
	header http.Header
	body   string
}

func (w *world) do(t *testing.T, method, path, ua string, body io.Reader) reply {
	t.Helper()
	req, err := http.NewRequest(method, w.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (w *world) get(t *testing.T, path string) reply {
	t.Helper()
	return w.do(t, http.MethodGet, path, browserUA, nil)
}

func (w *world) cardPath(label string) string { return fmt.Sprintf("/card/%d", w.cards[label]) }
func (w *world) goPath(label string) string   { return fmt.Sprintf("/go/%d", w.cards[label]) }

// today is the portal day of the world's clock.
func (w *world) today() string { return w.rec.Day(w.clock.Now()) }

// visitors flushes the recorder and returns today's visitors.
func (w *world) visitors(t *testing.T) []store.VisitorDay {
	t.Helper()
	if err := w.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	vs, err := w.st.Visitors(context.Background(), w.today())
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
