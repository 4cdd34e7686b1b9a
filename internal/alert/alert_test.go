package alert_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const (
	feishuSecret = "feishu-signing-secret"
	jsonSecret   = "json-signing-secret"
	flakyHost    = "www.flaky.gov.test"
)

// received is one request a webhook receiver got.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// receiver is a local stand-in for the group robots: it records what it
// is sent and answers as Feishu, WeCom or a plain endpoint would.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{path: req.URL.Path, header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		switch {
		case strings.HasPrefix(req.URL.Path, "/feishu"):
			io.WriteString(w, `{"code":0,"msg":"success","data":{}}`)
		case strings.HasPrefix(req.URL.Path, "/wecom"):
			io.WriteString(w, `{"errcode":0,"errmsg":"ok"}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// take returns and forgets what was received, by path.
func (r *receiver) take() map[string][]received {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]received{}
	for _, g := range r.got {
		out[g.path] = append(out[g.path], g)
	}
	r.got = nil
	return out
}

func alertsConfig(base string) *config.Alerts {
	return &config.Alerts{
		Webhooks: []config.Webhook{
			{Name: "feishu-post", Kind: config.WebhookFeishu, Format: "post", URL: base + "/feishu/post", Secret: feishuSecret},
			{Name: "feishu-card", Kind: config.WebhookFeishu, Format: "interactive", URL: base + "/feishu/card"},
			{Name: "wecom-md", Kind: config.WebhookWeCom, Format: "markdown", URL: base + "/wecom/md"},
			{Name: "wecom-text", Kind: config.WebhookWeCom, Format: "text", URL: base + "/wecom/text"},
			{Name: "hook", Kind: config.WebhookJSON, Format: "json", URL: base + "/json", Secret: jsonSecret},
		},
		// The thresholds the documentation gives as defaults, written out.
		SuccessRate:   config.RateRule{Enabled: true, Threshold: 0.8, Window: time.Hour, MinRequests: 20},
		ChallengeRate: config.RateRule{Enabled: true, Threshold: 0.2, Window: time.Hour, MinRequests: 20},
		Stale:         true,
		Review:        true,
	}
}

// weeklyTarget adds a site with one target whose expected cadence is 7
// days, and returns the target's id.
func weeklyTarget(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var id int64
	err := st.WithTx(context.Background(), func(tx *store.Tx) error {
		s := &model.Site{SiteCode: "gd_ref", SiteName: "广东省人民政府", BaseURL: "https://www.gd.gov.test",
			SiteRole: model.RoleProvinceRef, YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessFull,
			DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
		if _, _, err := tx.UpsertSite(context.Background(), s); err != nil {
			return err
		}
		tg := &model.Target{SiteID: s.ID, TargetCode: "gd_zcwj", TargetName: "广东省人民政府｜政策文件",
			EntryURL: "https://www.gd.gov.test/zwgk/zcwj/", ExpectedCadenceDays: 7, Enabled: true, Source: model.SourceYAML}
		if _, _, err := tx.UpsertTarget(context.Background(), tg); err != nil {
			return err
		}
		id = tg.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// logRequests writes n crawl_log rows at `at` of the given outcome.
func logRequests(t *testing.T, st *store.Store, at time.Time, n int, success bool, status int, class string) {
	t.Helper()
	for range n {
		l := &model.CrawlLog{Host: "www.gd.gov.test", Purpose: model.PurposeDetail, Success: success, ErrorClass: class, OccurredAt: at}
		if status != 0 {
			s := status
			l.HTTPStatus = &s
		}
		if err := st.InsertCrawlLog(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
}

func flagForReview(t *testing.T, st *store.Store, now time.Time) {
	t.Helper()
	until := now.Add(23 * time.Hour)
	h := &model.HostState{Host: flakyHost, ConsecutiveErrors: 5, BreakerUntil: &until, NeedsReview: true,
		BreakerTrips: []time.Time{now.Add(-6 * 24 * time.Hour), now.Add(-3 * 24 * time.Hour), now.Add(-time.Hour)}}
	if err := st.PutHostHealth(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

// evaluate runs one evaluation at now and delivers what it returns after a
// trip through JSON (as a queued job would carry it).
func evaluate(t *testing.T, a *alert.Alerter, now time.Time) []alert.Notification {
	t.Helper()
	ns, err := a.Evaluate(context.Background(), now)
	if err != nil {
		t.Fatalf("evaluate at %v: %v", now, err)
	}
	for _, n := range ns {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var back alert.Notification
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, n) {
			t.Errorf("a notification does not survive JSON:\n%+v\n%+v", n, back)
		}
		if err := a.Send(context.Background(), back); err != nil {
			t.Errorf("send %s to %s: %v", n.Key, n.Webhook, err)
		}
	}
	return ns
}

// summary is "key state episode" per condition, each checked to have gone
// to every webhook exactly once.
func summary(t *testing.T, ns []alert.Notification, webhooks int) []string {
	t.Helper()
	count := map[string]int{}
	for _, n := range ns {
		count[n.Key+" "+n.State+" "+strconv.FormatInt(n.Episode, 10)]++
	}
	var out []string
	for k, c := range count {
		if c != webhooks {
			t.Errorf("%s went out %d times, want once per webhook (%d)", k, c, webhooks)
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestAlertLifecycle: each rule fires once when its condition starts,
// stays quiet while it holds (also for a new Alerter, as after a restart,
// and while a rate cannot be judged for lack of requests), sends a
// recovery when it clears, and fires again when it comes back.
func TestAlertLifecycle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rcv := newReceiver(t)
		cfg := alertsConfig(rcv.srv.URL)
		a, err := alert.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now().UTC().Truncate(time.Second)
		a.Now = func() time.Time { return t0 }
		hooks := len(cfg.Webhooks)
		target := weeklyTarget(t, st)
		day := 24 * time.Hour

		// Everything goes wrong: of 30 requests in the last hour 10
		// succeed (33% < 80%) and 12 met a challenge (40% > 20%); the
		// weekly column's newest article is 22 days old (> 21); a host
		// tripped its breaker a third time in 7 days.
		logRequests(t, st, t0.Add(-10*time.Minute), 10, true, 200, "")
		logRequests(t, st, t0.Add(-10*time.Minute), 12, false, 412, "challenge")
		logRequests(t, st, t0.Add(-10*time.Minute), 8, false, 0, "network")
		old := t0.Add(-22 * day)
		if err := st.MarkTargetCrawled(ctx, target, t0, &old); err != nil {
			t.Fatal(err)
		}
		flagForReview(t, st, t0)

		fired := evaluate(t, a, t0)
		want := []string{"challenge_rate firing 1", "review:" + flakyHost + " firing 1", "stale:gd_zcwj firing 1", "success_rate firing 1"}
		if got := summary(t, fired, hooks); !reflect.DeepEqual(got, want) {
			t.Fatalf("first evaluation sent %v, want %v", got, want)
		}
		checkPayloads(t, rcv.take(), fired, t0)
		for _, n := range fired {
			if n.Webhook != "hook" {
				continue
			}
			if !strings.HasPrefix(n.Title, "【知止告警】") {
				t.Errorf("alert titled %q: a Feishu keyword check on 知止 would drop it", n.Title)
			}
			switch n.Rule {
			case alert.RuleSuccessRate:
				wantText(t, n, "抓取成功率过低", "33.3%", "80.0%", "共请求 30 次，成功 10 次")
			case alert.RuleChallengeRate:
				wantText(t, n, "反爬验证拦截率过高", "12 次遇到反爬验证", "40.0%", "20.0%")
			case alert.RuleStale:
				wantText(t, n, "栏目长时间无更新：gd_zcwj", "22.0 天没有新文章", "7 天的 3 倍（21 天）")
			case alert.RuleReview:
				wantText(t, n, "站点需人工复核："+flakyHost, "7 天内已熔断 3 次", "zhizhi host clear "+flakyHost)
			}
		}

		// Holding: nothing more, also from a new Alerter (a restart), and
		// with the request window empty (rates cannot be judged).
		if ns := evaluate(t, a, t0.Add(time.Minute)); len(ns) != 0 {
			t.Errorf("a minute later, with every condition holding, %d more notifications: %v", len(ns), summary(t, ns, hooks))
		}
		restarted, err := alert.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ns := evaluate(t, restarted, t0.Add(2*time.Minute)); len(ns) != 0 {
			t.Errorf("after a restart %d notifications for conditions already announced: %v", len(ns), summary(t, ns, hooks))
		}
		if ns := evaluate(t, a, t0.Add(3*time.Hour)); len(ns) != 0 {
			t.Errorf("with no requests in the window %d notifications: %v", len(ns), summary(t, ns, hooks))
		}
		if got := rcv.take(); len(got) != 0 {
			t.Errorf("the receivers got %d more requests while the conditions held", len(got))
		}

		// Everything clears: 100 good requests (refusals zhizhi made itself
		// do not count), a new article in the column, a person cleared
		// the host.
		t2 := t0.Add(4 * time.Hour)
		logRequests(t, st, t2.Add(-5*time.Minute), 100, true, 200, "")
		logRequests(t, st, t2.Add(-5*time.Minute), 100, false, 0, "breaker")
		logRequests(t, st, t2.Add(-5*time.Minute), 100, false, 0, "robots")
		fresh := t2.Add(-day)
		if err := st.MarkTargetCrawled(ctx, target, t2, &fresh); err != nil {
			t.Fatal(err)
		}
		if err := st.ClearHostBlock(ctx, flakyHost); err != nil {
			t.Fatal(err)
		}
		a.Now = func() time.Time { return t2 }
		cleared := evaluate(t, a, t2)
		want = []string{"challenge_rate resolved 1", "review:" + flakyHost + " resolved 1", "stale:gd_zcwj resolved 1", "success_rate resolved 1"}
		if got := summary(t, cleared, hooks); !reflect.DeepEqual(got, want) {
			t.Fatalf("after everything cleared, sent %v, want %v", got, want)
		}
		checkPayloads(t, rcv.take(), cleared, t2)
		for _, n := range cleared {
			if n.Webhook == "hook" && !strings.HasPrefix(n.Title, "【知止恢复】") {
				t.Errorf("recovery titled %q", n.Title)
			}
		}
		if ns := evaluate(t, a, t2.Add(time.Minute)); len(ns) != 0 {
			t.Errorf("with everything clear, %d notifications: %v", len(ns), summary(t, ns, hooks))
		}

		// It comes back 22 days later: fires again, episode 2.
		t4 := t2.Add(22 * day)
		logRequests(t, st, t4.Add(-5*time.Minute), 5, true, 200, "")
		logRequests(t, st, t4.Add(-5*time.Minute), 15, false, 412, "challenge")
		logRequests(t, st, t4.Add(-5*time.Minute), 10, false, 503, "http")
		flagForReview(t, st, t4)
		a.Now = func() time.Time { return t4 }
		again := evaluate(t, a, t4)
		want = []string{"challenge_rate firing 2", "review:" + flakyHost + " firing 2", "stale:gd_zcwj firing 2", "success_rate firing 2"}
		if got := summary(t, again, hooks); !reflect.DeepEqual(got, want) {
			t.Fatalf("on recurrence, sent %v, want %v", got, want)
		}
		checkPayloads(t, rcv.take(), again, t4)
	})
}

func wantText(t *testing.T, n alert.Notification, parts ...string) {
	t.Helper()
	text := n.Title + "\n" + strings.Join(n.Lines, "\n")
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s message lacks %q:\n%s", n.Key, p, text)
		}
	}
}

// checkPayloads checks what each receiver got against the shapes Feishu
// and WeCom document, and the signatures against their formulas.
func checkPayloads(t *testing.T, got map[string][]received, ns []alert.Notification, now time.Time) {
	t.Helper()
	titles := map[string]bool{}
	for _, n := range ns {
		titles[n.Title] = true
	}
	conds := len(ns) / 5
	for _, path := range []string{"/feishu/post", "/feishu/card", "/wecom/md", "/wecom/text", "/json"} {
		if len(got[path]) != conds {
			t.Errorf("%s received %d messages, want %d", path, len(got[path]), conds)
		}
		for _, r := range got[path] {
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("%s: Content-Type %q", path, ct)
			}
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Errorf("%s: body is not JSON: %s", path, r.body)
				continue
			}
			switch path {
			case "/feishu/post":
				// {"msg_type":"post","content":{"post":{"zh_cn":{"title":…,"content":[[{"tag":"text","text":…}]]}}},"timestamp":…,"sign":…}
				if m["msg_type"] != "post" {
					t.Errorf("feishu post: msg_type %v", m["msg_type"])
				}
				zh := dig(m, "content", "post", "zh_cn")
				title, _ := zh["title"].(string)
				rows, _ := zh["content"].([]any)
				if !titles[title] || len(rows) == 0 {
					t.Errorf("feishu post: title %q, %d rows: %s", title, len(rows), r.body)
				}
				for _, row := range rows {
					elems, _ := row.([]any)
					e, _ := elems[0].(map[string]any)
					if len(elems) != 1 || e["tag"] != "text" || e["text"] == "" {
						t.Errorf("feishu post: row %v, want [{tag: text, text: …}]", row)
					}
				}
				ts, _ := m["timestamp"].(string)
				sign, _ := m["sign"].(string)
				if ts != strconv.FormatInt(now.Unix(), 10) {
					t.Errorf("feishu timestamp %q, want the send time in seconds %d", ts, now.Unix())
				}
				// Feishu: HMAC-SHA256 keyed with timestamp + "\n" + secret,
				// over nothing, base64.
				mac := hmac.New(sha256.New, []byte(ts+"\n"+feishuSecret))
				if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); sign != want {
					t.Errorf("feishu sign %q, want %q", sign, want)
				}
			case "/feishu/card":
				// {"msg_type":"interactive","card":{"header":{"title":{"tag":"plain_text","content":…}},"elements":[{"tag":"div","text":{"tag":"lark_md",…}}]}}
				title := dig(m, "card", "header", "title")
				elems, _ := dig(m, "card")["elements"].([]any)
				if m["msg_type"] != "interactive" || title["tag"] != "plain_text" || !titles[title["content"].(string)] || len(elems) != 1 {
					t.Errorf("feishu card: %s", r.body)
				}
				if _, signed := m["sign"]; signed {
					t.Errorf("feishu card signed without a secret: %s", r.body)
				}
			case "/wecom/md":
				// {"msgtype":"markdown","markdown":{"content":…}}
				content, _ := dig(m, "markdown")["content"].(string)
				if m["msgtype"] != "markdown" || !anyTitleIn(titles, content) || len(content) > 4096 {
					t.Errorf("wecom markdown: %s", r.body)
				}
			case "/wecom/text":
				// {"msgtype":"text","text":{"content":…}}
				content, _ := dig(m, "text")["content"].(string)
				if m["msgtype"] != "text" || !anyTitleIn(titles, content) || len(content) > 2048 {
					t.Errorf("wecom text: %s", r.body)
				}
			case "/json":
				var n alert.Notification
				if err := json.Unmarshal(r.body, &n); err != nil || !titles[n.Title] || n.Webhook != "hook" || len(n.Lines) == 0 {
					t.Errorf("json webhook: %s", r.body)
				}
				mac := hmac.New(sha256.New, []byte(jsonSecret))
				mac.Write(r.body)
				if got, want := r.header.Get("X-Zhizhi-Signature"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
					t.Errorf("json signature %q, want %q", got, want)
				}
			}
		}
	}
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, _ := m[k].(map[string]any)
		if next == nil {
			return map[string]any{}
		}
		m = next
	}
	return m
}

func anyTitleIn(titles map[string]bool, s string) bool {
	for t := range titles {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// TestOneSenderAmongMany: several processes evaluating the same
// conditions at the same moment send each alert once between them.
func TestOneSenderAmongMany(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rcv := newReceiver(t)
		cfg := alertsConfig(rcv.srv.URL)
		now := time.Now().UTC().Truncate(time.Second)
		target := weeklyTarget(t, st)
		logRequests(t, st, now.Add(-time.Minute), 30, false, 503, "http")
		old := now.Add(-30 * 24 * time.Hour)
		if err := st.MarkTargetCrawled(ctx, target, now, &old); err != nil {
			t.Fatal(err)
		}
		flagForReview(t, st, now)
		const workers = 6
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			all []alert.Notification
		)
		start := make(chan struct{})
		for range workers {
			a, err := alert.New(st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ns, err := a.Evaluate(ctx, now)
				if err != nil {
					t.Errorf("evaluate: %v", err)
				}
				mu.Lock()
				all = append(all, ns...)
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		want := []string{"review:" + flakyHost + " firing 1", "stale:gd_zcwj firing 1", "success_rate firing 1"}
		if got := summary(t, all, len(cfg.Webhooks)); !reflect.DeepEqual(got, want) {
			t.Errorf("%d processes evaluating at once sent %v, want each alert once: %v", workers, got, want)
		}
	})
}

// TestUnqueuedUntilQueued: what an evaluation claims is returned by
// Unqueued, also to a new Alerter (a process started after the one that
// claimed died), until Queued records it handed on; a condition that
// starts and clears before either change was queued keeps both messages.
func TestUnqueuedUntilQueued(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rcv := newReceiver(t)
		cfg := alertsConfig(rcv.srv.URL)
		cfg.SuccessRate.Enabled, cfg.ChallengeRate.Enabled, cfg.Stale = false, false, false
		hooks := len(cfg.Webhooks)
		now := time.Now().UTC().Truncate(time.Second)
		flagForReview(t, st, now)
		dead, err := alert.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fired, err := dead.Evaluate(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.ClearHostBlock(ctx, flakyHost); err != nil {
			t.Fatal(err)
		}
		cleared, err := dead.Evaluate(ctx, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"review:" + flakyHost + " firing 1", "review:" + flakyHost + " resolved 1"}
		if got := summary(t, append(fired, cleared...), hooks); !reflect.DeepEqual(got, want) {
			t.Fatalf("evaluations claimed %v, want %v", got, want)
		}

		next, err := alert.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pending, err := next.Unqueued(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(t, pending, hooks); !reflect.DeepEqual(got, want) {
			t.Fatalf("after the claiming process died, unqueued %v, want %v", got, want)
		}
		for _, p := range pending {
			for _, n := range append(fired, cleared...) {
				if n.Webhook == p.Webhook && n.Key == p.Key && n.State == p.State &&
					(n.Title != p.Title || !reflect.DeepEqual(n.Lines, p.Lines) || !n.At.Equal(p.At)) {
					t.Errorf("the kept message differs from the claimed one:\n%+v\n%+v", p, n)
				}
			}
		}
		if err := next.Queued(ctx, pending[:1]); err != nil {
			t.Fatal(err)
		}
		pending, err = next.Unqueued(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(t, pending, hooks); !reflect.DeepEqual(got, want[1:]) {
			t.Fatalf("after the firing was queued, unqueued %v, want %v", got, want[1:])
		}
		if err := next.Queued(ctx, pending); err != nil {
			t.Fatal(err)
		}
		if pending, err = next.Unqueued(ctx); err != nil || len(pending) != 0 {
			t.Errorf("after everything was queued, %d unqueued (%v)", len(pending), err)
		}
	})
}
