package ui

import (
	"context"
	"errors"
	"net/url"
	"slices"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// badPageMsg refuses a "before" cursor the console did not write.
const badPageMsg = "分页参数无效，请从第一页重新浏览。"

// listURL is a list page's address with the filter's query, if it has one.
func listURL(path string, v url.Values) string {
	if len(v) == 0 {
		return Prefix + path
	}
	return Prefix + path + "?" + v.Encode()
}

// nextPage cuts rows, fetched one past size, to one page and gives the
// address of the next (older) page: the filter v with the last row's
// cursor as "before"; "" when there is no more.
func nextPage[T any](rows []T, size int, path string, v url.Values, cursor func(T) string) ([]T, string) {
	if len(rows) <= size {
		return rows, ""
	}
	rows = rows[:size]
	v.Set("before", cursor(rows[len(rows)-1]))
	return rows, listURL(path, v)
}

// siteTargetIDs resolves the site and target codes a list is filtered by
// ("" for none) to their ids. msg is the page's refusal when a code names
// nothing, the site's first as the form lists it first.
func (c *console) siteTargetIDs(ctx context.Context, sites []model.Site, site, target string) (siteID, targetID *int64, msg string, err error) {
	if site != "" {
		i := slices.IndexFunc(sites, func(s model.Site) bool { return s.SiteCode == site })
		if i < 0 {
			return nil, nil, "没有站点「" + site + "」，请从列表中选择。", nil
		}
		siteID = &sites[i].ID
	}
	if target != "" {
		t, err := c.store.TargetByCode(ctx, target)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, "没有采集目标「" + target + "」，请检查目标代码。", nil
		}
		if err != nil {
			return nil, nil, "", err
		}
		targetID = &t.ID
	}
	return siteID, targetID, "", nil
}

// sitesByID, deptNames and targetCodes index what a page joins its rows to.
func sitesByID(sites []model.Site) map[int64]model.Site {
	m := make(map[int64]model.Site, len(sites))
	for _, s := range sites {
		m[s.ID] = s
	}
	return m
}

func deptNames(depts []model.Department) map[int64]string {
	m := make(map[int64]string, len(depts))
	for _, d := range depts {
		m[d.DeptID] = d.DeptName
	}
	return m
}

func targetCodes(targets []model.Target) map[int64]string {
	m := make(map[int64]string, len(targets))
	for _, t := range targets {
		m[t.ID] = t.TargetCode
	}
	return m
}

// crawlNotice tells the person whom "crawl now" sent back to this page (its
// query q) what became of the target (code, name) — called only for the
// targets the page lists, so a crafted link cannot make it claim a crawl
// that was never queued. button is the page's word for the action.
func crawlNotice(p *page, q url.Values, code, name, button string) {
	switch code {
	case q.Get("crawl"):
		p.Flash = "已将「" + name + "」加入抓取队列，排在定时任务之前。"
		if q.Get("state") == "running" {
			p.Flash = "「" + name + "」正在抓取中，未重复加入队列。"
		}
	case q.Get("refused"):
		p.Error = "「" + name + "」已停用（或其站点、部门已停用），不能" + button + "。"
	}
}
