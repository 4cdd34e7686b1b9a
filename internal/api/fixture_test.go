package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// world is a small knowledge base: local departments in a tree, a local
// CMS site with a mapped and a city-level department, a provincial and a
// national reference site, their targets, articles covering every filter,
// crawl log rows and registry columns.
type world struct {
	now                         time.Time
	cmsSite, provSite, nateSite int64
	sdMapped, sdCity            int64
	tgtFGW, tgtCity, tgtProv    int64
	tgtNation, tgtOff           int64
	articles                    map[string]int64 // by title
	logs                        map[string]int64 // by label
	colSubscribed, colFree      int64
	st                          *store.Store
	made                        int   // targets the endpoint cases created
	cardYellow, cardGreen       int64 // set by seedCards
}

var ptr = func(v int64) *int64 { return &v }

func buildWorld(t *testing.T, st *store.Store) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{now: time.Date(2026, 4, 23, 2, 0, 0, 0, time.UTC), articles: map[string]int64{}, logs: map[string]int64{}, st: st}
	clock := w.now.Add(-400 * 24 * time.Hour)
	st.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	one, two := 1, 2
	depts := []model.Department{
		{DeptID: 1, DeptName: "清远市人民政府", State: 1, OrderID: &one},
		{DeptID: 37, DeptName: "清远市发展和改革局", ShortName: "市发改局", ParentDeptID: ptr(1), State: 1, OrderID: &two},
		{DeptID: 38, DeptName: "清远市教育局", ParentDeptID: ptr(1), State: 1, OrderID: &one},
		{DeptID: 99, DeptName: "挂在未导入上级下的部门", ParentDeptID: ptr(500), State: 1},
	}
	if _, _, err := st.ImportDepartments(ctx, depts); err != nil {
		t.Fatalf("import departments: %v", err)
	}
	err := st.WithTx(ctx, func(tx *store.Tx) error {
		sites := []*model.Site{
			{SiteCode: "qy", SiteName: "清远市人民政府", BaseURL: "https://www.gdqy.gov.test", SiteRole: model.RoleQingyuanLocal,
				CMSAdapter: "gkmlpt", AdapterParams: json.RawMessage(`{"sid": 763042}`), Access: model.AccessFull, RespectRobots: true, Enabled: true},
			{SiteCode: "gd_ref", SiteName: "广东省人民政府", BaseURL: "https://www.gd.gov.test", SiteRole: model.RoleProvinceRef,
				YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessFull, RespectRobots: true, Enabled: true},
			{SiteCode: "gov_ref", SiteName: "中国政府网", BaseURL: "https://www.gov.test", SiteRole: model.RoleNationRef,
				YAMLPath: "config/sites/gov_ref.yaml", Access: model.AccessFull, RespectRobots: true, Enabled: true},
		}
		for _, s := range sites {
			if _, _, err := tx.UpsertSite(ctx, s); err != nil {
				return err
			}
		}
		w.cmsSite, w.provSite, w.nateSite = sites[0].ID, sites[1].ID, sites[2].ID
		mapped := &model.SiteDepartment{SiteID: w.cmsSite, DeptPath: "qyfgw", LocalDeptID: ptr(37),
			DeptBinding: model.BindingMapped, DeptDisplayName: "清远市发展和改革局", Enabled: true}
		city := &model.SiteDepartment{SiteID: w.cmsSite, DeptPath: "szfxxgk", DeptBinding: model.BindingCityLevel,
			DeptDisplayName: "市政府信息公开", Enabled: true}
		for _, d := range []*model.SiteDepartment{mapped, city} {
			if _, _, err := tx.UpsertSiteDepartment(ctx, d); err != nil {
				return err
			}
		}
		w.sdMapped, w.sdCity = mapped.ID, city.ID
		targets := []*model.Target{
			{SiteID: w.cmsSite, SiteDepartmentID: &mapped.ID, TargetCode: "qyfgw_2849", TargetName: "发改局政策文件",
				ColumnID: "2849", EntryURL: "https://www.gdqy.gov.test/qyfgw/gkmlpt/index", ExpectedCadenceDays: 7, Enabled: true},
			{SiteID: w.cmsSite, SiteDepartmentID: &city.ID, TargetCode: "szfxxgk_1", TargetName: "市政府文件",
				ColumnID: "1", EntryURL: "https://www.gdqy.gov.test/szfxxgk/gkmlpt/index", ExpectedCadenceDays: 7, Enabled: true},
			{SiteID: w.provSite, TargetCode: "gd_zcwj", TargetName: "省政府文件", EntryURL: "https://www.gd.gov.test/zcwj/",
				ExpectedCadenceDays: 3, Enabled: true, Source: model.SourceYAML},
			{SiteID: w.nateSite, TargetCode: "gov_zcwj", TargetName: "国务院文件", EntryURL: "https://www.gov.test/zhengce/",
				ExpectedCadenceDays: 3, Enabled: true, Source: model.SourceYAML},
			{SiteID: w.cmsSite, SiteDepartmentID: &mapped.ID, TargetCode: "qyfgw_off", TargetName: "停用栏目",
				ColumnID: "3000", EntryURL: "https://www.gdqy.gov.test/qyfgw/gkmlpt/off", ExpectedCadenceDays: 7, Enabled: false},
		}
		for _, tg := range targets {
			if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
				return err
			}
		}
		w.tgtFGW, w.tgtCity, w.tgtProv, w.tgtNation, w.tgtOff = targets[0].ID, targets[1].ID, targets[2].ID, targets[3].ID, targets[4].ID
		return nil
	})
	if err != nil {
		t.Fatalf("world: %v", err)
	}
	type art struct {
		title, channel, publisher, topics, docNo, status, date string
		site, target                                           int64
		dept                                                   *int64
	}
	arts := []art{
		{"发改局规范性文件", "信息公开/政策文件/规范性文件", "清远市发展和改革局", "发展规划 价格", "清发改〔2026〕1号", model.StatusReady, "2026-03-01", w.cmsSite, w.tgtFGW, ptr(37)},
		{"发改局工作动态", "信息公开/工作动态", "清远市发展和改革局", "项目", "", model.StatusRaw, "2026-04-10", w.cmsSite, w.tgtFGW, ptr(37)},
		{"市政府通知", "政策文件", "清远市人民政府", "通知", "清府〔2026〕3号", model.StatusReady, "2026-04-20", w.cmsSite, w.tgtCity, nil},
		{"省政府文件", "省政府文件", "广东省人民政府", "营商环境", "粤府〔2026〕5号", model.StatusReady, "2026-02-15", w.provSite, w.tgtProv, nil},
		{"国务院文件", "国务院文件/政策文件", "国务院", "营商环境 改革", "国发〔2026〕7号", model.StatusFailed, "2026-01-05", w.nateSite, w.tgtNation, nil},
		{"完成率公告", "统计/100%_完成", "清远市人民政府", "统计", "", model.StatusReady, "", w.cmsSite, w.tgtCity, nil},
	}
	for i, a := range arts {
		m := &model.Article{SiteID: a.site, TargetID: a.target, DeptID: a.dept, NativePostID: "",
			URL: "https://example.gov.test/a/" + string(rune('a'+i)) + ".html", Title: a.title,
			ChannelPath: a.channel, Publisher: a.publisher, TopicWords: a.topics, DocNo: a.docNo, Status: a.status,
			PublishDate: a.date, ContentText: "正文：" + a.title, FetchedAt: w.now.Add(-time.Hour)}
		var atts []model.Attachment
		if i == 0 {
			atts = []model.Attachment{{URL: "https://example.gov.test/a/a.pdf", FileName: "附件.pdf", FileExt: "pdf"}}
		}
		if _, _, err := st.SaveArticle(ctx, m, atts, 0, store.FrontierMark{}); err != nil {
			t.Fatalf("article %s: %v", a.title, err)
		}
		w.articles[a.title] = m.ID
	}
	logs := []struct {
		label   string
		site    int64
		target  int64
		host    string
		purpose string
		ok      bool
		at      time.Time
	}{
		{"fgw list", w.cmsSite, w.tgtFGW, "www.gdqy.gov.test", "list", true, w.now.Add(-3 * time.Hour)},
		{"fgw detail failed", w.cmsSite, w.tgtFGW, "www.gdqy.gov.test", "detail", false, w.now.Add(-2 * time.Hour)},
		{"gd list", w.provSite, w.tgtProv, "www.gd.gov.test", "list", true, w.now.Add(-90 * time.Minute)},
		{"gd robots", w.provSite, w.tgtProv, "www.gd.gov.test", "robots", true, w.now.Add(-time.Hour)},
	}
	for _, l := range logs {
		status := 200
		if !l.ok {
			status = 503
		}
		row := &model.CrawlLog{SiteID: ptr(l.site), TargetID: ptr(l.target), Host: l.host, ArticleURL: "https://" + l.host + "/",
			Purpose: l.purpose, HTTPStatus: &status, Success: l.ok, OccurredAt: l.at}
		if !l.ok {
			row.ErrorClass, row.ErrorMsg = "http_5xx", "503 Service Unavailable"
		}
		if err := st.InsertCrawlLog(ctx, row); err != nil {
			t.Fatalf("crawl log: %v", err)
		}
		w.logs[l.label] = row.ID
	}
	sub := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: w.cmsSite, ColumnID: "2849", ColumnName: "政策文件",
		AdminLevel: "city", TopicTags: []string{"政策文件"}, PostCount: 12, SubscribedTargetID: &w.tgtFGW}
	free := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: w.cmsSite, ColumnID: "2850", ColumnName: "规划计划",
		AdminLevel: "city", TopicTags: []string{"规划计划"}, PostCount: 3}
	for _, c := range []*model.ColumnRegistry{sub, free} {
		if err := st.UpsertColumnRegistry(ctx, c); err != nil {
			t.Fatalf("column: %v", err)
		}
	}
	w.colSubscribed, w.colFree = sub.ID, free.ID
	// The provincial column published yesterday (not stale at a cadence of
	// 3 days); the department's column last published 30 days ago (stale at
	// a cadence of 7 days: more than 21 days).
	yesterday, monthAgo := w.now.Add(-24*time.Hour), w.now.Add(-30*24*time.Hour)
	if err := st.MarkTargetCrawled(ctx, w.tgtProv, w.now.Add(-time.Hour), &yesterday); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkTargetCrawled(ctx, w.tgtFGW, w.now.Add(-time.Hour), &monthAgo); err != nil {
		t.Fatal(err)
	}
	return w
}
