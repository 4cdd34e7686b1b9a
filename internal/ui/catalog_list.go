package ui

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// catalogPageSize is how many columns one page of the catalog shows.
const catalogPageSize = 100

var adminLevels = []struct{ Value, Label string }{{"city", "市级"}, {"county", "县区级"}, {"township", "乡镇级"}}

func adminLevelLabel(v string) string {
	for _, l := range adminLevels {
		if l.Value == v {
			return l.Label
		}
	}
	return v
}

func subscriptionLabel(s string) string {
	switch s {
	case target.StatusCreated:
		return "已订阅（新建目标）"
	case target.StatusReenabled:
		return "已重新启用"
	case target.StatusAlready:
		return "原已订阅，跳过"
	case target.StatusDisabled:
		return "已退订（目标停用）"
	case target.StatusNotSubscribed:
		return "原未订阅，跳过"
	}
	return s
}

type catalogFilter struct {
	Level, Tag, Sub, Site, Adapter string
	Page                           int
}

// catalogDefaults are the settings a bulk subscription gives every column.
type catalogDefaults struct {
	Schedule, Cadence, Category, Subcategory string
}

type catalogData struct {
	Filter   catalogFilter
	Query    string // the filter as a query string, carried through the bulk form
	Levels   any
	Adapters []string
	Tags     []store.TagCount
	Rows     []store.ColumnEntry
	Total    int
	PrevURL  string
	NextURL  string
	Selected map[int64]bool
	Defaults catalogDefaults
	// After a bulk change: what happened to each column, or why the batch
	// was refused (nothing written then).
	Action  string // 订阅 | 退订
	Results []target.Subscription
	Refused []string
	// SiteNames names the results' sites, by site code.
	SiteNames map[string]string
	// Covered: the page's group columns whose posts their children's
	// targets already collect, by catalog id.
	Covered map[int64]*target.GroupCover
}

// catalogList is the column catalog: every column the CMS adapters have
// seen, filtered by admin level, topic tag, subscription, site and
// adapter, with the tag cloud beside it and check boxes for bulk
// subscription.
func (c *console) catalogList(w http.ResponseWriter, r *http.Request) {
	d, msg, err := c.catalogData(r.Context(), r.URL.Query())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	status := http.StatusOK
	if msg != "" {
		status = http.StatusBadRequest
	}
	c.renderCatalog(w, r, status, d, msg)
}

func (c *console) renderCatalog(w http.ResponseWriter, r *http.Request, status int, d *catalogData, msg string) {
	c.render(w, r, status, "catalog", page{Title: "栏目目录", Active: "catalog", Error: msg, Data: d})
}

// catalogData reads the page for the filter in q; msg says why a filter
// was refused (the page then shows the catalog without that filter).
func (c *console) catalogData(ctx context.Context, q url.Values) (*catalogData, string, error) {
	f := catalogFilter{Level: q.Get("level"), Tag: strings.TrimSpace(q.Get("tag")), Sub: q.Get("sub"),
		Site: strings.TrimSpace(q.Get("site")), Adapter: strings.TrimSpace(q.Get("adapter"))}
	d := &catalogData{Levels: adminLevels, Selected: map[int64]bool{},
		Defaults: catalogDefaults{Schedule: target.ScheduleDaily, Cadence: "7"}}
	if b := c.bundle(); b != nil {
		for id := range b.CMS {
			d.Adapters = append(d.Adapters, id)
		}
		sort.Strings(d.Adapters)
	}
	var msg string
	switch {
	case f.Level != "" && !slices.ContainsFunc(adminLevels, func(l struct{ Value, Label string }) bool { return l.Value == f.Level }):
		msg, f.Level = "行政层级无效，请从列表中选择。", ""
	case !slices.Contains([]string{"", "yes", "no"}, f.Sub):
		msg, f.Sub = "订阅筛选无效，请从列表中选择。", ""
	case len([]rune(f.Site)) > 100 || len([]rune(f.Tag)) > 100 || len(f.Adapter) > 50:
		msg, f.Site, f.Tag, f.Adapter = "筛选条件过长。", "", "", ""
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		f.Page = p
	}
	d.Filter = f
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		return nil, "", err
	}
	d.SiteNames = map[string]string{}
	for _, s := range sites {
		d.SiteNames[s.SiteCode] = s.SiteName
	}
	sf := store.ColumnFilter{AdminLevel: f.Level, Site: f.Site, AdapterID: f.Adapter, SubscribedOnly: f.Sub == "yes",
		UnsubscribedOnly: f.Sub == "no"}
	// The cloud counts the columns the other filters leave, so a click
	// on a tag never leads to an empty page.
	if d.Tags, err = c.store.ColumnTagCounts(ctx, sf); err != nil {
		return nil, "", err
	}
	sf.Tag = f.Tag
	if d.Total, err = c.store.CountColumns(ctx, sf); err != nil {
		return nil, "", err
	}
	page := max(f.Page, 1)
	sf.Limit, sf.Offset = catalogPageSize, (page-1)*catalogPageSize
	if d.Rows, err = c.store.ListColumnEntries(ctx, sf); err != nil {
		return nil, "", err
	}
	d.Covered = map[int64]*target.GroupCover{}
	judged := map[int64]map[int64]*target.GroupCover{}
	for _, row := range d.Rows {
		if row.ColumnPath == "" || row.Subscribed() {
			continue
		}
		covers, ok := judged[row.SiteID]
		if !ok {
			if covers, err = c.targets.GroupsCovered(ctx, row.SiteID); err != nil {
				return nil, "", err
			}
			judged[row.SiteID] = covers
		}
		if g := covers[row.ID]; g != nil {
			d.Covered[row.ID] = g
		}
	}
	v := f.query()
	d.Query = v.Encode()
	if page > 1 {
		v.Set("page", strconv.Itoa(page-1))
		d.PrevURL = Prefix + "/catalog?" + v.Encode()
	}
	if page*catalogPageSize < d.Total {
		v.Set("page", strconv.Itoa(page+1))
		d.NextURL = Prefix + "/catalog?" + v.Encode()
	}
	return d, msg, nil
}

// query is the filter without its page.
func (f catalogFilter) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"level": f.Level, "tag": f.Tag, "sub": f.Sub, "site": f.Site, "adapter": f.Adapter} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Page > 1 {
		v.Set("page", strconv.Itoa(f.Page))
	}
	return v
}

// TagURL is the catalog filtered by tag (a click in the cloud), the other
// filters kept; the same tag again clears it.
func (f catalogFilter) TagURL(tag string) string {
	v := f.query()
	v.Del("page")
	if f.Tag == tag {
		v.Del("tag")
	} else {
		v.Set("tag", tag)
	}
	return Prefix + "/catalog?" + v.Encode()
}
