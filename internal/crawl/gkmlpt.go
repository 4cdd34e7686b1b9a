package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"zhizhi/internal/adapter"
	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// indexCache holds each dept's gkmlpt index for one run, so the targets of a
// dept fetch it once.
type indexCache struct {
	mu    sync.Mutex
	byKey map[string]*adapter.GkmlptIndex
	// seen collects, per site, every column id seen in any index, for
	// marking vanished columns inactive.
	seen map[int64]map[string]bool
}

func (c *Crawler) indexes() *indexCache {
	c.once.Do(func() {
		c.cache = &indexCache{byKey: map[string]*adapter.GkmlptIndex{}, seen: map[int64]map[string]bool{}}
	})
	return c.cache
}

func adminLevel(role string) string {
	switch role {
	case model.RoleQingyuanLocal:
		return "city"
	case model.RoleCountyLocal:
		return "county"
	}
	return ""
}

// gkmlptIndex fetches and parses a dept's index page once per run, records
// the probe on site_department and upserts every column of the TREE into
// master_column_registry (not in a dry run: validate records nothing).
func (j *job) gkmlptIndex(ctx context.Context, a *config.Adapter, dept *model.SiteDepartment) (*adapter.GkmlptIndex, error) {
	cache := j.c.indexes()
	key := fmt.Sprintf("%d/%s", j.site.ID, dept.DeptPath)
	cache.mu.Lock()
	idx := cache.byKey[key]
	cache.mu.Unlock()
	if idx != nil {
		return idx, nil
	}
	u := config.ExpandURL(a.Index.URL, map[string]string{
		"base_url": strings.TrimRight(j.site.BaseURL, "/"), "dept_path": dept.DeptPath,
	})
	resp, err := j.get(ctx, j.request(model.PurposeIndex, u))
	if err != nil {
		if !j.dryRun {
			_ = j.c.Store.RecordProbe(ctx, dept.ID, model.DetectFailed, j.c.now(), nil)
		}
		return nil, fmt.Errorf("gkmlpt index %s: %w", u, err)
	}
	j.res.Pages++
	html, _, err := resp.HTML()
	if err == nil {
		idx, err = adapter.ParseGkmlptIndex(html, a.Index.ConfigVar)
	}
	if err != nil {
		if !j.dryRun {
			_ = j.c.Store.RecordProbe(ctx, dept.ID, model.DetectFailed, j.c.now(), nil)
		}
		return nil, fmt.Errorf("gkmlpt index %s: %w", u, err)
	}
	top := []map[string]any{}
	for _, col := range idx.Columns {
		if col.ParentID == "" {
			top = append(top, map[string]any{"id": col.ID, "name": col.Name, "post_count": col.PostCount})
		}
	}
	if err := j.recordProbeOK(ctx, dept, top); err != nil {
		return nil, fmt.Errorf("record probe of %s: %w", dept.DeptPath, err)
	}
	now := j.c.now()
	for _, col := range idx.Columns {
		if j.dryRun {
			break
		}
		reg := &model.ColumnRegistry{
			AdapterID: a.AdapterID, SiteID: j.site.ID, SiteDepartmentID: &dept.ID, ColumnID: col.ID, ColumnName: col.Name,
			ColumnPath: col.Path, AdminLevel: adminLevel(j.site.SiteRole), PostCount: col.PostCount,
			LastSeenAt: now, Active: true, TopicTags: j.c.Bundle.Topics.Tags(col.Name),
		}
		if reg.TopicTags == nil {
			reg.TopicTags = []string{}
		}
		if err := j.c.Store.UpsertColumnRegistry(ctx, reg); err != nil {
			return nil, fmt.Errorf("column registry %s/%s: %w", dept.DeptPath, col.ID, err)
		}
	}
	cache.mu.Lock()
	cache.byKey[key] = idx
	if cache.seen[j.site.ID] == nil {
		cache.seen[j.site.ID] = map[string]bool{}
	}
	for _, col := range idx.Columns {
		cache.seen[j.site.ID][col.ID] = true
	}
	cache.mu.Unlock()
	return idx, nil
}

func gkmlptParser(a *config.Adapter) detailParser {
	return func(body []byte, u *url.URL) (*adapter.Detail, error) {
		return adapter.ParseDetail(body, u, a.Detail.DetailTemplate)
	}
}

// runGkmlpt crawls one gkmlpt column through the list API, page by page,
// stopping at the first page of known, unchanged articles.
func (j *job) runGkmlpt(ctx context.Context) error {
	a := j.c.Bundle.CMS[j.site.CMSAdapter]
	if a == nil {
		return fmt.Errorf("adapter %q of site %s is not in %s/cms", j.site.CMSAdapter, j.site.SiteCode, j.c.Bundle.Dir)
	}
	if j.target.SiteDepartmentID == nil {
		return fmt.Errorf("target %s has no site department", j.target.TargetCode)
	}
	if j.target.ColumnID == "" {
		return fmt.Errorf("target %s has no column_id", j.target.TargetCode)
	}
	dept, err := j.c.Store.SiteDepartmentByID(ctx, *j.target.SiteDepartmentID)
	if err != nil {
		return fmt.Errorf("site department of %s: %w", j.target.TargetCode, err)
	}
	idx, err := j.gkmlptIndex(ctx, a, dept)
	if err != nil {
		return err
	}
	params := map[string]any{}
	if len(j.site.AdapterParams) > 0 {
		// A site's parameters that do not read would crawl with none (an
		// empty sid, the wrong columns): refuse, naming the site.
		if err := json.Unmarshal(j.site.AdapterParams, &params); err != nil {
			return fmt.Errorf("adapter_params of site %s (adapter %s) are not a JSON object: %v — fix the site's file and run zhizhi config sync",
				j.site.SiteCode, j.site.CMSAdapter, err)
		}
	}
	sid := idx.SID
	if sid == "" {
		sid = fmt.Sprint(params["sid"])
	}
	found := false
	for _, col := range idx.Columns {
		if col.ID == j.target.ColumnID {
			found = true
			tid := j.target.ID
			reg := &model.ColumnRegistry{
				AdapterID: a.AdapterID, SiteID: j.site.ID, SiteDepartmentID: &dept.ID, ColumnID: col.ID, ColumnName: col.Name,
				ColumnPath: col.Path, AdminLevel: adminLevel(j.site.SiteRole), PostCount: col.PostCount,
				LastSeenAt: j.c.now(), Active: true, SubscribedTargetID: &tid, TopicTags: j.c.Bundle.Topics.Tags(col.Name),
			}
			if reg.TopicTags == nil {
				reg.TopicTags = []string{}
			}
			if err := j.c.Store.UpsertColumnRegistry(ctx, reg); err != nil {
				return fmt.Errorf("column registry: %w", err)
			}
		}
	}
	if !found {
		return fmt.Errorf("column %s is not in the classify TREE of %s (removed from the CMS?)", j.target.ColumnID, dept.DeptPath)
	}

	j.parse = gkmlptParser(a)
	vars := map[string]string{
		"base_url": strings.TrimRight(j.site.BaseURL, "/"), "dept_path": dept.DeptPath,
		"column_id": j.target.ColumnID, "sid": sid,
	}
	for k, v := range params {
		if _, ok := vars[k]; !ok {
			vars[k] = fmt.Sprint(v)
		}
	}
	if err := j.startWalk(ctx); err != nil {
		return err
	}
	first := a.List.FirstPage
	seenItems := 0
	for page := first; ; page++ {
		if page >= first+j.c.maxListPages() {
			return j.finishWalk(ctx, store.WalkReachedLimit)
		}
		if j.c.draining() {
			return ErrInterrupted
		}
		vars["page"] = strconv.Itoa(page)
		u := config.ExpandURL(a.List.URL, vars)
		resp, err := j.get(ctx, j.request(model.PurposeList, u))
		if err != nil {
			return fmt.Errorf("list API page %d: %w", page, err)
		}
		j.res.Pages++
		j.c.emit(Event{Target: j.target.TargetCode, Kind: "page"})
		body, _, err := resp.Text()
		if err != nil {
			return fmt.Errorf("list API page %d: decode: %w", page, err)
		}
		lp, _, err := adapter.ParseGkmlptList(body, mustParse(resp.URL), a.List)
		if err != nil {
			return fmt.Errorf("list API page %d: %w", page, err)
		}
		if len(lp.Items) == 0 {
			return j.finishWalk(ctx, store.WalkReachedEnd)
		}
		settled, err := j.discover(ctx, page-first+1, lp.Items)
		if err != nil {
			return err
		}
		seenItems += len(lp.Items)
		switch {
		case settled:
			return j.finishWalk(ctx, store.WalkReachedKnown)
		case lp.Total > 0 && seenItems >= lp.Total:
			return j.finishWalk(ctx, store.WalkReachedEnd)
		}
	}
}

// finishSite marks columns that vanished from every index of a site
// inactive, once all of the site's depts were read in this run.
func (c *Crawler) finishSite(ctx context.Context, site *model.Site, allIndexed bool) {
	if site == nil || site.CMSAdapter == "" || !allIndexed {
		return
	}
	cache := c.indexes()
	cache.mu.Lock()
	seen := cache.seen[site.ID]
	keep := make([]string, 0, len(seen))
	for id := range seen {
		keep = append(keep, id)
	}
	cache.mu.Unlock()
	if len(keep) == 0 {
		return
	}
	if _, err := c.Store.DeactivateColumnsExcept(ctx, site.CMSAdapter, site.ID, keep); err != nil {
		c.log().Warn("deactivate vanished columns", "site", site.SiteCode, "err", err)
	}
}

func (j *job) recordProbeOK(ctx context.Context, dept *model.SiteDepartment, top []map[string]any) error {
	if j.dryRun {
		return nil
	}
	return j.c.Store.RecordProbe(ctx, dept.ID, model.DetectOK, j.c.now(), marshal(top))
}
