package ui

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"zhizhi/internal/config/zone"

	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/onboard"
	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// The simulated Lianzhou site: a template site whose notices column lists
// articles at /tzgg/ (config/sites/lianzhou.yaml).
const (
	lianzhouList    = "http://www.lianzhou.gov.test/tzgg/"
	lianzhouArticle = "http://www.lianzhou.gov.test/tzgg/202411/t20241111_510001.html"
)

// simWorld is a console whose targets are checked by the real crawler's
// dry-run against the simulated web, on a store synced from the bundled
// configuration.
func simWorld(t *testing.T, st *store.Store) *world {
	t.Helper()
	ctx := context.Background()
	cfg, err := filepath.Abs(filepath.Join("..", "..", "demo", "config"))
	if err != nil {
		t.Fatal(err)
	}
	cw := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: cfg, Sim: sim.Options{Seed: 1}})
	if err := queue.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(ctx, queue.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	w := &world{st: st, q: q, sessions: newTestSessions(), now: time.Now(), cfgDir: cfg, web: cw, corpus: corpus.New(st, "test")}
	h, err := New(Options{Store: st, Sessions: w.sessions, Jobs: q, ConfigDir: cfg, Corpus: w.corpus,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now },
		Targets: &target.Service{Store: st, Validate: cw.Crawler(nil).Validate, List: cw.Crawler(nil).PreviewColumn, Location: zone.Shanghai},
		Onboard: func(context.Context) (*onboard.Wizard, error) {
			return &onboard.Wizard{Fetch: cw.Client, Bundle: cw.Bundle}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w
}

// newTargetForm is the new-target form as a person fills it for a copy of
// Lianzhou's notices column.
func newTargetForm(code, sample string) url.Values {
	return url.Values{"site_code": {"lianzhou"}, "target_code": {code}, "target_name": {"连州市通知公告（副本）"},
		"entry_url": {lianzhouList}, "sample_article_url": {sample}, "dept_binding": {"mapped"},
		"local_dept_id": {"2403"}, "channel_name": {"通知公告"}, "channel_path": {"信息公开｜通知公告"},
		"content_category": {"通知公告"}, "schedule": {"weekly"}, "expected_cadence_days": {"3"},
		"interval_sec": {"0"}, "enabled": {"1"}}
}

// editForm is the edit form of tg as the page fills it, unchanged.
func editForm(tg *model.Target) url.Values {
	v := url.Values{"target_name": {tg.TargetName}, "entry_url": {tg.EntryURL}, "sample_article_url": {tg.SampleArticleURL},
		"dept_binding": {tg.DeptBinding}, "channel_name": {tg.ChannelName}, "channel_path": {tg.ChannelPath},
		"content_category": {tg.ContentCategory}, "content_subcategory": {tg.ContentSubcategory},
		"schedule": {"cron"}, "schedule_cron": {tg.ScheduleCron},
		"expected_cadence_days": {strconv.Itoa(tg.ExpectedCadenceDays)}, "interval_sec": {strconv.Itoa(tg.IntervalSec)}}
	if tg.DeptID != nil {
		v.Set("local_dept_id", strconv.FormatInt(*tg.DeptID, 10))
	}
	if tg.Enabled {
		v.Set("enabled", "1")
	}
	return v
}

func mustTarget(t *testing.T, st *store.Store, code string) *model.Target {
	t.Helper()
	tg, err := st.TargetByCode(context.Background(), code)
	if err != nil {
		t.Fatalf("target %s: %v", code, err)
	}
	return tg
}

func targetAudit(t *testing.T, st *store.Store, code string) []store.AuditEntry {
	t.Helper()
	es, err := st.ListAudit(context.Background(), store.AuditFilter{ObjectType: "target", ObjectID: code})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// fieldRow is the provenance row of field on a target's page.
func fieldRow(body, field string) string {
	i := strings.Index(body, `id="field-`+field+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</tr>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}

// section is the text of s from the first start to the end after it.
func section(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}

// inputValue is the value of the text input named name on a page.
func inputValue(body, name string) (string, bool) {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return htmlUnescape(m[1]), true
}

// TestTargetPages: the list, the detail, the forms and the catalog answer
// with what a person reads on them.
func TestTargetPages(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		seedCatalog(t, w.st)
		viewer, op := w.login(t, "viewer"), w.login(t, "operator")
		for _, tc := range []struct {
			name, path string
			c          *http.Cookie
			want       []string
		}{
			{"list", "/admin/targets", viewer, []string{"采集目标", "lianzhou_tzgg", "连州市人民政府网｜通知公告", "news_local",
				"停更 45 天", "最近抓取", "最近文章", "健康", "YAML", "筛选"}},
			{"list stale only", "/admin/targets?stale=yes", viewer, []string{"news_local", "停更"}},
			{"list by department", "/admin/targets?dept=2403", viewer, []string{"lianzhou_tzgg", "连州市"}},
			{"detail", "/admin/targets/lianzhou_tzgg", viewer, []string{"设置与来源", "列表页网址", "样例文章网址", "部门归属",
				"预期更新周期（天）", "YAML", "最近运行", "还没有运行记录"}},
			{"new form", "/admin/targets/new", op, []string{"新增采集目标", "所属站点", "目标代码", "列表页网址", "样例文章网址",
				"是否属于本地部门", "本地部门", "栏目名称", "栏目路径", "内容分类", "内容子类", "每日", "每周", "每月", "自定义时间表",
				"预期更新周期（天）", "请求间隔（秒）", "启用", "试运行", "保存"}},
			{"edit form", "/admin/targets/lianzhou_tzgg/edit", op, []string{"编辑采集目标", "lianzhou_tzgg",
				lianzhouArticle, "试运行"}},
			{"catalog", "/admin/catalog", viewer, []string{"栏目目录", "主题标签", "行政层级", "县区级", "已订阅", "未订阅", "站点",
				"适配器", "财政预算", "价格监管", "教育动态", "清远市清城区人民政府", "文章数", "最后确认", "财政"}},
			{"catalog by tag", "/admin/catalog?tag=" + url.QueryEscape("价格"), viewer, []string{"价格监管", "共 1 个栏目"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := w.get(t, tc.path, tc.c)
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
		if body := w.get(t, "/admin/targets?site=lianzhou", viewer).Body.String(); strings.Contains(body, "news_local") {
			t.Errorf("the site filter lets other sites' targets through")
		}
		if body := w.get(t, "/admin/targets?stale=no", viewer).Body.String(); strings.Contains(body, "news_local") {
			t.Errorf("the 未停更 filter lists the stale news_local")
		}
		if body := w.get(t, "/admin/catalog?tag="+url.QueryEscape("价格"), viewer).Body.String(); strings.Contains(body, "财政预算") {
			t.Errorf("the tag filter lets other tags' columns through")
		}
		for _, bad := range []string{"site=nosuch", "dept=abc", "dept=999999", "enabled=maybe", "stale=x"} {
			if rec := w.get(t, "/admin/targets?"+bad, viewer); rec.Code != http.StatusBadRequest {
				t.Errorf("/admin/targets?%s: status %d, want 400", bad, rec.Code)
			}
		}
		if rec := w.get(t, "/admin/targets/nosuch", viewer); rec.Code != http.StatusNotFound {
			t.Errorf("unknown target: status %d, want 404", rec.Code)
		}
	})
}

// A viewer reads targets and the catalog but changes nothing: every form
// and every change is refused with 403, and the pages offer no buttons.
func TestViewerCannotChangeTargets(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		reg := seedCatalog(t, w.st)
		viewer := w.login(t, "viewer")
		before := mustTarget(t, st, "lianzhou_tzgg")
		for _, path := range []string{"/admin/targets/new", "/admin/targets/lianzhou_tzgg/edit"} {
			if rec := w.get(t, path, viewer); rec.Code != http.StatusForbidden {
				t.Errorf("GET %s as viewer: status %d, want 403", path, rec.Code)
			}
		}
		edit := editForm(before)
		edit.Set("expected_cadence_days", "9")
		for _, tc := range []struct {
			path string
			form url.Values
		}{
			{"/admin/targets", newTargetForm("viewer_made", "")},
			{"/admin/targets/new/dry-run", newTargetForm("viewer_made", "")},
			{"/admin/targets/lianzhou_tzgg", edit},
			{"/admin/targets/lianzhou_tzgg/dry-run", edit},
			{"/admin/targets/lianzhou_tzgg/enabled", url.Values{"enabled": {"0"}, "reason": {"不需要了"}}},
			{"/admin/targets/lianzhou_tzgg/revert", url.Values{"field": {"expected_cadence_days"}}},
			{"/admin/catalog/subscribe", url.Values{"id": {strconv.FormatInt(reg["3001"], 10)}}},
			{"/admin/catalog/unsubscribe", url.Values{"id": {strconv.FormatInt(reg["3001"], 10)}}},
		} {
			rec := w.post(t, tc.path, viewer, tc.form)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "权限不足") {
				t.Errorf("POST %s as viewer: status %d, want 403 with 权限不足", tc.path, rec.Code)
			}
		}
		after := mustTarget(t, st, "lianzhou_tzgg")
		if after.ExpectedCadenceDays != before.ExpectedCadenceDays || !after.Enabled {
			t.Errorf("a viewer's change reached the target: %+v", after)
		}
		if _, err := st.TargetByCode(context.Background(), "viewer_made"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a viewer created a target: %v", err)
		}
		if _, err := st.TargetByCode(context.Background(), "qingcheng_qcfgw_3001"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a viewer subscribed a column: %v", err)
		}
		for _, code := range []string{"lianzhou_tzgg", "viewer_made", "qingcheng_qcfgw_3001"} {
			if es := targetAudit(t, st, code); len(es) != 0 {
				t.Errorf("refused changes left audit entries for %s: %+v", code, es)
			}
		}
		for _, path := range []string{"/admin/targets", "/admin/targets/lianzhou_tzgg", "/admin/catalog"} {
			body := w.get(t, path, viewer).Body.String()
			for _, offer := range []string{"新增采集目标", `action="/admin/targets/lianzhou_tzgg/enabled"`, `/revert"`, "批量订阅", "立即采集", `name="id"`} {
				if strings.Contains(body, offer) {
					t.Errorf("GET %s as viewer offers %q", path, offer)
				}
			}
		}
	})
}

// TestDryRunGateInTheConsole: with the real crawler against the simulated
// web, a target whose sample the template cannot read is refused with the
// dry-run shown and the person's input kept; the dry-run button shows the
// result before saving; fixed, it is saved; without a sample it is saved
// with a warning.
func TestDryRunGateInTheConsole(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := simWorld(t, st)
		op := w.login(t, "operator")
		const code = "lianzhou_tzgg_copy"

		// The list page is no article: no title, no body.
		bad := newTargetForm(code, lianzhouList)
		bad.Set("target_name", "连州通知"+hostile)
		rec := w.post(t, "/admin/targets", op, bad)
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("save with a red dry-run: status %d, want 422\n%s", rec.Code, body)
		}
		for _, s := range []string{"试运行未通过", "标题非空", "未通过", "列表选择器命中", "正文不少于 50 字"} {
			if !strings.Contains(body, s) {
				t.Errorf("refused save: page lacks %q", s)
			}
		}
		for name, want := range map[string]string{"target_code": code, "target_name": "连州通知" + hostile,
			"entry_url": lianzhouList, "sample_article_url": lianzhouList, "expected_cadence_days": "3", "channel_path": "信息公开｜通知公告"} {
			if got, ok := inputValue(body, name); !ok || got != want {
				t.Errorf("refused save: input %s is %q, want the person's %q kept", name, got, want)
			}
		}
		if !strings.Contains(body, `<option value="2403" selected>`) || !strings.Contains(body, `<option value="weekly" selected>`) {
			t.Errorf("refused save: the department or the schedule picked is not kept")
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("refused save: the hostile name reached the page unescaped")
		}
		if _, err := st.TargetByCode(context.Background(), code); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a target with a red dry-run was saved: %v", err)
		}
		if es := targetAudit(t, st, code); len(es) != 0 {
			t.Errorf("refused save left audit entries: %+v", es)
		}

		// 试运行 with the real article: green, the title and length shown, nothing saved.
		good := newTargetForm(code, lianzhouArticle)
		rec = w.post(t, "/admin/targets/new/dry-run", op, good)
		body = rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, "试运行通过") || strings.Contains(body, "未通过</span>") {
			t.Fatalf("dry-run with a real article: status %d, want green\n%s", rec.Code, body)
		}
		if title := strings.TrimPrefix(section(body, `<dd class="dr-title">`, `</dd>`), `<dd class="dr-title">`); title == "" || title == "—" {
			t.Errorf("the dry-run does not show the extracted title")
		}
		if m := regexp.MustCompile(`<dd class="dr-length">(\d+) 字</dd>`).FindStringSubmatch(body); m == nil {
			t.Errorf("the dry-run does not show the body length")
		} else if n, _ := strconv.Atoi(m[1]); n < 50 {
			t.Errorf("the dry-run shows a body of %d characters, want at least 50", n)
		}
		if attrs := section(body, "公开属性</dt>", "</dd>"); !strings.Contains(attrs, `<span class="muted">`) {
			t.Errorf("the dry-run does not show the public attributes it read: %q", attrs)
		}
		if _, err := st.TargetByCode(context.Background(), code); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the dry-run saved the target: %v", err)
		}

		rec = w.post(t, "/admin/targets", op, good)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("save with a green dry-run: status %d\n%s", rec.Code, rec.Body)
		}
		tg := mustTarget(t, st, code)
		if tg.Source != model.SourceAdmin || tg.CreatedBy != "user:operator" || tg.DeptID == nil || *tg.DeptID != 2403 ||
			tg.SampleArticleURL != lianzhouArticle || tg.ExpectedCadenceDays != 3 || !tg.Enabled {
			t.Errorf("saved target: %+v", tg)
		}
		if f := strings.Fields(tg.ScheduleCron); len(f) != 5 || f[4] == "*" {
			t.Errorf("每周 saved as %q, want one day of the week", tg.ScheduleCron)
		}
		if es := targetAudit(t, st, code); len(es) != 1 || es[0].Action != "target.create" || es[0].Actor != "user:operator" {
			t.Errorf("audit of the save: %+v", es)
		}
		body = w.get(t, rec.Header().Get("Location"), op).Body.String()
		if !strings.Contains(body, "已保存采集目标") || !strings.Contains(fieldRow(body, "target_name"), "后台创建") ||
			!strings.Contains(fieldRow(body, "target_name"), "user:operator") {
			t.Errorf("the detail page after saving does not confirm it or say it was created in the console")
		}

		// No sample: a warning shown before saving, and the save allowed.
		nosample := newTargetForm(code+"_nosample", "")
		body = w.post(t, "/admin/targets/new/dry-run", op, nosample).Body.String()
		if !strings.Contains(body, "未填写样例文章网址") {
			t.Errorf("the dry-run without a sample shows no warning")
		}
		rec = w.post(t, "/admin/targets", op, nosample)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("save without a sample: status %d\n%s", rec.Code, rec.Body)
		}
		mustTarget(t, st, code+"_nosample")
		if body := w.get(t, rec.Header().Get("Location"), op).Body.String(); !strings.Contains(body, "未填写样例文章网址") {
			t.Errorf("the page after a save without a sample does not warn")
		}

		// Field errors are shown next to their fields, the input kept.
		wrong := newTargetForm("bad code!", "")
		wrong.Set("entry_url", "http://elsewhere.test/list/")
		wrong.Set("expected_cadence_days", "七")
		rec = w.post(t, "/admin/targets", op, wrong)
		body = rec.Body.String()
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("save with bad fields: status %d, want 400", rec.Code)
		}
		if !regexp.MustCompile(`name="expected_cadence_days" value="七"[^<]*>\s*<div class="hint">[^<]*</div>\s*<div class="field-err" role="alert">「七」不是整数`).MatchString(body) {
			t.Errorf("the cadence error is not shown beside its field")
		}
		wrong.Set("expected_cadence_days", "3")
		body = w.post(t, "/admin/targets", op, wrong).Body.String()
		for _, s := range []string{`name="target_code" value="bad code!"`, "elsewhere.test 不在站点 lianzhou"} {
			if !strings.Contains(body, s) {
				t.Errorf("save with bad fields: page lacks %q", s)
			}
		}
		if strings.Count(body, `class="field-err"`) != 2 {
			t.Errorf("save with a bad code and entry URL: %d field errors shown, want 2", strings.Count(body, `class="field-err"`))
		}
	})
}

// TestProvenanceAndRevert: a change of a target from the site files shows
// as a person's override (who, when, and the YAML value) and is kept;
// reverting brings the YAML value back; switching off needs a reason.
func TestProvenanceAndRevert(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := simWorld(t, st)
		op := w.login(t, "operator")
		const code = "lianzhou_tzgg"
		page := "/admin/targets/" + code
		body := w.get(t, page, op).Body.String()
		if row := fieldRow(body, "expected_cadence_days"); !strings.Contains(row, "YAML") || strings.Contains(row, "人工修改") {
			t.Fatalf("before any change, the cadence row is %q; want it from YAML", row)
		}

		form := editForm(mustTarget(t, st, code))
		form.Set("expected_cadence_days", "5")
		rec := w.post(t, page, op, form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("save the edit: status %d\n%s", rec.Code, rec.Body)
		}
		if tg := mustTarget(t, st, code); tg.ExpectedCadenceDays != 5 {
			t.Fatalf("after the edit the cadence is %d, want 5", tg.ExpectedCadenceDays)
		}
		body = w.get(t, rec.Header().Get("Location"), op).Body.String()
		if !strings.Contains(body, "已保存：预期更新周期（天）") {
			t.Errorf("the page does not confirm which setting was saved")
		}
		row := fieldRow(body, "expected_cadence_days")
		for _, s := range []string{"人工修改", "user:operator", "YAML 值：<code>3</code>", "<code>5</code>", "恢复为 YAML 值"} {
			if !strings.Contains(row, s) {
				t.Errorf("after the edit the cadence row lacks %q:\n%s", s, row)
			}
		}
		if row := fieldRow(body, "target_name"); strings.Contains(row, "人工修改") || strings.Contains(row, "恢复为 YAML 值") {
			t.Errorf("an unchanged setting shows as changed: %s", row)
		}

		rec = w.post(t, page+"/revert", op, url.Values{"field": {"expected_cadence_days"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("revert: status %d\n%s", rec.Code, rec.Body)
		}
		if tg := mustTarget(t, st, code); tg.ExpectedCadenceDays != 3 {
			t.Errorf("after revert the cadence is %d, want the YAML 3", tg.ExpectedCadenceDays)
		}
		body = w.get(t, rec.Header().Get("Location"), op).Body.String()
		if row := fieldRow(body, "expected_cadence_days"); strings.Contains(row, "人工修改") || !strings.Contains(row, "<code>3</code>") {
			t.Errorf("after revert the cadence row is %s", row)
		}
		if !strings.Contains(body, "已将「预期更新周期（天）」恢复为 YAML 中的值") {
			t.Errorf("the page does not confirm the revert")
		}
		if rec := w.post(t, page+"/revert", op, url.Values{"field": {"expected_cadence_days"}}); rec.Code != http.StatusBadRequest {
			t.Errorf("revert of an unchanged setting: status %d, want 400", rec.Code)
		}

		// Off needs a reason; with one it is recorded and shown as a change.
		if rec := w.post(t, page+"/enabled", op, url.Values{"enabled": {"0"}, "reason": {"  "}}); rec.Code != http.StatusBadRequest ||
			!strings.Contains(rec.Body.String(), "请填写原因") {
			t.Errorf("disable without a reason: status %d, want 400 asking for one", rec.Code)
		}
		if !mustTarget(t, st, code).Enabled {
			t.Fatalf("a disable without a reason switched the target off")
		}
		reason := "栏目已合并到政策文件 " + hostile
		if rec := w.post(t, page+"/enabled", op, url.Values{"enabled": {"0"}, "reason": {reason}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("disable: status %d\n%s", rec.Code, rec.Body)
		}
		if mustTarget(t, st, code).Enabled {
			t.Errorf("the target is still enabled")
		}
		es := targetAudit(t, st, code)
		if len(es) == 0 || es[0].Action != "target.disable" || es[0].Detail != reason || es[0].Actor != "user:operator" {
			t.Errorf("audit of the disable: %+v", es)
		}
		body = w.get(t, page, op).Body.String()
		if row := fieldRow(body, "enabled"); !strings.Contains(row, "人工修改") || !strings.Contains(row, "YAML 值：<code>是</code>") {
			t.Errorf("after disabling, the enabled row is %s", row)
		}
		if strings.Contains(w.get(t, "/admin/audit", op).Body.String(), "<script>alert") {
			t.Errorf("the hostile reason reached the audit page unescaped")
		}
	})
}

// seedCatalog puts columns of the qingcheng site into the registry the way
// a crawl of each department's index does, and returns their ids by
// column: qcfgw's were probed, qcjyj is a department nobody has bound yet.
func seedCatalog(t *testing.T, st *store.Store) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	site, err := st.SiteByCode(ctx, "qingcheng")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		_, _, err := tx.UpsertSiteDepartment(ctx, &model.SiteDepartment{SiteID: site.ID, DeptPath: "qcjyj",
			DeptBinding: model.BindingPending, DeptDisplayName: "清城区教育局", DetectStatus: model.DetectOK, Enabled: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	depts, err := st.ListSiteDepartments(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	deptID := map[string]int64{}
	for _, d := range depts {
		deptID[d.DeptPath] = d.ID
		if d.DeptPath == "qcfgw" {
			if err := st.RecordProbe(ctx, d.ID, model.DetectOK, time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := map[string]int64{}
	for _, c := range []struct {
		dept, id, name string
		tags           []string
	}{
		{"qcfgw", "3001", "财政预算", []string{"财政"}},
		{"qcfgw", "3002", "价格监管", []string{"价格"}},
		{"qcfgw", "3003", "公示" + hostile, []string{"财政", "公示" + hostile}},
		{"qcjyj", "4001", "教育动态", []string{"教育"}},
	} {
		id := deptID[c.dept]
		reg := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: site.ID, SiteDepartmentID: &id, ColumnID: c.id,
			ColumnName: c.name, AdminLevel: "county", TopicTags: c.tags, PostCount: 5, Active: true,
			LastSeenAt: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)}
		if err := st.UpsertColumnRegistry(ctx, reg); err != nil {
			t.Fatal(err)
		}
		out[c.id] = reg.ID
	}
	return out
}

// TestCatalogBulkSubscribe: ticked columns become targets with the one
// schedule and category chosen, each column's outcome shown; a column of a
// pending department refuses the batch, named, nothing written and the
// ticks kept; unsubscribing disables.
func TestCatalogBulkSubscribe(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		reg := seedCatalog(t, w.st)
		op := w.login(t, "operator")
		id := func(col string) string { return strconv.FormatInt(reg[col], 10) }
		bulk := url.Values{"id": {id("3001"), id("4001")}, "schedule": {"weekly"}, "expected_cadence_days": {"14"},
			"content_category": {"财政信息"}, "filter": {"sub=no"}}

		rec := w.post(t, "/admin/catalog/subscribe", op, bulk)
		body := rec.Body.String()
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("subscribe with a pending column: status %d, want 422\n%s", rec.Code, body)
		}
		if !strings.Contains(body, "被拒绝的栏目") || !strings.Contains(body, "教育动态") || !strings.Contains(body, "pending") {
			t.Errorf("the refusal does not name the pending column")
		}
		for _, col := range []string{"3001", "4001"} {
			if !strings.Contains(body, `value="`+id(col)+`" aria-label=`) || !regexp.MustCompile(`value="`+id(col)+`"[^>]* checked>`).MatchString(body) {
				t.Errorf("after the refusal column %s is not ticked any more", col)
			}
		}
		if !strings.Contains(body, `name="content_category" value="财政信息"`) {
			t.Errorf("after the refusal the category chosen is lost")
		}
		for _, code := range []string{"qingcheng_qcfgw_3001", "qingcheng_qcjyj_4001"} {
			if _, err := st.TargetByCode(context.Background(), code); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused batch wrote %s: %v", code, err)
			}
		}

		bulk["id"] = []string{id("3001"), id("3002")}
		rec = w.post(t, "/admin/catalog/subscribe", op, bulk)
		body = rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("subscribe: status %d\n%s", rec.Code, body)
		}
		results := section(body, "批量订阅结果", "</table>")
		if strings.Count(results, "已订阅（新建目标）") != 2 || !strings.Contains(results, "qingcheng_qcfgw_3001") ||
			!strings.Contains(results, "qingcheng_qcfgw_3002") {
			t.Errorf("the outcomes shown:\n%s", results)
		}
		for _, code := range []string{"qingcheng_qcfgw_3001", "qingcheng_qcfgw_3002"} {
			tg := mustTarget(t, st, code)
			if tg.ExpectedCadenceDays != 14 || tg.ContentCategory != "财政信息" || !tg.Enabled || tg.DeptID == nil || *tg.DeptID != 2101 {
				t.Errorf("%s: %+v, want the bar's cadence 14 and 财政信息 under department 2101", code, tg)
			}
			if f := strings.Fields(tg.ScheduleCron); len(f) != 5 || f[4] == "*" {
				t.Errorf("%s: schedule %q, want weekly", code, tg.ScheduleCron)
			}
			if es := targetAudit(t, st, code); len(es) != 1 || es[0].Actor != "user:operator" || es[0].Action != "target.subscribe" {
				t.Errorf("%s: audit %+v", code, es)
			}
		}
		// Subscribed columns leave the unsubscribed view the page was on.
		if table := section(body, `id="catalog-table"`, "</table>"); strings.Contains(table, "财政预算") || !strings.Contains(table, "教育动态") {
			t.Errorf("after subscribing, the 未订阅 view still lists 财政预算 or lost 教育动态:\n%s", table)
		}
		if body := w.get(t, "/admin/catalog?sub=yes", op).Body.String(); !strings.Contains(body, "价格监管") || strings.Contains(body, "教育动态") {
			t.Errorf("the 已订阅 filter is wrong")
		}

		rec = w.post(t, "/admin/catalog/unsubscribe", op, url.Values{"id": {id("3001"), id("4001")}})
		body = rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, "已退订（目标停用）") || !strings.Contains(body, "原未订阅，跳过") {
			t.Errorf("unsubscribe: status %d, outcomes not shown", rec.Code)
		}
		if mustTarget(t, st, "qingcheng_qcfgw_3001").Enabled {
			t.Errorf("the unsubscribed column's target is still enabled")
		}
		// A row's 一键订阅 subscribes that row alone, whatever else is ticked.
		rec = w.post(t, "/admin/catalog/subscribe", op, url.Values{"one": {id("3003")}, "id": {id("4001")}})
		if rec.Code != http.StatusOK || strings.Count(section(rec.Body.String(), "批量订阅结果", "</table>"), "<tr>") != 2 {
			t.Errorf("一键订阅: status %d; want one column's outcome", rec.Code)
		}
		mustTarget(t, st, "qingcheng_qcfgw_3003")
		if _, err := st.TargetByCode(context.Background(), "qingcheng_qcjyj_4001"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("一键订阅 of one row subscribed a ticked one too: %v", err)
		}
		if rec := w.post(t, "/admin/catalog/subscribe", op, url.Values{}); rec.Code != http.StatusBadRequest ||
			!strings.Contains(rec.Body.String(), "请先勾选至少一个栏目") {
			t.Errorf("subscribe with nothing ticked: status %d", rec.Code)
		}
		if rec := w.post(t, "/admin/catalog/subscribe", op, url.Values{"id": {"x"}}); rec.Code != http.StatusBadRequest {
			t.Errorf("subscribe with a bad id: status %d, want 400", rec.Code)
		}
	})
}

// Text from hostile pages, files and inputs reaches the target and catalog
// pages as text, never as markup.
func TestTargetPagesEscapeHostileText(t *testing.T) {
	w := sqliteWorld(t)
	seedCatalog(t, w.st)
	op := w.login(t, "operator")
	for _, path := range []string{"/admin/targets", "/admin/targets/news_local", "/admin/targets/news_local/edit",
		"/admin/catalog", "/admin/catalog?tag=" + url.QueryEscape(hostile), "/admin/catalog?site=" + url.QueryEscape(hostile)} {
		rec := w.get(t, path, op)
		body := rec.Body.String()
		if strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: hostile script reached the page unescaped", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("GET %s (status %d): the hostile text is not shown (escaped) at all; the test proves nothing", path, rec.Code)
		}
	}
	form := newTargetForm("x"+hostile, "")
	form.Set("channel_name", hostile)
	body := w.post(t, "/admin/targets", op, form).Body.String()
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(") {
		t.Errorf("a refused form shows hostile input unescaped (or not at all)")
	}
}

// 立即采集 on the target pages queues the crawl and comes back to the
// page it was pressed on, saying so; the way back is never a free address.
func TestTargetCrawlFromTargets(t *testing.T) {
	w := sqliteWorld(t)
	op := w.login(t, "operator")
	for _, tc := range []struct{ back, want string }{
		{"targets", "/admin/targets?crawl=lianzhou_tzgg"},
		{"target", "/admin/targets/lianzhou_tzgg?crawl=lianzhou_tzgg"},
		{"//evil.test", "/admin/sites/lianzhou?crawl=lianzhou_tzgg"},
	} {
		rec := w.post(t, "/admin/targets/lianzhou_tzgg/crawl", op, url.Values{"back": {tc.back}})
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), tc.want) {
			t.Errorf("back %q: status %d to %q, want 303 to %s…", tc.back, rec.Code, rec.Header().Get("Location"), tc.want)
			continue
		}
		if body := w.get(t, rec.Header().Get("Location"), op).Body.String(); !strings.Contains(body, "加入抓取队列") {
			t.Errorf("back %q: the page does not confirm the queued crawl", tc.back)
		}
	}
	if body := w.get(t, "/admin/targets?crawl=nosuch", op).Body.String(); strings.Contains(body, "加入抓取队列") {
		t.Errorf("a crafted link makes the target list confirm a crawl that did not happen")
	}
}

// A column of a CMS site is edited like any target, but its entry and its
// department stay those its site department gives; the form does not offer
// them and a posted value for them changes nothing.
func TestEditCMSColumn(t *testing.T) {
	w := simWorld(t, storetest.SQLite(t))
	op := w.login(t, "operator")
	const code = "qingcheng_qcfgw_2849"
	before := mustTarget(t, w.st, code)
	body := w.get(t, "/admin/targets/"+code+"/edit", op).Body.String()
	if strings.Contains(body, `name="entry_url"`) || strings.Contains(body, `name="dept_binding"`) || !strings.Contains(body, "由站点部门的绑定决定") {
		t.Errorf("the edit form of a CMS column offers its entry or binding")
	}
	form := editForm(before)
	form.Set("expected_cadence_days", "12")
	form.Set("entry_url", "http://www.qingcheng.gov.test/elsewhere/")
	form.Set("dept_binding", "city_level")
	rec := w.post(t, "/admin/targets/"+code, op, form)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("save the CMS column: status %d\n%s", rec.Code, rec.Body)
	}
	after := mustTarget(t, w.st, code)
	if after.ExpectedCadenceDays != 12 || after.EntryURL != before.EntryURL || after.DeptBinding != before.DeptBinding {
		t.Errorf("after the edit: cadence %d entry %q binding %q; want 12 and the entry and binding unchanged",
			after.ExpectedCadenceDays, after.EntryURL, after.DeptBinding)
	}
}
