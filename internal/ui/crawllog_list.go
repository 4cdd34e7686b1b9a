package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// crawlLogPageSize is how many requests one page of the log shows.
const crawlLogPageSize = 50

var purposes = []struct{ Value, Label string }{
	{model.PurposeList, "列表页"}, {model.PurposeDetail, "详情页"}, {model.PurposeAttachment, "附件"},
	{model.PurposeRobots, "robots.txt"}, {model.PurposeIndex, "栏目索引"}, {model.PurposeProbe, "探测"},
}

func purposeLabel(p string) string {
	for _, x := range purposes {
		if x.Value == p {
			return x.Label
		}
	}
	return p
}

type crawlLogFilter struct {
	Site, Target, Host, Purpose, Status string
	ID                                  string // one row, as a corpus work's trace links to it
}

type crawlLogRow struct {
	model.CrawlLog
	SiteCode, SiteName, TargetCode string
}

type crawlLogData struct {
	Filter   crawlLogFilter
	Sites    []model.Site
	Purposes any
	Rows     []crawlLogRow
	NextURL  string // the next (older) page; empty on the last
	FirstURL string // back to the newest page; empty on it
}

// crawlLogList is the request log with its filters, newest first, paged by
// keyset so a page stays the same while new requests are logged.
func (c *console) crawlLogList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f := crawlLogFilter{Site: strings.TrimSpace(q.Get("site")), Target: strings.TrimSpace(q.Get("target")),
		Host: strings.TrimSpace(q.Get("host")), Purpose: q.Get("purpose"), Status: q.Get("status"),
		ID: strings.TrimSpace(q.Get("id"))}
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	targets, err := c.store.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := crawlLogData{Filter: f, Sites: sites, Purposes: purposes}
	refuse := func(msg string) {
		c.render(w, r, http.StatusBadRequest, "crawl_logs", page{Title: "抓取日志", Active: "crawl-logs", Error: msg, Data: d})
	}
	sf := store.CrawlLogFilter{Host: f.Host, Limit: crawlLogPageSize + 1}
	var msg string
	if sf.SiteID, sf.TargetID, msg, err = c.siteTargetIDs(ctx, sites, f.Site, f.Target); err != nil {
		c.serverError(w, r, err)
		return
	}
	if msg != "" {
		refuse(msg)
		return
	}
	if f.ID != "" {
		id, err := strconv.ParseInt(f.ID, 10, 64)
		if err != nil || id <= 0 {
			refuse("日志编号无效。")
			return
		}
		sf.ID = id
	}
	if f.Purpose != "" {
		if !slices.ContainsFunc(purposes, func(p struct{ Value, Label string }) bool { return p.Value == f.Purpose }) {
			refuse("请求类型无效，请从列表中选择。")
			return
		}
		sf.Purpose = f.Purpose
	}
	switch f.Status {
	case "":
	case "ok", "failed":
		ok := f.Status == "ok"
		sf.Success = &ok
	default:
		refuse("结果筛选无效，请从列表中选择。")
		return
	}
	if before := q.Get("before"); before != "" {
		at, id, ok := parseCursor(before)
		if !ok {
			refuse(badPageMsg)
			return
		}
		sf.BeforeAt, sf.BeforeID = &at, id
		d.FirstURL = listURL("/crawl-logs", f.query())
	}
	logs, err := c.store.ListCrawlLogs(ctx, sf)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	logs, d.NextURL = nextPage(logs, crawlLogPageSize, "/crawl-logs", f.query(),
		func(l model.CrawlLog) string { return formatCursor(l.OccurredAt, l.ID) })
	siteByID, targetCode := sitesByID(sites), targetCodes(targets)
	for _, l := range logs {
		row := crawlLogRow{CrawlLog: l}
		if l.SiteID != nil {
			row.SiteCode, row.SiteName = siteByID[*l.SiteID].SiteCode, siteByID[*l.SiteID].SiteName
		}
		if l.TargetID != nil {
			row.TargetCode = targetCode[*l.TargetID]
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "crawl_logs", page{Title: "抓取日志", Active: "crawl-logs", Data: d})
}

func (f crawlLogFilter) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"site": f.Site, "target": f.Target, "host": f.Host, "purpose": f.Purpose, "status": f.Status, "id": f.ID} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// A cursor is the last row's time (Unix microseconds, as stored) and id.
func formatCursor(at time.Time, id int64) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "-" + strconv.FormatInt(id, 10)
}

func parseCursor(s string) (time.Time, int64, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return time.Time{}, 0, false
	}
	us, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || us <= 0 || id <= 0 {
		return time.Time{}, 0, false
	}
	return time.UnixMicro(us).UTC(), id, true
}
