package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus/corpustest"
	"zhizhi/internal/corpus/search"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// The corpus world's planted works.
const (
	hostileTitle = "关于医保报销的通知" + hostile
	// hostileText has a one- and a two-character query in it (水, 医保).
	hostileText = "为做好城乡居民医保报销工作，现将有关事项通知如下。" + hostile +
		"一、各地要保障饮用水安全，落实医保待遇。二、本通知自印发之日起施行，由市医疗保障局负责解释。三、请各单位认真贯彻执行。"
	copyTitle = "重复转载" + hostile
)

// corpusWorld is the simulated web's Lianzhou (public information) and
// reference sites crawled into st, plus two articles planted on Lianzhou:
// one with a hostile title and text, one that copies a crawled article's
// text under a hostile title (an exact duplicate candidate); all taken
// in, and a release built, verified and activated by an admin.
type corpusWorld struct {
	*world
	hostileWork, copyWork, copiedWork string
	version                           string
	article                           int64 // a ready Lianzhou article not yet taken in
}

func newCorpusWorld(t *testing.T, st *store.Store) *corpusWorld {
	t.Helper()
	ctx := context.Background()
	w := simWorld(t, st)
	corpustest.Crawl(t, w.web, "lianzhou", "gov_ref")
	tg, err := st.TargetByCode(ctx, "lianzhou_tzgg")
	if err != nil {
		t.Fatal(err)
	}
	var orig *model.Article
	for _, a := range readyOf(t, st, tg.ID) {
		if len([]rune(a.ContentText)) > 80 {
			orig = &a
			break
		}
	}
	if orig == nil {
		t.Fatal("no ready Lianzhou notice with a body")
	}
	plant := func(n int, title, text string) int64 {
		a := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, URL: fmt.Sprintf("http://www.lianzhou.gov.test/tzgg/planted/%d.html", n),
			Title: title, ChannelName: tg.ChannelName, ChannelPath: "通知公告", Publisher: "连州市医疗保障局",
			Status: model.StatusReady, PublishDate: "2026-03-02", ContentText: text, FetchedAt: time.Now().Add(-time.Hour)}
		if _, _, err := st.SaveArticle(ctx, a, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	hid := plant(1, hostileTitle, hostileText)
	cid := plant(2, copyTitle, orig.ContentText)
	cw := &corpusWorld{world: w}
	cw.version = corpustest.Release(t, w.corpus, "user:admin")
	cw.hostileWork = workOf(t, st, hid)
	cw.copyWork = workOf(t, st, cid)
	cw.copiedWork = workOf(t, st, orig.ID)
	cw.article = plant(3, "关于开展防汛演练的通知", strings.Repeat("各镇街要做好防汛准备，确保群众安全。", 5))
	return cw
}

func readyOf(t *testing.T, st *store.Store, target int64) []model.Article {
	t.Helper()
	var out []model.Article
	for _, a := range corpustestArticles(t, st) {
		if a.TargetID == target && a.Status == model.StatusReady {
			out = append(out, a)
		}
	}
	return out
}

func corpustestArticles(t *testing.T, st *store.Store) []model.Article {
	t.Helper()
	rows, _, err := st.ExportArticles(context.Background(), store.ExportFilter{Status: model.StatusReady, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func workOf(t *testing.T, st *store.Store, article int64) string {
	t.Helper()
	w, err := st.CorpusWorkByAlias(context.Background(), fmt.Sprintf("article:%d", article))
	if err != nil {
		t.Fatalf("the work of article %d: %v", article, err)
	}
	return w.ID
}

func (cw *corpusWorld) openCandidate(t *testing.T) store.CorpusCandidate {
	t.Helper()
	ks, err := cw.st.ListCorpusCandidates(context.Background(), store.CandidateOpen, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if (k.WorkA == cw.copyWork && k.WorkB == cw.copiedWork) || (k.WorkB == cw.copyWork && k.WorkA == cw.copiedWork) {
			return k
		}
	}
	t.Fatalf("no open candidate between %s and %s: %+v", cw.copyWork, cw.copiedWork, ks)
	return store.CorpusCandidate{}
}

func mustContain(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(body, s) {
			t.Errorf("%s lacks %q", what, s)
		}
	}
}

// Every corpus page answers a viewer with what a person reads on it, on
// both dialects; the search answers one- and two-character queries with
// exactly the works whose text holds them, highlighted.
func TestCorpusPagesShowWhatTheyAreFor(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		cw := newCorpusWorld(t, st)
		c := cw.login(t, "viewer")
		k := cw.openCandidate(t)
		for _, tc := range []struct {
			path string
			want []string
		}{
			{"/admin/corpus", []string{"摄取规则", "待判定的重复候选", "当前生效的发布", cw.version, "快照"}},
			{"/admin/corpus/works", []string{"暂不能发布的原因", "第 1 版", "正常"}},
			{"/admin/corpus/works?status=active&q=" + url.QueryEscape("医保报销"), []string{cw.hostileWork, "可发布"}},
			{"/admin/corpus/works?q=" + url.QueryEscape("重复转载"), []string{cw.copyWork, "有 1 个重复候选待人工判定"}},
			{"/admin/corpus/works/" + cw.hostileWork, []string{"溯源链", "来源", "抓取", "解析", "快照", "权利", "质量检查", "审核", "发布",
				"WARC 记录（响应）", "收入发布 " + cw.version, "来历", "摄取", "规范化", "用户 admin", "别名", "article:"}},
			{"/admin/corpus/candidates", []string{"系统从不自动合并作品", fmt.Sprintf("重复候选 #%d", k.ID), "正文相同", "两件作品的正文完全相同"}},
			{"/admin/corpus/releases", []string{cw.version, "当前生效", "已校验", "用户 admin"}},
			{"/admin/corpus/releases/" + cw.version, []string{"暂缓的作品", cw.copyWork, "来源权利为“仅供参考”"}},
			{"/admin/corpus/search", []string{"检索当前生效的发布", cw.version}},
		} {
			rec := cw.get(t, tc.path, c)
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s: status %d\n%.2000s", tc.path, rec.Code, rec.Body)
				continue
			}
			mustContain(t, "GET "+tc.path, rec.Body.String(), tc.want...)
		}
		// The viewer is offered no button that changes anything.
		for _, path := range []string{"/admin/corpus", "/admin/corpus/works/" + cw.hostileWork, "/admin/corpus/candidates", "/admin/corpus/releases"} {
			if body := cw.get(t, path, c).Body.String(); strings.Contains(body, `method="post" action="/admin/corpus`) {
				t.Errorf("GET %s offers a viewer a form that changes the corpus", path)
			}
		}

		// Search: one and two characters find exactly the works holding them.
		rel, err := cw.corpus.Active(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"水", "医保"} {
			want := 0
			for i := range rel.Entries {
				e := &rel.Entries[i]
				text, err := rel.Text(e)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{e.Title, text, e.DocNo} {
					if strings.Contains(search.Normalize(f), search.Normalize(q)) {
						want++
						break
					}
				}
			}
			if want == 0 {
				t.Fatalf("no work of the release holds %q: the test proves nothing", q)
			}
			rec := cw.get(t, "/admin/corpus/search?q="+url.QueryEscape(q), c)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("search %q: status %d\n%.2000s", q, rec.Code, body)
			}
			mustContain(t, "search "+q, body, fmt.Sprintf("共 %d 条结果", want), "<mark>"+q+"</mark>", "引用（GB/T 7714）", "下载 CSL-JSON", "下载 BibTeX")
		}
		rec := cw.get(t, "/admin/corpus/search?q="+url.QueryEscape("医保"), c)
		mustContain(t, "search 医保", rec.Body.String(), `href="/admin/corpus/works/`+cw.hostileWork+`"`,
			"连州市医疗保障局. 关于医保报销的通知", "/OL]. ")

		// A bad query is refused in Chinese.
		rec = cw.get(t, "/admin/corpus/search?q=x&from=2026-13-01", c)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "起始日期") {
			t.Errorf("a bad date: status %d\n%.1500s", rec.Code, rec.Body)
		}
		rec = cw.get(t, "/admin/corpus/search?q="+url.QueryEscape(strings.Repeat("长", 201)), c)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "查询过长") {
			t.Errorf("an overlong query: status %d\n%.1500s", rec.Code, rec.Body)
		}

		// Citations download from the active release.
		for format, want := range map[string]string{"csl-json": `"type"`, "bibtex": "@", "gbt7714": "/OL]. "} {
			rec := cw.get(t, "/admin/corpus/works/"+cw.hostileWork+"/citation?format="+format, c)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) ||
				!strings.Contains(rec.Header().Get("Content-Disposition"), cw.version) {
				t.Errorf("citation %s: status %d %q %q", format, rec.Code, rec.Header().Get("Content-Disposition"), rec.Body)
			}
		}
		if rec := cw.get(t, "/admin/corpus/works/"+cw.copyWork+"/citation?format=bibtex", c); rec.Code != http.StatusNotFound {
			t.Errorf("a held work's citation: status %d, want 404 (it is in no active release)", rec.Code)
		}
	})
}

// Without an active release the search page says so plainly.
func TestCorpusSearchWithoutRelease(t *testing.T) {
	w := sqliteWorld(t)
	rec := w.get(t, "/admin/corpus/search?q="+url.QueryEscape("水"), w.login(t, "viewer"))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "还没有生效的发布") {
		t.Errorf("status %d\n%.1500s", rec.Code, rec.Body)
	}
}

// Text that came from a hostile page reaches every corpus page as text.
func TestCorpusHostileTextIsEscaped(t *testing.T) {
	cw := newCorpusWorld(t, storetest.SQLite(t))
	c := cw.login(t, "operator")
	for _, path := range []string{"/admin/corpus/works", "/admin/corpus/works/" + cw.hostileWork, "/admin/corpus/works/" + cw.copyWork,
		"/admin/corpus/candidates", "/admin/corpus/releases/" + cw.version, "/admin/corpus/search?q=" + url.QueryEscape("医保"),
		"/admin/corpus/search?q=" + url.QueryEscape(hostile)} {
		rec := cw.get(t, path, c)
		body := rec.Body.String()
		if strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: hostile script reached the page unescaped", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("GET %s (status %d): the hostile text is not shown (escaped) at all; the test proves nothing", path, rec.Code)
		}
	}
}

// Every change the corpus pages offer is refused to a viewer (403) and to
// a request from another site (403, as serve mounts the console behind
// the cross-origin check), and changes nothing.
func TestCorpusWritesRefused(t *testing.T) {
	cw := newCorpusWorld(t, storetest.SQLite(t))
	ctx := context.Background()
	k := cw.openCandidate(t)
	viewer, op, admin := cw.login(t, "viewer"), cw.login(t, "operator"), cw.login(t, "admin")
	guarded := auth.CrossOrigin(cw.h)
	writes := []struct {
		path string
		form url.Values
	}{
		{"/admin/corpus/intake", url.Values{"mode": {"article"}, "article": {fmt.Sprint(cw.article)}}},
		{"/admin/corpus/rules", url.Values{"name": {"全部"}}},
		{"/admin/corpus/rules/run", nil},
		{"/admin/corpus/works/" + cw.hostileWork + "/status", url.Values{"status": {"quarantined"}, "reason": {"核查"}}},
		{fmt.Sprintf("/admin/corpus/candidates/%d/decide", k.ID), url.Values{"decision": {"same"}}},
		{"/admin/corpus/releases", nil},
		{"/admin/corpus/releases/" + cw.version + "/verify", nil},
		{"/admin/corpus/releases/" + cw.version + "/activate", nil},
		{"/admin/corpus/releases/rollback", nil},
		{fmt.Sprintf("/admin/articles/%d/corpus", cw.article), nil},
	}
	state := func() string {
		audit, err := cw.st.ListAudit(ctx, store.AuditFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		counts, err := cw.st.CorpusCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		act, _ := cw.st.ActiveCorpusRelease(ctx)
		rules, _ := cw.st.CorpusIntakeRules(ctx)
		return fmt.Sprintf("audit %d, works %v, candidates %d, releases %d, active %s, rules %d",
			len(audit), counts.Works, counts.OpenCandidates, counts.Releases, act.Version, len(rules))
	}
	before := state()
	for _, wr := range writes {
		if rec := cw.post(t, wr.path, viewer, wr.form); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
			t.Errorf("viewer POST %s: status %d, want 403", wr.path, rec.Code)
		}
		for _, c := range []*http.Cookie{op, admin} {
			req := httptest.NewRequest(http.MethodPost, wr.path, strings.NewReader(wr.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "http://evil.example")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.AddCookie(c)
			rec := httptest.NewRecorder()
			guarded.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden {
				t.Errorf("cross-site POST %s: status %d, want 403", wr.path, rec.Code)
			}
		}
	}
	if after := state(); after != before {
		t.Errorf("refused writes changed the corpus:\nbefore %s\nafter  %s", before, after)
	}
	// The same operator from the console's own pages gets through.
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/admin/articles/%d/corpus", cw.article), nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(op)
	rec := httptest.NewRecorder()
	guarded.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/admin/corpus/works/zw") {
		t.Errorf("same-origin intake: status %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
}

// Operators take articles in, write rules, decide candidates and
// quarantine works; each is in the work's provenance and the audit trail.
func TestCorpusOperatorWork(t *testing.T) {
	cw := newCorpusWorld(t, storetest.SQLite(t))
	ctx := context.Background()
	op := cw.login(t, "operator")

	// 收入语料库 on the article page, then the article shows its work.
	rec := cw.post(t, fmt.Sprintf("/admin/articles/%d/corpus", cw.article), op, nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("intake from the article page: status %d\n%s", rec.Code, rec.Body)
	}
	work := workOf(t, cw.st, cw.article)
	if loc := rec.Header().Get("Location"); loc != "/admin/corpus/works/"+work+"?intake=new" {
		t.Errorf("intake sent to %q", loc)
	}
	mustContain(t, "the new work", cw.get(t, rec.Header().Get("Location"), op).Body.String(), "已收入语料库：新作品", "关于开展防汛演练的通知")
	mustContain(t, "the article page", cw.get(t, fmt.Sprintf("/admin/articles/%d", cw.article), op).Body.String(),
		"已收入语料库", `href="/admin/corpus/works/`+work+`"`)
	// Again, from the corpus page: nothing new.
	rec = cw.post(t, "/admin/corpus/intake", op, url.Values{"mode": {"article"}, "article": {fmt.Sprint(cw.article)}})
	mustContain(t, "intake again", rec.Body.String(), "收入结果", "查看的文章</dt><dd>1 篇", "内容未变</dt><dd>1 篇")
	rec = cw.post(t, "/admin/corpus/intake", op, url.Values{"mode": {"target"}, "target": {"lianzhou_tzgg"}})
	mustContain(t, "intake of a target", rec.Body.String(), "采集目标 lianzhou_tzgg 的已就绪文章", "新作品</dt><dd>0 件")
	rec = cw.post(t, "/admin/corpus/intake", op, url.Values{"mode": {"target"}, "target": {"no_such_target"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "没有采集目标「no_such_target」") {
		t.Errorf("an unknown target: status %d", rec.Code)
	}
	rec = cw.post(t, "/admin/corpus/intake", op, url.Values{"mode": {"article"}, "article": {"abc"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "请填写文章编号") {
		t.Errorf("a bad article id: status %d", rec.Code)
	}
	// A rule, refused for an unknown target, then saved.
	rec = cw.post(t, "/admin/corpus/rules", op, url.Values{"name": {"连州通知"}, "targets": {"lianzhou_tzgg, nope"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "没有这些采集目标：nope") {
		t.Errorf("a rule naming an unknown target: status %d", rec.Code)
	}
	rec = cw.post(t, "/admin/corpus/rules", op, url.Values{"name": {"连州通知"}, "targets": {"lianzhou_tzgg"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("rule: status %d\n%s", rec.Code, rec.Body)
	}
	mustContain(t, "after the rule", cw.get(t, rec.Header().Get("Location"), op).Body.String(), "已保存摄取规则 #1「连州通知」", "<code>lianzhou_tzgg</code>")

	// Quarantine needs a reason; then the work is held, and let back.
	path := "/admin/corpus/works/" + cw.hostileWork + "/status"
	if rec := cw.post(t, path, op, url.Values{"status": {"quarantined"}, "reason": {"  "}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "请填写原因") {
		t.Errorf("quarantine without a reason: status %d", rec.Code)
	}
	if rec := cw.post(t, path, op, url.Values{"status": {"quarantined"}, "reason": {"来源页面存疑，待核实"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("quarantine: status %d\n%s", rec.Code, rec.Body)
	}
	body := cw.get(t, "/admin/corpus/works/"+cw.hostileWork, op).Body.String()
	mustContain(t, "the quarantined work", body, "已隔离：来源页面存疑，待核实", "状态：正常 → 已隔离；原因：来源页面存疑，待核实", "解除隔离")
	if rec := cw.post(t, path, op, url.Values{"status": {"quarantined"}, "reason": {"再次"}}); rec.Code != http.StatusConflict {
		t.Errorf("quarantining a quarantined work: status %d, want 409", rec.Code)
	}
	if rec := cw.post(t, path, op, url.Values{"status": {"active"}, "reason": {"已核实"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("let back: status %d", rec.Code)
	}
	entries, err := cw.st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_work", ObjectID: cw.hostileWork})
	if err != nil || len(entries) != 2 || entries[0].Actor != "user:operator" {
		t.Errorf("audit of the quarantine: %+v %v", entries, err)
	}

	// A candidate decided by a person; the system merged nothing.
	k := cw.openCandidate(t)
	rec = cw.post(t, fmt.Sprintf("/admin/corpus/candidates/%d/decide", k.ID), op, url.Values{"decision": {"different"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("decide: status %d\n%s", rec.Code, rec.Body)
	}
	mustContain(t, "after the decision", cw.get(t, rec.Header().Get("Location"), op).Body.String(),
		fmt.Sprintf("重复候选 #%d 为「不同作品」", k.ID))
	if rec := cw.post(t, fmt.Sprintf("/admin/corpus/candidates/%d/decide", k.ID), op, url.Values{"decision": {"same"}}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "无需重复判定") {
		t.Errorf("deciding twice: status %d", rec.Code)
	}
	merged, byPeople, err := cw.st.CountCorpusMerges(ctx)
	if err != nil || merged != 0 || byPeople != 0 {
		t.Errorf("merges %d by people %d (%v), want none: the decision was 不同作品", merged, byPeople, err)
	}
	mustContain(t, "the audit page", cw.get(t, "/admin/audit", op).Body.String(), "重复候选·判定", "语料作品·更改状态", "语料库·收入文章", "摄取规则·新建")
}

// Building and verifying are an operator's; activating and rolling back
// an admin's alone, audited. A tampered release fails its verification
// with every problem said in Chinese, and cannot be activated.
func TestReleaseActivationIsAdminOnly(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		cw := newCorpusWorld(t, st)
		ctx := context.Background()
		op, admin := cw.login(t, "operator"), cw.login(t, "admin")

		rec := cw.post(t, "/admin/corpus/releases", op, nil)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("build: status %d\n%s", rec.Code, rec.Body)
		}
		loc := rec.Header().Get("Location")
		v2 := strings.TrimSuffix(strings.TrimPrefix(loc, "/admin/corpus/releases/"), "?built=1")
		mustContain(t, "the built release", cw.get(t, loc, op).Body.String(), "已生成发布 "+v2, "待校验")
		rec = cw.post(t, "/admin/corpus/releases/"+v2+"/verify", op, nil)
		mustContain(t, "verify", rec.Body.String(), "校验通过", "已校验")

		for _, path := range []string{"/admin/corpus/releases/" + v2 + "/activate", "/admin/corpus/releases/rollback"} {
			if rec := cw.post(t, path, op, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "管理员") {
				t.Errorf("operator POST %s: status %d, want 403", path, rec.Code)
			}
		}
		if act, _ := st.ActiveCorpusRelease(ctx); act.Version != cw.version {
			t.Fatalf("after refused activations the active release is %s", act.Version)
		}
		rec = cw.post(t, "/admin/corpus/releases/"+v2+"/activate", admin, nil)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("admin activate: status %d\n%s", rec.Code, rec.Body)
		}
		mustContain(t, "after activation", cw.get(t, rec.Header().Get("Location"), admin).Body.String(), "已启用发布 "+v2, "回滚到 "+cw.version)
		if act, _ := st.ActiveCorpusRelease(ctx); act.Version != v2 {
			t.Fatalf("active %s after activating %s", act.Version, v2)
		}
		rec = cw.post(t, "/admin/corpus/releases/rollback", admin, nil)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("admin rollback: status %d\n%s", rec.Code, rec.Body)
		}
		mustContain(t, "after rollback", cw.get(t, rec.Header().Get("Location"), admin).Body.String(), "已回滚：当前生效的发布是 "+cw.version)
		if act, _ := st.ActiveCorpusRelease(ctx); act.Version != cw.version {
			t.Fatalf("active %s after rolling back to %s", act.Version, cw.version)
		}
		for action, version := range map[string]string{"corpus.release.activate": v2, "corpus.release.rollback": cw.version} {
			es, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_release", ObjectID: version})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range es {
				found = found || (e.Action == action && e.Actor == "user:admin")
			}
			if !found {
				t.Errorf("no %s of %s by user:admin in the audit trail: %+v", action, version, es)
			}
		}
		mustContain(t, "the audit page", cw.get(t, "/admin/audit", admin).Body.String(), "语料发布·启用", "语料发布·回滚", "语料发布·生成", "语料发布·校验")

		// A third release, tampered before its verification.
		rec = cw.post(t, "/admin/corpus/releases", op, nil)
		v3 := strings.TrimSuffix(strings.TrimPrefix(rec.Header().Get("Location"), "/admin/corpus/releases/"), "?built=1")
		shard := filepath.Join(cw.corpus.ReleasesDir(), v3, "text", "0000.jsonl")
		b, err := os.ReadFile(shard)
		if err != nil {
			t.Fatal(err)
		}
		// One character changed for another of the same size: only the hash tells.
		tampered := strings.Replace(string(b), "通知", "通告", 1)
		if tampered == string(b) {
			t.Fatal("the shard has no 通知 to change")
		}
		if err := os.WriteFile(shard, []byte(tampered), 0o644); err != nil {
			t.Fatal(err)
		}
		rec = cw.post(t, "/admin/corpus/releases/"+v3+"/verify", op, nil)
		body := rec.Body.String()
		mustContain(t, "the failed verification", body, "校验未通过", "校验失败", "SHA-256 与清单不符：文件内容在生成后被改动过", "text/0000.jsonl")
		loud, _ := visibleWords(t, body)
		for _, wd := range loud {
			if !leakAllowed[wd] {
				t.Errorf("the failed verification shows English: %q", wd)
			}
		}
		if rec := cw.post(t, "/admin/corpus/releases/"+v3+"/activate", admin, nil); rec.Code != http.StatusConflict ||
			!strings.Contains(rec.Body.String(), "只有校验通过的发布才能启用") {
			t.Errorf("activating a failed release: status %d", rec.Code)
		}
		// The failed release's page keeps its problems.
		mustContain(t, "the failed release's page", cw.get(t, "/admin/corpus/releases/"+v3, op).Body.String(), "校验发现的问题", "SHA-256 与清单不符")
	})
}

// The console without the corpus says so rather than failing.
func TestCorpusPagesWithoutService(t *testing.T) {
	w := sqliteWorld(t)
	h, err := New(Options{Store: w.st, Sessions: w.sessions, Jobs: w.q, ConfigDir: w.cfgDir, Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	rec := w.get(t, "/admin/corpus", w.login(t, "viewer"))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "语料库未启用") {
		t.Errorf("status %d", rec.Code)
	}
}

func TestHighlightNeverTrustsOffsets(t *testing.T) {
	s := "医保报销<b>"
	for _, tc := range []struct {
		name  string
		spans [][2]int
		want  string
	}{
		{"good", [][2]int{{0, 6}}, "[医保]报销<b>"},
		{"inside a character", [][2]int{{1, 6}}, "医保报销<b>"},
		{"past the end", [][2]int{{0, 99}}, "医保报销<b>"},
		{"backwards", [][2]int{{6, 3}}, "医保报销<b>"},
		{"overlapping", [][2]int{{0, 6}, {3, 9}}, "[医保]报销<b>"},
	} {
		var b strings.Builder
		for _, sg := range highlight(s, tc.spans) {
			if sg.Mark {
				b.WriteString("[" + sg.Text + "]")
			} else {
				b.WriteString(sg.Text)
			}
		}
		if b.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}
