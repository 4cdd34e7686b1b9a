package ui

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// Titles of the articles seedArticles stores.
const (
	artFGW      = "发改局规范性文件"        // dept 37, ready, 2026-03-01, one attachment
	artJYJ      = "教育局招生通知"         // dept 41, raw, 2026-04-10
	artProvince = "省政府营商环境文件"       // provincial reference site, no department, exported
	artCity     = "市政府工作报告全文"       // local site, city level (no department)
	artPrice    = "发改局价格监测通知"       // dept 37 too, another channel
	artHostile  = "hostile-article" // planted by seedHostile
)

// hostileAttr is an attribute value that tries to leave its HTML attribute.
const hostileAttr = `"><img src=x onerror=alert(1)>`

// seedArticles stores five articles that between them differ in every
// filter of the article list, and returns their ids by title.
func seedArticles(t *testing.T, w *world) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	type art struct {
		title, target, channel, publisher, topics, docNo, status, date string
		dept                                                           *int64
	}
	d37, d41 := int64(37), int64(41)
	arts := []art{
		{artFGW, "qingyuan_qyfgw_14011", "信息公开｜规范性文件", "清远市发展和改革局", "发展规划 价格", "清发改〔2026〕1号", model.StatusReady, "2026-03-01", &d37},
		{artJYJ, "qingyuan_qyjyj_15001", "信息公开｜通知公告", "清远市教育局", "招生 考试", "清教〔2026〕2号", model.StatusRaw, "2026-04-10", &d41},
		{artProvince, "gd_ref_wjk", "信息公开｜文件库", "广东省人民政府", "营商环境", "粤府〔2026〕5号", model.StatusReady, "2026-02-15", nil},
		{artPrice, "qingyuan_qyfgw_14003", "信息公开｜价格管理", "清远市发展和改革局", "价格", "", model.StatusReady, "2026-03-20", &d37},
		{artCity, "qingyuan_xxgk_90001", "信息公开｜市政府工作报告", "清远市人民政府", "工作报告", "", model.StatusReady, "2026-01-05", nil},
	}
	ids := map[string]int64{}
	for i, a := range arts {
		tg, err := w.st.TargetByCode(ctx, a.target)
		if err != nil {
			t.Fatal(err)
		}
		m := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, DeptID: a.dept, URL: fmt.Sprintf("http://www.qingyuan.gov.test/a/%d.html", i),
			Title: a.title, ChannelName: tg.ChannelName, ChannelPath: a.channel, Publisher: a.publisher, TopicWords: a.topics,
			DocNo: a.docNo, Status: a.status, PublishDate: a.date, IndexNo: fmt.Sprintf("11441800MB2D%04d/2026-%05d", i, i+1),
			EffectiveDate: "2026-02-20", OpenCategory: "主动公开", ContentText: "正文第一段：" + a.title + "。\n第二段。",
			FetchedAt: w.now.Add(-time.Hour)}
		var atts []model.Attachment
		if a.title == artFGW {
			atts = []model.Attachment{{URL: "http://www.qingyuan.gov.test/a/fj.pdf", FileName: "附件1：实施细则.pdf", FileExt: "pdf", SizeBytes: 2048}}
		}
		if _, _, err := w.st.SaveArticle(ctx, m, atts, 0, store.FrontierMark{}); err != nil {
			t.Fatalf("article %s: %v", a.title, err)
		}
		ids[a.title] = m.ID
	}
	if err := w.st.MarkExported(ctx, []int64{ids[artProvince]}, w.now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	return ids
}

// seedHostile stores an article whose every text came from a hostile page,
// and a department with a hostile name.
func seedHostile(t *testing.T, w *world) int64 {
	t.Helper()
	ctx := context.Background()
	tg, err := w.st.TargetByCode(ctx, "qingyuan_qyfgw_14012")
	if err != nil {
		t.Fatal(err)
	}
	d37 := int64(37)
	bad := hostile + hostileAttr
	m := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, DeptID: &d37, URL: "javascript:alert(1)//" + hostileAttr,
		Title: artHostile + bad, ChannelName: bad, ChannelPath: "信息公开｜" + bad, Publisher: bad, TopicWords: bad, DocNo: bad,
		IndexNo: bad, OpenCategory: bad, SourceRaw: bad, StatusReason: bad, Status: model.StatusFailed,
		MetadataJSON: []byte(`{"raw": {"` + strings.ReplaceAll(hostile, `"`, `\"`) + `": "` + strings.ReplaceAll(bad, `"`, `\"`) + `"}}`),
		ContentText:  "正文 " + bad, FetchedAt: w.now}
	atts := []model.Attachment{{URL: "javascript:alert(2)", FileName: bad + ".pdf", FileExt: "pdf"}}
	if _, _, err := w.st.SaveArticle(ctx, m, atts, 0, store.FrontierMark{}); err != nil {
		t.Fatal(err)
	}
	parent := int64(37)
	if _, _, err := w.st.ImportDepartments(ctx, []model.Department{{DeptID: 9900, DeptName: "恶意部门" + bad,
		ParentDeptID: &parent, ShortName: hostileAttr, FullName: bad, DeptCode: bad, State: 1}}); err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// titlesShown returns the article titles the list's table links to.
var articleLink = regexp.MustCompile(`<a href="/admin/articles/(\d+)">([^<]*)</a>`)

func titlesShown(body string) []string {
	var out []string
	for _, m := range articleLink.FindAllStringSubmatch(body, -1) {
		out = append(out, htmlUnescape(m[2]))
	}
	return out
}

func TestDataPagesShowWhatTheyAreFor(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		ids := seedArticles(t, w)
		c := w.login(t, "viewer")
		for _, tc := range []struct {
			name, path string
			want       []string
		}{
			{"articles", "/admin/articles", []string{"文章", "本地部门", "栏目路径", "发布机构", "文号", "发布日期", "未导出",
				artFGW, artJYJ, artProvince, artCity, "清远市发展和改革局", "清发改〔2026〕1号", "2026-03-01", "待处理", "可用"}},
			{"not exported", "/admin/articles?unexported=1", []string{"文章 · 未导出", artFGW}},
			{"article", fmt.Sprintf("/admin/articles/%d", ids[artFGW]), []string{artFGW, "公开属性",
				"索引号", "11441800MB2D0000/2026-00001", "文号", "清发改〔2026〕1号", "发布机构", "清远市发展和改革局",
				"发布日期", "2026-03-01", "成文日期", "2026-02-20", "主题词", "发展规划 价格", "公开分类", "主动公开",
				"原文地址", `href="http://www.qingyuan.gov.test/a/0.html" rel="noopener noreferrer"`,
				"本地部门", `<a href="/admin/departments/37">清远市发展和改革局</a>`, "信息公开｜规范性文件", "qingyuan_qyfgw_14011",
				"正文", `<div class="article-text">正文第一段：` + artFGW, "附件", "附件1：实施细则.pdf", "2048 字节", "可用"}},
			{"departments", "/admin/departments", []string{"本地部门", "搜索部门", "清远市人民政府", "清远市发展和改革局",
				"共 170 个本地部门", "个停更", `class="lvl-1"`}},
			{"department", "/admin/departments/37", []string{"清远市发展和改革局", "部门 ID 37", "上级部门", "清远市人民政府",
				"采集目标", "qingyuan_qyfgw_14011", "最近抓取", "最近文章", "上次运行", "健康", "停更", "查看该部门的文章"}},
			{"stale targets", "/admin/stale-targets", []string{"停更目标", "本地部门", "预期周期", "已静默", "qingyuan_qyfgw_14002",
				`<a href="/admin/departments/37">清远市发展和改革局</a>`, "阈值 12 天"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := w.get(t, tc.path, c)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: status %d\n%s", tc.path, rec.Code, rec.Body)
				}
				body := rec.Body.String()
				for _, s := range tc.want {
					if !strings.Contains(body, s) {
						t.Errorf("GET %s: page lacks %q", tc.path, s)
					}
				}
			})
		}
		// The not-yet-exported view leaves out what RAG has pulled.
		if got := titlesShown(w.get(t, "/admin/articles?unexported=1", c).Body.String()); slices.Contains(got, artProvince) || !slices.Contains(got, artFGW) {
			t.Errorf("not exported view shows %q; want %s and not %s", got, artFGW, artProvince)
		}
		for _, p := range []string{"/admin/articles/999999", "/admin/articles/abc", "/admin/departments/999999", "/admin/departments/x"} {
			if rec := w.get(t, p, c); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "未找到") {
				t.Errorf("GET %s: status %d, want 404 未找到", p, rec.Code)
			}
		}
	})
}

// Every filter of the article list reaches the query: each lets through
// an article that matches and keeps out one that does not.
func TestArticleFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		seedArticles(t, w)
		c := w.login(t, "viewer")
		for _, tc := range []struct {
			query      string
			want, not_ string
		}{
			{"dept=37", artFGW, artJYJ},
			{"dept=" + url.QueryEscape("清远市教育局"), artJYJ, artFGW},
			{"dept=" + url.QueryEscape("市发展和改革局"), artFGW, artJYJ}, // the short name, exactly
			{"channel_path=" + url.QueryEscape("规范性"), artFGW, artJYJ},
			{"dept=37&channel_path=" + url.QueryEscape("规范性"), artFGW, artPrice},
			{"publisher=" + url.QueryEscape("清远市教育局"), artJYJ, artFGW},
			{"publisher=" + url.QueryEscape("清远市教育"), "", artJYJ}, // publisher matches whole names only
			{"topic_words=" + url.QueryEscape("营商"), artProvince, artFGW},
			{"doc_no=" + url.QueryEscape("清发改〔2026〕1号"), artFGW, artJYJ},
			{"external_ref=1", artProvince, artCity},
			{"status=raw", artJYJ, artFGW},
			{"date_from=2026-03-01&date_to=2026-03-31", artFGW, artJYJ},
			{"date_from=2026-04-10", artJYJ, artFGW},
			{"date_to=2026-01-05", artCity, artProvince},
			{"site=gd_ref", artProvince, artFGW},
			{"target=qingyuan_qyjyj_15001", artJYJ, artFGW},
			{"unexported=1", artFGW, artProvince},
		} {
			rec := w.get(t, "/admin/articles?"+tc.query, c)
			if rec.Code != http.StatusOK {
				t.Errorf("?%s: status %d", tc.query, rec.Code)
				continue
			}
			got := titlesShown(rec.Body.String())
			if tc.want != "" && !slices.Contains(got, tc.want) {
				t.Errorf("?%s: shows %q, want %s among them", tc.query, got, tc.want)
			}
			if slices.Contains(got, tc.not_) {
				t.Errorf("?%s: shows %q, %s must not be among them", tc.query, got, tc.not_)
			}
		}
		for _, tc := range []struct{ query, want string }{
			{"dept=" + url.QueryEscape("发展和改革局"), "匹配多个部门"},
			{"dept=" + url.QueryEscape("没有这个部门"), "没有名称包含"},
			{"dept=424242", "没有部门 ID 为 424242"},
			{"dept=37&external_ref=1", "不能与部门筛选同时使用"},
			{"status=maybe", "状态筛选无效"},
			{"date_from=2026-13-01", "不是有效日期"},
			{"date_from=2026-04-01&date_to=2026-03-01", "晚于截止日期"},
			{"site=nosuch", "没有站点"},
			{"target=nosuch", "没有采集目标"},
			{"before=xyz", "分页参数无效"},
			{"before=-4", "分页参数无效"},
		} {
			rec := w.get(t, "/admin/articles?"+tc.query, c)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("?%s: status %d, want 400 saying %q", tc.query, rec.Code, tc.want)
			}
		}
	})
}

// Paging by the keyset neither skips nor repeats an article, even when
// articles arrive while someone pages.
func TestArticlePaging(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		seedArticles(t, w)
		ctx := context.Background()
		tg, err := w.st.TargetByCode(ctx, "lianzhou_tzgg")
		if err != nil {
			t.Fatal(err)
		}
		add := func(i int) {
			t.Helper()
			m := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, DeptID: tg.DeptID, URL: fmt.Sprintf("http://www.lianzhou.gov.test/p/%d.html", i),
				Title: fmt.Sprintf("分页文章%03d", i), ChannelPath: "分页测试", Status: model.StatusReady, FetchedAt: w.now}
			if _, _, err := w.st.SaveArticle(ctx, m, nil, 0, store.FrontierMark{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 120 {
			add(i)
		}
		c := w.login(t, "viewer")
		seen := map[string]int{}
		next := "/admin/articles?channel_path=" + url.QueryEscape("分页测试")
		var sizes []int
		for page := 0; next != ""; page++ {
			if page > 5 {
				t.Fatal("more pages than 120 articles fill")
			}
			body := w.get(t, next, c).Body.String()
			titles := titlesShown(body)
			sizes = append(sizes, len(titles))
			for _, s := range titles {
				seen[s]++
			}
			if page == 0 {
				add(500) // arrives while the person reads the first page
				if !strings.Contains(body, "下一页") {
					t.Fatal("the first page has no link to the next")
				}
			}
			next = htmlUnescape(between(body, `<a href="`, `">下一页`))
		}
		if !slices.Equal(sizes, []int{50, 50, 20}) {
			t.Errorf("page sizes %v, want [50 50 20]", sizes)
		}
		for i := range 120 {
			if n := seen[fmt.Sprintf("分页文章%03d", i)]; n != 1 {
				t.Errorf("分页文章%03d shown %d times over the pages, want once", i, n)
			}
		}
		if seen["分页文章500"] != 0 {
			t.Errorf("an article stored after the first page was read shows up on a later page")
		}
	})
}

// Text from hostile pages — titles, bodies, attribute values, file names,
// department names — reaches the pages as text, never as markup, and a
// javascript: address is never a link.
func TestHostileArticleAndDepartmentTextIsEscaped(t *testing.T) {
	w := sqliteWorld(t)
	id := seedHostile(t, w)
	c := w.login(t, "operator")
	for _, path := range []string{"/admin/articles", fmt.Sprintf("/admin/articles/%d", id), "/admin/departments",
		"/admin/departments?q=" + url.QueryEscape("恶意"), "/admin/departments/9900", "/admin/departments/37",
		"/admin/articles?doc_no=" + url.QueryEscape(hostile+hostileAttr), "/admin/articles?channel_path=" + url.QueryEscape(hostileAttr)} {
		rec := w.get(t, path, c)
		body := rec.Body.String()
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("GET %s: hostile markup reached the page unescaped", path)
		}
		if strings.Contains(body, `href="javascript:`) {
			t.Errorf("GET %s: a javascript: address became a link", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("GET %s (status %d): the hostile text is not shown (escaped) at all; the test proves nothing", path, rec.Code)
		}
	}
}

// upload posts a CSV file to the department import as the form does.
func (w *world) upload(t *testing.T, c *http.Cookie, csv string) *httptest.ResponseRecorder {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "departments.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(csv))
	_ = mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/admin/departments/import", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if c != nil {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

func TestDepartmentImport(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		good := "DEPT_ID,DEPT_NAME,PARENT_DEPT_ID\n9001,清远市新设局,1\n37,清远市发展和改革局（新名）,1\n"
		imports := func() []store.AuditEntry {
			t.Helper()
			es, err := st.ListAudit(ctx, store.AuditFilter{ObjectType: "department"})
			if err != nil {
				t.Fatal(err)
			}
			return es
		}
		assertNothingImported := func(when string) {
			t.Helper()
			if _, err := st.DepartmentByID(ctx, 9001); err == nil {
				t.Errorf("%s: department 9001 was imported", when)
			}
			if d, err := st.DepartmentByID(ctx, 37); err != nil || d.DeptName != "清远市发展和改革局" {
				t.Errorf("%s: department 37 changed: %+v %v", when, d, err)
			}
			if es := imports(); len(es) != 0 {
				t.Errorf("%s: audit entries %+v, want none", when, es)
			}
		}

		viewer := w.login(t, "viewer")
		if rec := w.upload(t, viewer, good); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
			t.Errorf("viewer import: status %d, want 403 权限不足", rec.Code)
		}
		if body := w.get(t, "/admin/departments", viewer).Body.String(); strings.Contains(body, `action="/admin/departments/import"`) {
			t.Errorf("the viewer's department page offers the import form")
		}
		assertNothingImported("viewer")

		op := w.login(t, "operator")
		if body := w.get(t, "/admin/departments", op).Body.String(); !strings.Contains(body, `action="/admin/departments/import"`) {
			t.Errorf("the operator's department page lacks the import form")
		}
		// Line 2 is good; lines 3 and 5 are not: nothing at all is imported.
		bad := "DEPT_ID,DEPT_NAME,PARENT_DEPT_ID\n9001,清远市新设局,1\nabc,没有编号的部门,1\n37,清远市发展和改革局（新名）,1\n9002,,1\n"
		rec := w.upload(t, op, bad)
		body := rec.Body.String()
		if rec.Code != http.StatusBadRequest {
			t.Errorf("bad file: status %d, want 400", rec.Code)
		}
		for _, s := range []string{"有 2 行有误，未导入任何部门", "第 3 行：DEPT_ID「abc」不是正整数", "第 5 行：DEPT_NAME 为空"} {
			if !strings.Contains(body, s) {
				t.Errorf("bad file: page lacks %q", s)
			}
		}
		if strings.Contains(body, "第 2 行") || strings.Contains(body, "第 4 行") {
			t.Errorf("bad file: a good line is listed as bad")
		}
		assertNothingImported("bad file")
		for _, tc := range []struct{ csv, want string }{
			{"DEPT_ID,DEPT_NAME\n", "只有表头"},
			{"", "第 1 行"},
		} {
			if rec := w.upload(t, op, tc.csv); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("file %q: status %d, want 400 with %q", tc.csv, rec.Code, tc.want)
			}
		}
		if rec := w.post(t, "/admin/departments/import", op, url.Values{"file": {good}}); rec.Code != http.StatusBadRequest ||
			!strings.Contains(rec.Body.String(), "请选择要导入的部门 CSV 文件") {
			t.Errorf("no file: status %d, want 400 asking for one", rec.Code)
		}
		assertNothingImported("empty files")

		rec = w.upload(t, op, good)
		if rec.Code != http.StatusOK {
			t.Fatalf("good file: status %d\n%s", rec.Code, rec.Body)
		}
		if !strings.Contains(rec.Body.String(), "导入完成：共 2 个部门，新增 1 个，更新 1 个，未变 0 个") {
			t.Errorf("good file: the page does not say what was imported")
		}
		if !strings.Contains(rec.Body.String(), "清远市新设局") {
			t.Errorf("good file: the tree does not show the new department")
		}
		if d, err := st.DepartmentByID(ctx, 37); err != nil || d.DeptName != "清远市发展和改革局（新名）" {
			t.Errorf("department 37 after import: %+v %v", d, err)
		}
		es := imports()
		if len(es) != 1 || es[0].Actor != "user:operator" || es[0].Action != "department.import" {
			t.Fatalf("audit after import: %+v", es)
		}
	})
}

// rowOf returns the department page's table row of a target.
func rowOf(body, code string) string {
	i := strings.Index(body, `id="target-`+code+`"`)
	if i < 0 {
		return ""
	}
	i = strings.LastIndex(body[:i], "<tr")
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}

// A department's stale columns are red on its page; one that published
// within three cadences is not. The numbers are the rule's own: a column
// expected weekly is stale after more than 21 days without a new article.
func TestDepartmentShowsStaleTargetsInRed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		mark := func(code string, quiet time.Duration) {
			t.Helper()
			tg, err := st.TargetByCode(ctx, code)
			if err != nil {
				t.Fatal(err)
			}
			last := w.now.Add(-quiet)
			if err := st.MarkTargetCrawled(ctx, tg.ID, w.now.Add(-time.Hour), &last); err != nil {
				t.Fatal(err)
			}
		}
		day := 24 * time.Hour
		mark("qingyuan_qyfgw_14003", 20*day) // weekly column, 20 days quiet: within 21
		mark("qingyuan_qyfgw_14002", 13*day) // every 4 days, 13 days quiet: past 12
		c := w.login(t, "viewer")
		body := w.get(t, "/admin/departments/37", c).Body.String()
		for code, stale := range map[string]bool{"qingyuan_qyfgw_14003": false, "qingyuan_qyfgw_14002": true,
			"qingyuan_qyfgw_14011": true} {
			row := rowOf(body, code)
			if row == "" {
				t.Fatalf("department 37 has no row for %s", code)
			}
			red := strings.Contains(row, "target-stale") && strings.Contains(row, `class="badge red stale"`)
			if red != stale {
				t.Errorf("%s: shown stale (red) %v, want %v\n%s", code, red, stale, row)
			}
			if !stale && !strings.Contains(row, `<span class="badge green">正常</span>`) {
				t.Errorf("%s: not shown healthy\n%s", code, row)
			}
		}
		if row := rowOf(body, "qingyuan_qyfgw_14002"); !strings.Contains(row, "停更 13 天") || !strings.Contains(row, "阈值 12 天") {
			t.Errorf("qingyuan_qyfgw_14002: the row does not say how long it has been quiet\n%s", row)
		}
		// The department list counts them.
		list := w.get(t, "/admin/departments?q="+url.QueryEscape("清远市发展和改革局"), c).Body.String()
		if !strings.Contains(list, `<span class="badge red stale">3 个停更</span>`) {
			t.Errorf("the department list does not count 3 stale targets for 清远市发展和改革局")
		}
		// The stale list has the 4-day column and not the weekly one.
		stalePage := w.get(t, "/admin/stale-targets", c).Body.String()
		if !strings.Contains(stalePage, "qingyuan_qyfgw_14002") || strings.Contains(stalePage, "qingyuan_qyfgw_14003") {
			t.Errorf("the stale list disagrees with the department page")
		}
	})
}

// 立即采集 on the department page queues the crawl and comes back there.
func TestDepartmentCrawlNowComesBack(t *testing.T) {
	w := sqliteWorld(t)
	op := w.login(t, "operator")
	body := w.get(t, "/admin/departments/37", op).Body.String()
	if !strings.Contains(rowOf(body, "qingyuan_qyfgw_14011"), `action="/admin/targets/qingyuan_qyfgw_14011/crawl"`) {
		t.Fatalf("the department page offers no 立即采集 for its target")
	}
	if body := w.get(t, "/admin/departments/37", w.login(t, "viewer")).Body.String(); strings.Contains(body, "/crawl\"") {
		t.Errorf("viewer: the department page offers 立即采集")
	}
	rec := w.post(t, "/admin/targets/qingyuan_qyfgw_14011/crawl", op, url.Values{"back": {"/admin/departments/37"}})
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/departments/37?") {
		t.Fatalf("crawl now: status %d Location %q, want back to the department", rec.Code, loc)
	}
	if page := w.get(t, loc, op).Body.String(); !strings.Contains(page, "加入抓取队列") {
		t.Errorf("the department page does not confirm the queued crawl")
	}
	if page := w.get(t, "/admin/departments/41?crawl=qingyuan_qyfgw_14011", op).Body.String(); strings.Contains(page, "加入抓取队列") {
		t.Errorf("a crafted link makes a department page confirm another department's crawl")
	}
	rec = w.post(t, "/admin/targets/qingyuan_qyfgw_14011/crawl", op, url.Values{"back": {"/admin/stale-targets"}})
	if loc := rec.Header().Get("Location"); !strings.HasPrefix(loc, "/admin/stale-targets?") {
		t.Errorf("crawl now from the stale list: sent to %q, want back to it", loc)
	} else if page := w.get(t, loc, op).Body.String(); !strings.Contains(page, "正在抓取中，未重复加入队列") &&
		!strings.Contains(page, "加入抓取队列") {
		t.Errorf("the stale list does not confirm the crawl")
	}
	for _, back := range []string{"//evil.test/admin/departments/37", "/admin/departments/37?x=1", "https://evil.test/", "/admin/departments/../hosts"} {
		rec := w.post(t, "/admin/targets/qingyuan_qyfgw_14011/crawl", op, url.Values{"back": {back}})
		if loc := rec.Header().Get("Location"); !strings.HasPrefix(loc, "/admin/sites/qingyuan?") {
			t.Errorf("back %q: sent to %q, want the target's site page", back, loc)
		}
	}
}

func TestDepartmentImportRefusesAHugeFile(t *testing.T) {
	w := sqliteWorld(t)
	op := w.login(t, "operator")
	huge := "DEPT_ID,DEPT_NAME\n9001,清远市新设局\n" + strings.Repeat("#", 11<<20)
	rec := w.upload(t, op, huge)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "文件过大（上限 10 MB）") {
		t.Errorf("an 11 MB file: status %d, want 413 saying the limit", rec.Code)
	}
	if _, err := w.st.DepartmentByID(context.Background(), 9001); err == nil {
		t.Errorf("a refused file was imported")
	}
}
