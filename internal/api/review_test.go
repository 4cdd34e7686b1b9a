package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/review/reviewtest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// The yellow card's anchors; its summary keeps three of the four.
var yellowAnchors = []model.CardAnchor{
	{Text: "2026年3月5日", Kind: "date"}, {Text: "粤府〔2026〕5号", Kind: "doc_no"},
	{Text: "广东省人民政府", Kind: "org"}, {Text: "1200名", Kind: "number"},
}

// seedCards stores two articles of the provincial site with a card each:
// a yellow one (newer) and a green one.
func seedCards(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	for i, c := range []struct {
		title, summary, grade string
		sigma                 float64
		anchors               []model.CardAnchor
		id                    *int64
	}{
		{"省政府招生文件", "2026年3月5日，广东省人民政府印发粤府〔2026〕5号。", model.GradeYellow, 0.75, yellowAnchors, &w.cardYellow},
		{"省政府价格文件", "2026年3月5日印发粤府〔2026〕5号。", model.GradeGreen, 1, yellowAnchors[:2], &w.cardGreen},
	} {
		u := fmt.Sprintf("https://www.gd.gov.test/zcwj/card-%d.html", i)
		pub := w.now.Add(-time.Duration(i+1) * time.Hour)
		a := &model.Article{SiteID: w.provSite, TargetID: w.tgtProv, URL: u, Title: c.title, Status: model.StatusReady,
			ContentText: "正文：" + c.summary, FetchedAt: w.now.Add(-time.Hour), PublishTime: &pub,
			Card: &model.SummaryCard{SiteID: w.provSite, Title: c.title, AutoSummary: c.summary, SourceURL: u,
				PublishTime: &pub, Simhash: 0xfedcba9876543210, SourceDNA: fmt.Sprintf("dna-%d", i), FetchedAt: w.now.Add(-time.Hour),
				Anchors: c.anchors, Covered: int(c.sigma * float64(len(c.anchors))), Sigma: c.sigma, Relevance: 9, Grade: c.grade}}
		id, _, err := w.st.SaveArticle(ctx, a, nil, 0, store.FrontierMark{})
		if err != nil {
			t.Fatalf("article %s: %v", c.title, err)
		}
		card, err := w.st.CardByArticle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		*c.id = card.ID
	}
}

// openTakedown records a whole-site request of site and returns its id.
func (w *world) openTakedown(site int64) int64 {
	k := &model.Takedown{SiteID: site, Scope: model.TakedownSite, Requester: "网站管理员", RecordedBy: "user:setup"}
	if err := w.st.RecordTakedown(context.Background(), k); err != nil {
		panic(err)
	}
	return k.ID
}

func reviewAPI(t *testing.T, st *store.Store) (*world, *apiTest) {
	t.Helper()
	w := buildWorld(t, st)
	seedCards(t, w)
	return w, newAPITest(t, st, fixedNow)
}

// A rewrite is saved only when it grades green; a yellow one is refused
// with its σ and missing anchors, an over-long one with the grader's own
// message, one of a frozen card with 409.
func TestCardRewriteAPI(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w, a := reviewAPI(t, st)
		ctx := context.Background()
		path := idPath("/api/v1/cards/%d/rewrite", w.cardYellow)

		var detail cardDetailView
		a.expect(get(idPath("/api/v1/cards/%d", w.cardYellow), tokViewer), http.StatusOK).decode(t, &detail)
		if detail.Grade != "yellow" || detail.Sigma != 0.75 || len(detail.Anchors) != 4 || len(detail.MissingAnchors) != 1 ||
			detail.MissingAnchors[0].Text != "1200名" || detail.Simhash != "fedcba9876543210" || !detail.Public {
			t.Errorf("card detail: %+v", detail)
		}

		res := a.expect(postJSON(path, tokOperator, `{"summary": "广东省人民政府印发粤府〔2026〕5号，招生1200名。"}`), http.StatusUnprocessableEntity)
		var refused rewriteRefusal
		res.decode(t, &refused)
		if refused.Error != "not_green" || refused.Grade != "yellow" || refused.Sigma != 0.75 || refused.Covered != 3 ||
			refused.Total != 4 || len(refused.MissingAnchors) != 1 || refused.MissingAnchors[0].Text != "2026年3月5日" ||
			!strings.Contains(refused.Detail, "2026年3月5日") {
			t.Errorf("a yellow rewrite's refusal: %+v", refused)
		}
		long := strings.Repeat("长", reviewtest.Limit+1)
		if e := a.expect(postJSON(path, tokOperator, `{"summary": "`+long+`"}`), http.StatusBadRequest).errorBody(t); !strings.Contains(e.Detail, "超过本篇上限 120 字") {
			t.Errorf("an over-long rewrite: %+v, want the grader's message", e)
		}
		if c, _ := st.CardByID(ctx, w.cardYellow); c.RewrittenBy != "" || c.Grade != "yellow" {
			t.Fatalf("a refused rewrite changed the card: %+v", c)
		}

		green := "2026年3月5日，广东省人民政府印发粤府〔2026〕5号，招生1200名。"
		a.expect(postJSON(path, tokKeyWrite, `{"summary": "`+green+`"}`), http.StatusOK).decode(t, &detail)
		if detail.Summary != green || detail.Grade != "green" || detail.Sigma != 1 || detail.RewrittenBy == nil ||
			*detail.RewrittenBy != "apikey:8(li)" || len(detail.MissingAnchors) != 0 || detail.AutoSummary == green {
			t.Errorf("after a green rewrite: %+v", detail)
		}
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "card", ObjectID: fmt.Sprint(w.cardYellow)})
		if err != nil || len(entries) != 1 || entries[0].Actor != "apikey:8(li)" {
			t.Errorf("audit of the rewrite: %+v %v", entries, err)
		}

		k := w.openTakedown(w.provSite)
		a.expect(postJSON(idPath("/api/v1/takedowns/%d/freeze", k), tokOperator, ""), http.StatusOK)
		if e := a.expect(postJSON(idPath("/api/v1/cards/%d/rewrite", w.cardGreen), tokOperator, `{"summary": "2026年3月5日粤府〔2026〕5号"}`),
			http.StatusConflict).errorBody(t); e.Error != "conflict" {
			t.Errorf("rewriting a frozen card: %+v", e)
		}
	})
}

// Without a grader every rewrite is refused with 503 and nothing changes.
func TestCardRewriteWithoutGraderAPI(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	seedCards(t, w)
	a := newAPITest(t, st, fixedNow)
	a.h = New(Options{Store: st, Auth: testPrincipals, CrawlNow: func(context.Context, int64) error { return nil },
		Targets: &target.Service{Store: st, Validate: noWeb}})
	body := `{"summary": "2026年3月5日，广东省人民政府印发粤府〔2026〕5号，招生1200名。"}`
	if e := a.expect(postJSON(idPath("/api/v1/cards/%d/rewrite", w.cardYellow), tokOperator, body), http.StatusServiceUnavailable).errorBody(t); e.Error != "unavailable" {
		t.Errorf("rewrite without a grader: %+v", e)
	}
	if c, _ := st.CardByID(context.Background(), w.cardYellow); c.RewrittenBy != "" {
		t.Errorf("a rewrite was saved without a grader")
	}
}

// A takedown recorded with freeze_now comes back carried out with its
// receipt; a second freeze is a 409 naming the receipt; the frozen cards
// leave the public list but stay readable by id.
func TestTakedownAPI(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w, a := reviewAPI(t, st)
		var k takedownView
		a.expect(postJSON("/api/v1/takedowns", tokOperator, fmt.Sprintf(`{"site_id": %d, "scope": "urls",
			"urls": ["https://www.gd.gov.test/zcwj/card-0.html", "https://www.gd.gov.test/zcwj/card-0.html#x"],
			"requester": "广东省人民政府办公厅", "contact": "020-1234567", "reason": "文件已废止", "freeze_now": true}`, w.provSite)),
			http.StatusCreated).decode(t, &k)
		if k.Open || k.Receipt == nil || k.CardsFrozen != 1 || k.FrozenBy == nil || *k.FrozenBy != "user:li" ||
			len(k.URLs) != 1 || k.DeadlineAt.Sub(k.ReceivedAt) != 48*time.Hour || !k.ReceivedAt.Equal(fixedNow) {
			t.Errorf("recorded with freeze_now: %+v", k)
		}
		e := a.expect(postJSON(idPath("/api/v1/takedowns/%d/freeze", k.ID), tokOperator, ""), http.StatusConflict).errorBody(t)
		if e.Error != "conflict" || !strings.Contains(e.Detail, *k.Receipt) {
			t.Errorf("second freeze: %+v, want 409 naming receipt %s", e, *k.Receipt)
		}
		var cards cardPage
		a.expect(get("/api/v1/cards?public=true", tokViewer), http.StatusOK).decode(t, &cards)
		if cards.Total != 1 || len(cards.Items) != 1 || cards.Items[0].ID != w.cardGreen {
			t.Errorf("public cards after the takedown: %+v", cards)
		}
		var frozen cardDetailView
		a.expect(get(idPath("/api/v1/cards/%d", w.cardYellow), tokViewer), http.StatusOK).decode(t, &frozen)
		if frozen.TakedownID == nil || *frozen.TakedownID != k.ID || frozen.Public {
			t.Errorf("the frozen card: %+v", frozen)
		}

		for _, tc := range []struct{ body, field, want string }{
			{fmt.Sprintf(`{"site_id": %d, "scope": "urls", "urls": ["https://elsewhere.test/a.html"], "requester": "x"}`, w.provSite), "urls", "不在站点"},
			{fmt.Sprintf(`{"site_id": %d, "scope": "urls", "urls": [], "requester": "x"}`, w.provSite), "urls", "请至少填写一个页面网址"},
			{fmt.Sprintf(`{"site_id": %d, "scope": "site", "requester": " "}`, w.provSite), "requester", "请填写提出人"},
			{`{"site_id": 9999, "scope": "site", "requester": "x"}`, "site_id", "没有 ID 为 9999 的站点"},
		} {
			var body inputErrorBody
			a.expect(postJSON("/api/v1/takedowns", tokOperator, tc.body), http.StatusBadRequest).decode(t, &body)
			if len(body.Fields) != 1 || body.Fields[0].Field != tc.field || !strings.Contains(body.Fields[0].Message, tc.want) {
				t.Errorf("%s: %+v, want field %s with %q", tc.body, body, tc.field, tc.want)
			}
		}
		var all list[takedownView]
		a.expect(get("/api/v1/takedowns", tokViewer), http.StatusOK).decode(t, &all)
		if len(all.Items) != 1 {
			t.Errorf("refused requests were recorded: %+v", all)
		}
	})
}

// An open request is overdue once its 48 hours are up: not at 47 h 59 min
// after it arrived, and at 48 h 1 min. open=true lists it, open=false not.
func TestTakedownOverdueAPI(t *testing.T) {
	w, a := reviewAPI(t, storetest.SQLite(t))
	var k takedownView
	a.expect(postJSON("/api/v1/takedowns", tokOperator, fmt.Sprintf(`{"site_id": %d, "scope": "site", "requester": "国务院办公厅"}`, w.nateSite)),
		http.StatusCreated).decode(t, &k)
	for _, tc := range []struct {
		after   time.Duration
		overdue bool
	}{{47*time.Hour + 59*time.Minute, false}, {48*time.Hour + time.Minute, true}} {
		a.now = k.ReceivedAt.Add(tc.after)
		var got takedownView
		a.expect(get(idPath("/api/v1/takedowns/%d", k.ID), tokViewer), http.StatusOK).decode(t, &got)
		if got.Overdue != tc.overdue || !got.Open {
			t.Errorf("%v after receipt: overdue %v, want %v", tc.after, got.Overdue, tc.overdue)
		}
		var open list[takedownView]
		a.expect(get("/api/v1/takedowns?open=true", tokViewer), http.StatusOK).decode(t, &open)
		if len(open.Items) != 1 || open.Items[0].Overdue != tc.overdue {
			t.Errorf("%v after receipt: open list %+v", tc.after, open)
		}
	}
	var done list[takedownView]
	a.expect(get("/api/v1/takedowns?open=false", tokViewer), http.StatusOK).decode(t, &done)
	if len(done.Items) != 0 {
		t.Errorf("open=false lists an open request: %+v", done)
	}
}

// Cards page by cursor, newest first, to the last page; filters hold.
func TestCardListAPI(t *testing.T) {
	w, a := reviewAPI(t, storetest.SQLite(t))
	var first, second cardPage
	a.expect(get("/api/v1/cards?limit=1", tokViewer), http.StatusOK).decode(t, &first)
	if first.Total != 2 || len(first.Items) != 1 || first.Items[0].ID != w.cardYellow || first.NextCursor == nil {
		t.Fatalf("first page: %+v", first)
	}
	a.expect(get("/api/v1/cards?limit=1&cursor="+*first.NextCursor, tokViewer), http.StatusOK).decode(t, &second)
	if len(second.Items) != 1 || second.Items[0].ID != w.cardGreen || second.NextCursor != nil {
		t.Errorf("second page: %+v", second)
	}
	var green cardPage
	a.expect(get("/api/v1/cards?grade=green&q=%E4%BB%B7%E6%A0%BC", tokViewer), http.StatusOK).decode(t, &green)
	if green.Total != 1 || green.Items[0].ID != w.cardGreen {
		t.Errorf("grade=green&q=价格: %+v", green)
	}
	for _, bad := range []string{"public=false", "cursor=" + encodePageCursor(articleCursor, 1), "site_id=0"} {
		a.expect(get("/api/v1/cards?"+bad, tokViewer), http.StatusBadRequest)
	}
}
