package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// articlePageSize is how many articles one page of the list shows.
const articlePageSize = 50

// articleFilter is the article list's query as the form sends it.
type articleFilter struct {
	Dept       string // a department id, or (part of) its name
	Channel    string // a substring of channel_path
	Publisher  string // exactly
	Topic      string // a substring of topic_words
	DocNo      string // exactly
	External   bool   // only provincial and national reference articles
	Status     string
	From, To   string // publish_date, YYYY-MM-DD
	Site       string // site code
	Target     string // target code
	Unexported bool   // only articles RAG has not pulled yet
}

type articleRow struct {
	ID                                   int64
	Title, ChannelPath, Publisher, DocNo string
	PublishDate                          string
	DeptID                               *int64
	DeptName                             string
	SiteCode, SiteName, TargetCode       string
	StatusLabel, StatusClass             string
	Exported                             *time.Time
}

type articleListData struct {
	Filter   articleFilter
	Sites    []model.Site
	Depts    []model.Department // for the name suggestions
	Statuses []labelValue
	DeptName string // the department the filter resolved to
	Rows     []articleRow
	NextURL  string // the next (older) page; empty on the last
	FirstURL string // back to the newest page; empty on it
}

type labelValue struct{ Value, Label string }

var articleStatuses = []labelValue{
	{model.StatusReady, "可用"}, {model.StatusRaw, "待处理"}, {model.StatusFailed, "失败"},
}

func articleStatusLabel(s string) (label, class string) {
	switch s {
	case model.StatusReady:
		return "可用", "green"
	case model.StatusRaw:
		return "待处理", "grey"
	case model.StatusFailed:
		return "失败", "red"
	}
	return s, "grey"
}

// articleList finds articles the way RAG users search them — by local
// department, channel path, the public attributes, external references —
// newest first, a page at a time by the store's keyset cursor, so paging
// neither skips nor repeats while new articles arrive.
func (c *console) articleList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f := articleFilter{Dept: strings.TrimSpace(q.Get("dept")), Channel: strings.TrimSpace(q.Get("channel_path")),
		Publisher: strings.TrimSpace(q.Get("publisher")), Topic: strings.TrimSpace(q.Get("topic_words")),
		DocNo: strings.TrimSpace(q.Get("doc_no")), External: q.Get("external_ref") == "1", Status: q.Get("status"),
		From: strings.TrimSpace(q.Get("date_from")), To: strings.TrimSpace(q.Get("date_to")),
		Site: strings.TrimSpace(q.Get("site")), Target: strings.TrimSpace(q.Get("target")),
		Unexported: q.Get("unexported") == "1"}
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	depts, err := c.store.ListDepartments(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := articleListData{Filter: f, Sites: sites, Depts: depts, Statuses: articleStatuses}
	title, active := "文章", "articles"
	if f.Unexported {
		title = "文章 · 未导出"
	}
	refuse := func(msg string) {
		c.render(w, r, http.StatusBadRequest, "articles", page{Title: title, Active: active, Error: msg, Data: d})
	}
	aq := store.ArticleQuery{ChannelPath: f.Channel, Publisher: f.Publisher, TopicWord: f.Topic, DocNo: f.DocNo,
		ExternalRef: f.External, NotExported: f.Unexported, Limit: articlePageSize + 1}
	if f.Dept != "" {
		dept, msg := findDepartment(depts, f.Dept)
		if dept == nil {
			refuse(msg)
			return
		}
		if f.External {
			refuse("「仅外部参考」是不属于任何本地部门的文章，不能与部门筛选同时使用。")
			return
		}
		aq.DeptID, d.DeptName = &dept.DeptID, dept.DeptName
	}
	if f.Status != "" {
		if !slices.ContainsFunc(articleStatuses, func(s labelValue) bool { return s.Value == f.Status }) {
			refuse("状态筛选无效，请从列表中选择。")
			return
		}
		aq.Status = f.Status
	}
	for _, v := range []struct{ val, name string }{{f.From, "起始日期"}, {f.To, "截止日期"}} {
		if v.val == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, v.val); err != nil {
			refuse(v.name + "「" + v.val + "」不是有效日期，请按 2026-03-05 的格式填写。")
			return
		}
	}
	if f.From != "" && f.To != "" && f.From > f.To {
		refuse("起始日期 " + f.From + " 晚于截止日期 " + f.To + "，请对调。")
		return
	}
	aq.DateFrom, aq.DateTo = f.From, f.To
	var msg string
	if aq.SiteID, aq.TargetID, msg, err = c.siteTargetIDs(ctx, sites, f.Site, f.Target); err != nil {
		c.serverError(w, r, err)
		return
	}
	if msg != "" {
		refuse(msg)
		return
	}
	if before := q.Get("before"); before != "" {
		id, err := strconv.ParseInt(before, 10, 64)
		if err != nil || id <= 0 {
			refuse(badPageMsg)
			return
		}
		aq.BeforeID = id
		d.FirstURL = listURL("/articles", f.query())
	}
	rows, err := c.store.QueryArticles(ctx, aq)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	rows, d.NextURL = nextPage(rows, articlePageSize, "/articles", f.query(),
		func(a model.Article) string { return strconv.FormatInt(a.ID, 10) })
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	siteByID, targetCode, deptName := sitesByID(sites), targetCodes(targets), deptNames(depts)
	for _, a := range rows {
		row := articleRow{ID: a.ID, Title: a.Title, ChannelPath: a.ChannelPath, Publisher: a.Publisher, DocNo: a.DocNo,
			PublishDate: a.PublishDate, DeptID: a.DeptID, SiteCode: siteByID[a.SiteID].SiteCode,
			SiteName: siteByID[a.SiteID].SiteName, TargetCode: targetCode[a.TargetID], Exported: a.ExportedToRAGAt}
		if a.DeptID != nil {
			row.DeptName = deptName[*a.DeptID]
		}
		row.StatusLabel, row.StatusClass = articleStatusLabel(a.Status)
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "articles", page{Title: title, Active: active, Data: d})
}

// findDepartment resolves what a person typed into the department filter:
// a dept_id, or a name. A name matching one department's name (or short or
// full name) exactly wins; otherwise it must be part of exactly one name.
func findDepartment(depts []model.Department, s string) (*model.Department, string) {
	if id, err := strconv.ParseInt(s, 10, 64); err == nil {
		for i := range depts {
			if depts[i].DeptID == id {
				return &depts[i], ""
			}
		}
		return nil, fmt.Sprintf("没有部门 ID 为 %d 的本地部门，请检查部门 ID 或输入部门名称。", id)
	}
	var exact, partial []*model.Department
	for i := range depts {
		dp := &depts[i]
		names := []string{dp.DeptName, dp.ShortName, dp.FullName}
		if slices.Contains(names, s) {
			exact = append(exact, dp)
		} else if slices.ContainsFunc(names, func(n string) bool { return n != "" && strings.Contains(n, s) }) {
			partial = append(partial, dp)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], ""
	case len(exact) == 0 && len(partial) == 1:
		return partial[0], ""
	case len(exact)+len(partial) == 0:
		return nil, "没有名称包含「" + s + "」的本地部门，请检查名称或输入部门 ID。"
	}
	many := append(exact, partial...)
	var names []string
	for i, dp := range many {
		if i == 5 {
			names = append(names, fmt.Sprintf("等 %d 个", len(many)))
			break
		}
		names = append(names, fmt.Sprintf("%s（%d）", dp.DeptName, dp.DeptID))
	}
	return nil, "「" + s + "」匹配多个部门：" + strings.Join(names, "、") + "。请输入更完整的名称或部门 ID。"
}

func (f articleFilter) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"dept": f.Dept, "channel_path": f.Channel, "publisher": f.Publisher,
		"topic_words": f.Topic, "doc_no": f.DocNo, "status": f.Status, "date_from": f.From, "date_to": f.To,
		"site": f.Site, "target": f.Target} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.External {
		v.Set("external_ref", "1")
	}
	if f.Unexported {
		v.Set("unexported", "1")
	}
	return v
}
