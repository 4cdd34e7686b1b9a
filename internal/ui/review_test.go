package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/review/reviewtest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// reviewWorld is the console's world with a card grader (nil for none),
// the store's clock following the world's.
func reviewWorld(t *testing.T, st *store.Store, grade CardGrader) *world {
	t.Helper()
	w := newWorld(t, st)
	st.Now = func() time.Time { return w.now }
	h, err := New(Options{Store: st, Sessions: w.sessions, Jobs: w.q, ConfigDir: w.cfgDir, Corpus: w.corpus,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now }, Cards: grade})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w
}

// The anchors of the yellow card: it covers three of the four.
var yellowAnchors = []model.CardAnchor{
	{Text: "2026年3月5日", Kind: "date"}, {Text: "清教〔2026〕2号", Kind: "doc_no"},
	{Text: "清远市教育局", Kind: "org"}, {Text: "1200名", Kind: "number"},
}

const (
	cardYellow  = "关于做好2026年春季招生工作的通知"
	cardGreen   = "发改局价格监测通知"
	cardRed     = "市政府工作报告全文"
	cardHostile = "hostile-card"
)

// seedCards stores an article with a card of each grade on the Qingyuan
// portal, and one whose title and summary came from a hostile page;
// it returns the card ids by title.
func seedCards(t *testing.T, w *world) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	tg, err := w.st.TargetByCode(ctx, "qingyuan_qyfgw_14011")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for i, c := range []struct {
		title, summary, grade string
		sigma                 float64
		anchors               []model.CardAnchor
	}{
		{cardYellow, "2026年3月5日，清远市教育局印发清教〔2026〕2号通知，部署春季招生工作。", model.GradeYellow, 0.75, yellowAnchors},
		{cardGreen, "3月价格总体平稳。", model.GradeGreen, 1, []model.CardAnchor{{Text: "3月", Kind: "date"}}},
		{cardRed, "报告回顾了过去一年的工作。", model.GradeRed, 0.2, yellowAnchors},
		{cardHostile, "摘要" + hostile, model.GradeYellow, 0.75, []model.CardAnchor{{Text: "锚点" + hostile, Kind: "term"}}},
	} {
		title := c.title
		if title == cardHostile {
			title = "标题" + hostile
		}
		u := fmt.Sprintf("http://www.qingyuan.gov.test/card/%d.html", i)
		pub := w.now.Add(-time.Duration(i+1) * time.Hour)
		a := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, URL: u, Title: title, Status: model.StatusReady,
			ContentText: "正文。" + c.summary, FetchedAt: w.now.Add(-time.Hour), PublishTime: &pub,
			Card: &model.SummaryCard{SiteID: tg.SiteID, Title: title, AutoSummary: c.summary, SourceURL: u, PublishTime: &pub,
				Simhash: 0x0123456789abcdef, SourceDNA: fmt.Sprintf("dna-%d", i), FetchedAt: w.now.Add(-time.Hour),
				Anchors: c.anchors, Covered: int(c.sigma * float64(len(c.anchors))), Sigma: c.sigma, Relevance: 7, Grade: c.grade}}
		id, _, err := w.st.SaveArticle(ctx, a, nil, 0, store.FrontierMark{})
		if err != nil {
			t.Fatalf("article %s: %v", c.title, err)
		}
		card, err := w.st.CardByArticle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ids[c.title] = card.ID
	}
	return ids
}

func siteID(t *testing.T, w *world, code string) string {
	t.Helper()
	s, err := w.st.SiteByCode(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(s.ID)
}

func takedowns(t *testing.T, w *world) []model.Takedown {
	t.Helper()
	list, err := w.st.ListTakedowns(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// takedownRowOf returns the list page's table row of a request.
func takedownRowOf(body string, id int64) string {
	i := strings.Index(body, fmt.Sprintf(`id="takedown-%d"`, id))
	if i < 0 {
		return ""
	}
	i = strings.LastIndex(body[:i], "<tr")
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}

// A takedown is recorded by an operator with a site, a scope and who asked;
// page addresses must be the site's own; carrying it out freezes the cards
// (hidden, kept), gives a receipt, and is done once. A viewer reads only.
func TestTakedownRecordAndExecute(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := reviewWorld(t, st, reviewtest.Grader)
		ids := seedCards(t, w)
		ctx := context.Background()
		qy := siteID(t, w, "qingyuan")
		form := url.Values{"site_id": {qy}, "scope": {"urls"}, "requester": {"清远市教育局办公室"},
			"contact": {"0763-1234567"}, "reason": {"招生通知已撤回"},
			"urls": {"http://www.qingyuan.gov.test/card/0.html\r\n\r\nhttp://www.qingyuan.gov.test/card/0.html#top\n"}}

		viewer := w.login(t, "viewer")
		if rec := w.post(t, "/admin/takedowns", viewer, form); rec.Code != http.StatusForbidden {
			t.Errorf("viewer records a takedown: status %d, want 403", rec.Code)
		}
		if body := w.get(t, "/admin/takedowns", viewer).Body.String(); strings.Contains(body, `action="/admin/takedowns"`) {
			t.Errorf("viewer: the takedown page offers the record form")
		}
		if len(takedowns(t, w)) != 0 {
			t.Fatal("a refused record left a takedown")
		}

		op := w.login(t, "operator")
		for _, tc := range []struct {
			name string
			edit func(v url.Values)
			want string
		}{
			{"another site's page", func(v url.Values) { v.Set("urls", "http://www.gd.gov.test/a.html") },
				"第 1 个网址「http://www.gd.gov.test/a.html」不在站点「清远市人民政府门户网站」（www.qingyuan.gov.test）上"},
			{"not a web address", func(v url.Values) {
				v.Set("urls", "http://www.qingyuan.gov.test/card/0.html\nftp://www.qingyuan.gov.test/x")
			}, "第 2 个网址「ftp://www.qingyuan.gov.test/x」不是完整网址：请以 http:// 或 https:// 开头"},
			{"a relative address", func(v url.Values) { v.Set("urls", "/card/0.html") }, "不是完整网址"},
			{"no pages", func(v url.Values) { v.Set("urls", " \n ") }, "请至少填写一个页面网址"},
			{"pages with the whole site", func(v url.Values) { v.Set("scope", "site") }, "整站下架不需填写页面网址"},
			{"no scope", func(v url.Values) { v.Del("scope") }, "请选择下架范围"},
			{"no requester", func(v url.Values) { v.Set("requester", "  ") }, "请填写提出人（单位）"},
			{"no site", func(v url.Values) { v.Set("site_id", "") }, "请选择提出请求的站点"},
			{"unknown site", func(v url.Values) { v.Set("site_id", "9999") }, "没有 ID 为 9999 的站点"},
			{"long reason", func(v url.Values) { v.Set("reason", strings.Repeat("长", 2001)) }, "理由过长，请控制在 2000 字以内"},
		} {
			v := url.Values{}
			for k, vals := range form {
				v[k] = append([]string(nil), vals...)
			}
			tc.edit(v)
			rec := w.post(t, "/admin/takedowns", op, v)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), htmlEscape(tc.want)) {
				t.Errorf("%s: status %d, want 400 with %q", tc.name, rec.Code, tc.want)
			}
			if !strings.Contains(rec.Body.String(), "清远市教育局办公室") && tc.name != "no requester" {
				t.Errorf("%s: the refused form lost what was typed", tc.name)
			}
		}
		if n := len(takedowns(t, w)); n != 0 {
			t.Fatalf("refused records left %d takedowns", n)
		}

		rec := w.post(t, "/admin/takedowns", op, form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("operator records: status %d\n%s", rec.Code, rec.Body)
		}
		list := takedowns(t, w)
		if len(list) != 1 {
			t.Fatalf("takedowns after a record: %d", len(list))
		}
		k := list[0]
		if k.Scope != model.TakedownURLs || len(k.URLs) != 1 || k.URLs[0] != "http://www.qingyuan.gov.test/card/0.html" ||
			k.RecordedBy != "user:operator" || !k.ReceivedAt.Equal(w.now.UTC().Truncate(time.Microsecond)) {
			t.Errorf("recorded %+v", k)
		}
		page := w.get(t, rec.Header().Get("Location"), op).Body.String()
		if !strings.Contains(page, "已登记下架请求") || !strings.Contains(page, "执行下架") {
			t.Errorf("the request's page does not confirm the record or offer 执行下架")
		}
		if card, _ := st.CardByID(ctx, ids[cardYellow]); card.TakedownID != nil {
			t.Fatal("recording froze the card; only executing may")
		}

		path := fmt.Sprintf("/admin/takedowns/%d/freeze", k.ID)
		if rec := w.post(t, path, viewer, nil); rec.Code != http.StatusForbidden {
			t.Errorf("viewer executes: status %d, want 403", rec.Code)
		}
		if body := w.get(t, fmt.Sprintf("/admin/takedowns/%d", k.ID), viewer).Body.String(); strings.Contains(body, "/freeze\"") {
			t.Errorf("viewer: the request's page offers 执行下架")
		}
		if body := w.get(t, "/admin/takedowns", viewer).Body.String(); strings.Contains(body, "/freeze\"") {
			t.Errorf("viewer: the list offers 执行下架")
		}

		rec = w.post(t, path, op, nil)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("operator executes: status %d\n%s", rec.Code, rec.Body)
		}
		receipt := w.get(t, rec.Header().Get("Location"), op).Body.String()
		done, err := st.TakedownByID(ctx, k.ID)
		if err != nil || done.Open() || done.Receipt == "" {
			t.Fatalf("after execute: %+v %v", done, err)
		}
		for _, s := range []string{"已执行下架：冻结 1 张摘要卡", "下架回执", done.Receipt, "清远市人民政府门户网站", "指定页面",
			"http://www.qingyuan.gov.test/card/0.html", "清远市教育局办公室", "0763-1234567", "招生通知已撤回",
			`<dd class="cards-frozen">1 张</dd>`, "user:operator", "冻结而非删除", "收到后 48 小时"} {
			if !strings.Contains(receipt, s) {
				t.Errorf("the receipt lacks %q", s)
			}
		}
		card, err := st.CardByID(ctx, ids[cardYellow])
		if err != nil || card.TakedownID == nil || *card.TakedownID != k.ID {
			t.Errorf("the named card is not frozen (kept, hidden): %+v %v", card, err)
		}
		if other, _ := st.CardByID(ctx, ids[cardGreen]); other.TakedownID != nil {
			t.Errorf("a card the request does not name was frozen")
		}
		if page := w.get(t, "/admin/takedowns", viewer).Body.String(); !strings.Contains(takedownRowOf(page, k.ID), done.Receipt) {
			t.Errorf("the list does not show the carried-out request with its receipt")
		}

		// A second execute changes nothing and says so politely.
		rec = w.post(t, path, op, nil)
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "无需重复执行") ||
			!strings.Contains(rec.Body.String(), done.Receipt) {
			t.Errorf("second execute: status %d, want 409 naming the receipt and 无需重复执行", rec.Code)
		}
		again, _ := st.TakedownByID(ctx, k.ID)
		if again.Receipt != done.Receipt || again.CardsFrozen != 1 {
			t.Errorf("a second execute changed the request: %+v", again)
		}
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "takedown", ObjectID: fmt.Sprint(k.ID)})
		if err != nil || len(entries) != 2 {
			t.Fatalf("audit of the takedown: %+v %v; want record and freeze", entries, err)
		}
		for _, e := range entries {
			if e.Actor != "user:operator" {
				t.Errorf("audit entry by %q, want user:operator", e.Actor)
			}
		}
		if body := w.get(t, "/admin/takedowns/"+fmt.Sprint(k.ID)+"?recorded=1", op).Body.String(); strings.Contains(body, "已登记下架请求") {
			t.Errorf("a crafted link makes a carried-out request's page claim it was just recorded")
		}
		if rec := w.get(t, "/admin/takedowns/9999", op); rec.Code != http.StatusNotFound {
			t.Errorf("unknown takedown: status %d, want 404", rec.Code)
		}
		if rec := w.post(t, "/admin/takedowns/9999/freeze", op, nil); rec.Code != http.StatusNotFound {
			t.Errorf("executing an unknown takedown: status %d, want 404", rec.Code)
		}
	})
}

// 立即执行 records the request and carries it out in one go; a whole-site
// request freezes every card of the site.
func TestTakedownFreezeNow(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	seedCards(t, w)
	op := w.login(t, "operator")
	rec := w.post(t, "/admin/takedowns", op, url.Values{"site_id": {siteID(t, w, "qingyuan")}, "scope": {"site"},
		"requester": {"清远市政务服务数据管理局"}, "freeze_now": {"1"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("record with 立即执行: status %d\n%s", rec.Code, rec.Body)
	}
	list := takedowns(t, w)
	if len(list) != 1 || list[0].Open() || list[0].CardsFrozen != 4 || list[0].FrozenBy != "user:operator" {
		t.Fatalf("after 立即执行: %+v; want carried out, 4 cards frozen", list)
	}
	receipt := w.get(t, rec.Header().Get("Location"), op).Body.String()
	for _, s := range []string{"已执行下架：冻结 4 张摘要卡", list[0].Receipt, "整站", "今后采集的新摘要卡也将自动冻结"} {
		if !strings.Contains(receipt, s) {
			t.Errorf("the receipt lacks %q", s)
		}
	}
	if _, n, _ := w.st.ListCards(context.Background(), store.CardQuery{Public: true}); n != 0 {
		t.Errorf("%d cards still public after the whole site was taken down", n)
	}
}

// An open request is drawn red once its 48 hours are up: not at 47 h 59
// min after it arrived, and at 48 h 1 min.
func TestTakedownOverdueIsRed(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	op := w.login(t, "operator")
	if rec := w.post(t, "/admin/takedowns", op, url.Values{"site_id": {siteID(t, w, "lianzhou")}, "scope": {"site"},
		"requester": {"连州市人民政府办公室"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("record: status %d\n%s", rec.Code, rec.Body)
	}
	k := takedowns(t, w)[0]
	received := k.ReceivedAt // as stored: the deadline is counted from it
	for _, tc := range []struct {
		after   time.Duration
		overdue bool
		left    string
	}{
		{47*time.Hour + 59*time.Minute, false, "剩余 1 分钟"},
		{48*time.Hour + time.Minute, true, "已超期 1 分钟"},
	} {
		w.now = received.Add(tc.after)
		body := w.get(t, "/admin/takedowns", op).Body.String()
		row := takedownRowOf(body, k.ID)
		if row == "" {
			t.Fatalf("%v after receipt: the open request is not listed", tc.after)
		}
		red := strings.Contains(row, `class="takedown-overdue"`) && strings.Contains(row, "badge red overdue")
		if red != tc.overdue {
			t.Errorf("%v after receipt: drawn red %v, want %v\n%s", tc.after, red, tc.overdue, row)
		}
		if !strings.Contains(row, tc.left) {
			t.Errorf("%v after receipt: row lacks %q\n%s", tc.after, tc.left, row)
		}
		if page := w.get(t, fmt.Sprintf("/admin/takedowns/%d", k.ID), op).Body.String(); strings.Contains(page, "badge red overdue") != tc.overdue {
			t.Errorf("%v after receipt: the request's own page drawn red %v, want %v", tc.after, !tc.overdue, tc.overdue)
		}
	}
}

// The review list shows the yellow cards by default, newest first; other
// grades and sites by filter.
func TestCardReviewList(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	seedCards(t, w)
	c := w.login(t, "viewer")
	body := w.get(t, "/admin/cards", c).Body.String()
	if !strings.Contains(body, cardYellow) || strings.Contains(body, cardGreen) || strings.Contains(body, cardRed) {
		t.Errorf("the default list is not the yellow cards")
	}
	// A card is yellow for its σ or for straying from its source: the
	// legend says both.
	if !strings.Contains(body, "σ 虽够但偏离度超过 20") || strings.Contains(body, "simhash") || strings.Contains(body, "汉明距离") {
		t.Errorf("the card legend does not explain yellow by both σ and how far the summary strays, in words")
	}
	if i, j := strings.Index(body, cardYellow), strings.Index(body, "标题&lt;script"); i < 0 || j < 0 || i > j {
		t.Errorf("yellow cards not newest first (the newer at %d, the older at %d)", i, j)
	}
	if body := w.get(t, "/admin/cards?grade=green", c).Body.String(); !strings.Contains(body, cardGreen) || strings.Contains(body, cardYellow) {
		t.Errorf("grade=green does not list only the green card")
	}
	if body := w.get(t, "/admin/cards?grade=all", c).Body.String(); !strings.Contains(body, cardRed) || !strings.Contains(body, cardGreen) {
		t.Errorf("grade=all does not list every card")
	}
	if body := w.get(t, "/admin/cards?grade=all&site=lianzhou", c).Body.String(); strings.Contains(body, cardGreen) {
		t.Errorf("the site filter lets another site's cards through")
	}
	for _, bad := range []string{"grade=purple", "site=nosuch", "page=0", "page=x"} {
		if rec := w.get(t, "/admin/cards?"+bad, c); rec.Code != http.StatusBadRequest {
			t.Errorf("?%s: status %d, want 400", bad, rec.Code)
		}
	}
}

// A rewrite is saved only when it grades green; a yellow one is refused
// with its σ and the anchors it misses named; an over-long one with the
// grader's own message. A viewer cannot rewrite.
func TestCardRewrite(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := reviewWorld(t, st, reviewtest.Grader)
		ids := seedCards(t, w)
		ctx := context.Background()
		id := ids[cardYellow]
		path := fmt.Sprintf("/admin/cards/%d", id)

		viewer := w.login(t, "viewer")
		page := w.get(t, path, viewer).Body.String()
		for _, s := range []string{cardYellow, "http://www.qingyuan.gov.test/card/0.html", "机器摘录", "部署春季招生工作",
			"0.75", "覆盖 3/4 个核心锚点", "偏离度</dt><dd>7/64", `<span class="chip missing-anchor">1200名</span>`} {
			if !strings.Contains(page, s) {
				t.Errorf("the card page lacks %q", s)
			}
		}
		if strings.Contains(page, "/rewrite\"") {
			t.Errorf("viewer: the card page offers the rewrite form")
		}
		green := "2026年3月5日，清远市教育局印发清教〔2026〕2号通知，春季计划招生1200名。"
		if rec := w.post(t, path+"/rewrite", viewer, url.Values{"summary": {green}}); rec.Code != http.StatusForbidden {
			t.Errorf("viewer rewrites: status %d, want 403", rec.Code)
		}

		op := w.login(t, "operator")
		yellow := "清远市教育局印发清教〔2026〕2号通知，春季计划招生1200名。"
		rec := w.post(t, path+"/rewrite", op, url.Values{"summary": {yellow}})
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("a yellow rewrite: status %d, want 422", rec.Code)
		}
		for _, s := range []string{"改写未保存", "黄 · 待人工改写", "σ = 0.75", "覆盖 3/4 个核心锚点", "仍缺少：「2026年3月5日」", yellow} {
			if !strings.Contains(body, htmlEscape(s)) {
				t.Errorf("the refusal of a yellow rewrite lacks %q", s)
			}
		}
		long := green + strings.Repeat("补充说明。", 20)
		rec = w.post(t, path+"/rewrite", op, url.Values{"summary": {long}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), fmt.Sprintf("超过本篇上限 %d 字", reviewtest.Limit)) {
			t.Errorf("an over-long rewrite: status %d, want 400 with the grader's message", rec.Code)
		}
		if rec := w.post(t, path+"/rewrite", op, url.Values{"summary": {"  \r\n "}}); rec.Code != http.StatusBadRequest {
			t.Errorf("an empty rewrite: status %d, want 400", rec.Code)
		}
		card, _ := st.CardByID(ctx, id)
		if card.RewrittenBy != "" || card.Grade != model.GradeYellow {
			t.Fatalf("a refused rewrite changed the card: %+v", card)
		}
		if entries, _ := st.ListAudit(ctx, store.AuditFilter{ObjectType: "card"}); len(entries) != 0 {
			t.Fatalf("a refused rewrite was audited: %+v", entries)
		}

		rec = w.post(t, path+"/rewrite", op, url.Values{"summary": {green + "\r\n"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("a green rewrite: status %d\n%s", rec.Code, rec.Body)
		}
		card, _ = st.CardByID(ctx, id)
		if card.Summary != green || card.Grade != model.GradeGreen || card.Sigma != 1 || card.Covered != 4 ||
			card.RewrittenBy != "user:operator" || card.AutoSummary == green {
			t.Errorf("after a green rewrite: %+v", card)
		}
		entries, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "card", ObjectID: fmt.Sprint(id)})
		if err != nil || len(entries) != 1 || entries[0].Actor != "user:operator" || entries[0].Action != "card.rewrite" {
			t.Errorf("audit of the rewrite: %+v %v", entries, err)
		}
		page = w.get(t, rec.Header().Get("Location"), op).Body.String()
		if !strings.Contains(page, "改写已保存并记入审计日志") || !strings.Contains(page, "当前摘要（人工改写）") {
			t.Errorf("the card page does not confirm the saved rewrite")
		}
		if page := w.get(t, fmt.Sprintf("/admin/cards/%d?saved=1", ids[cardRed]), op).Body.String(); strings.Contains(page, "改写已保存") {
			t.Errorf("a crafted link makes a card page claim a rewrite that did not happen")
		}
		if rec := w.post(t, "/admin/cards/99999/rewrite", op, url.Values{"summary": {green}}); rec.Code != http.StatusNotFound {
			t.Errorf("rewriting an unknown card: status %d, want 404", rec.Code)
		}
	})
}

// Without a grader the form is there but disabled, and a post is refused.
func TestCardRewriteWithoutGrader(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), nil)
	ids := seedCards(t, w)
	op := w.login(t, "operator")
	path := fmt.Sprintf("/admin/cards/%d", ids[cardYellow])
	page := w.get(t, path, op).Body.String()
	if !strings.Contains(page, "服务器未配置摘要评分") || !strings.Contains(page, `aria-label="改写后的摘要" disabled`) {
		t.Errorf("without a grader the rewrite form is not shown disabled with a note")
	}
	if rec := w.post(t, path+"/rewrite", op, url.Values{"summary": {"任何文字"}}); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("rewrite without a grader: status %d, want 503", rec.Code)
	}
	if card, _ := w.st.CardByID(context.Background(), ids[cardYellow]); card.RewrittenBy != "" {
		t.Errorf("a rewrite was saved without a grader")
	}
}

// A frozen card is not rewritten.
func TestFrozenCardIsNotRewritten(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	ids := seedCards(t, w)
	ctx := context.Background()
	qy, _ := w.st.SiteByCode(ctx, "qingyuan")
	k := &model.Takedown{SiteID: qy.ID, Scope: model.TakedownSite, Requester: "清远市政府办", RecordedBy: "user:operator"}
	if err := w.st.RecordTakedown(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.FreezeTakedown(ctx, k.ID, "user:operator"); err != nil {
		t.Fatal(err)
	}
	op := w.login(t, "operator")
	path := fmt.Sprintf("/admin/cards/%d", ids[cardYellow])
	rec := w.post(t, path+"/rewrite", op, url.Values{"summary": {"2026年3月5日 清教〔2026〕2号 清远市教育局 1200名"}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "已应源站请求下架") {
		t.Errorf("rewriting a frozen card: status %d, want 409", rec.Code)
	}
}

// Text a requester or a hostile page brought in is shown as text.
func TestHostileReviewTextIsEscaped(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	ids := seedCards(t, w)
	op := w.login(t, "operator")
	rec := w.post(t, "/admin/takedowns", op, url.Values{"site_id": {siteID(t, w, "qingyuan")}, "scope": {"urls"},
		"requester": {"单位" + hostile}, "contact": {hostileAttr}, "reason": {"理由" + hostile},
		"urls": {"http://www.qingyuan.gov.test/card/3.html?x=" + hostile}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("record: status %d\n%s", rec.Code, rec.Body)
	}
	k := takedowns(t, w)[0]
	// The refused form gives hostile text back too.
	refused := w.post(t, "/admin/takedowns", op, url.Values{"site_id": {"x"}, "scope": {"urls"}, "requester": {hostile},
		"reason": {hostile}, "urls": {"http://evil.test/" + hostile}})
	if refused.Code != http.StatusBadRequest {
		t.Fatalf("refused record: status %d", refused.Code)
	}
	frozen := w.post(t, fmt.Sprintf("/admin/takedowns/%d/freeze", k.ID), op, nil)
	pages := map[string]string{"refused form": refused.Body.String()}
	for _, path := range []string{"/admin/takedowns", fmt.Sprintf("/admin/takedowns/%d", k.ID), frozen.Header().Get("Location"),
		"/admin/cards", fmt.Sprintf("/admin/cards/%d", ids[cardHostile])} {
		pages[path] = w.get(t, path, op).Body.String()
	}
	hostileRewrite := w.post(t, fmt.Sprintf("/admin/cards/%d/rewrite", ids[cardYellow]), op,
		url.Values{"summary": {"2026年3月5日" + hostile}})
	pages["refused rewrite"] = hostileRewrite.Body.String()
	for name, body := range pages {
		if strings.Contains(body, "<script>alert") || strings.Contains(body, `<img src=x`) {
			t.Errorf("%s: hostile markup reached the page unescaped", name)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("%s: the hostile text is not shown (escaped) at all; the test proves nothing", name)
		}
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
