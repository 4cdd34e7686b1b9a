package target

import (
	"context"
	"errors"
	"fmt"
	"time"

	"zhizhi/internal/adapter"
	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// ColumnLister reads the newest page of a CMS column's article list the way
// a crawl of t would, storing nothing: (*crawl.Crawler).PreviewColumn.
type ColumnLister func(ctx context.Context, site *model.Site, t *model.Target) ([]adapter.ListItem, error)

// ErrNoLister refuses a column preview when the service was built without
// a way to read the column.
var ErrNoLister = errors.New("no column preview available")

// previewItems is how many articles a column preview shows: one list page.
const previewItems = 20

// ColumnPreview is the newest page of one catalog column, read live from
// its site, so a person sees what the column holds before subscribing.
type ColumnPreview struct {
	Column store.ColumnEntry `json:"-"`
	Items  []PreviewItem     `json:"items"`
	// Problem says why the list could not be read (the site refused, the
	// column is gone, robots.txt forbids it …); Items is empty then.
	Problem string `json:"problem,omitempty"`
	// Warning: a group column whose posts its children's targets already
	// collect (GroupCovered); subscribing would collect nothing.
	Warning string    `json:"warning,omitempty"`
	ReadAt  time.Time `json:"read_at"`
}

// PreviewItem is one article of a column preview.
type PreviewItem struct {
	Title     string `json:"title"`
	URL       string `json:"url"`
	Date      string `json:"date,omitempty"` // YYYY-MM-DD (Asia/Shanghai), or as the list gives it when unreadable
	DocNo     string `json:"doc_no,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	Abolished bool   `json:"abolished,omitempty"`
}

// PreviewColumn reads the newest list page of catalog column registryID.
// A column the site cannot be asked about (no department known yet) or a
// site that does not answer is a preview with a Problem, not an error;
// errors are for an unknown column (ErrNotFound), a service without a
// lister (ErrNoLister) and the database.
func (s *Service) PreviewColumn(ctx context.Context, registryID int64) (*ColumnPreview, error) {
	e, err := s.Store.ColumnEntryByID(ctx, registryID)
	if err != nil {
		return nil, err
	}
	if s.List == nil {
		return nil, ErrNoLister
	}
	p := &ColumnPreview{Column: *e}
	if e.SiteDepartmentID == nil {
		p.Problem = "不知道它属于哪个站点部门：先抓取一次该部门的栏目索引"
		return p, nil
	}
	dept, err := s.Store.SiteDepartmentByID(ctx, *e.SiteDepartmentID)
	if err != nil {
		return nil, err
	}
	site, err := s.Store.SiteByID(ctx, e.SiteID)
	if err != nil {
		return nil, err
	}
	if e.TargetCode == "" {
		g, err := s.GroupCovered(ctx, site.ID, dept.ID, e.ColumnID)
		if err != nil {
			return nil, err
		}
		if g != nil {
			p.Warning = g.Warning()
		}
	}
	items, err := s.List(ctx, site, columnTarget(site, dept, e))
	p.ReadAt = time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("preview column %d: %w", registryID, ctx.Err())
		}
		p.Problem = fetch.Explain("该栏目的列表", err)
		return p, nil
	}
	for _, it := range items[:min(len(items), previewItems)] {
		date := it.Date
		if t, _, err := extract.ParseDate(date); err == nil {
			date = t.In(extract.Shanghai).Format(time.DateOnly) // gkmlpt lists give Unix seconds
		}
		p.Items = append(p.Items, PreviewItem{Title: it.Title, URL: it.URL, Date: date,
			DocNo: it.Fields["doc_no"], Publisher: it.Fields["publisher"], Abolished: it.Abolished})
	}
	return p, nil
}

// columnTarget is the target a catalog column becomes: the department's
// column, named after its owner, with the entry URL and channel path the
// crawler and the knowledge base read.
func columnTarget(site *model.Site, dept *model.SiteDepartment, e *store.ColumnEntry) *model.Target {
	owner := dept.DeptDisplayName
	if owner == "" {
		owner = site.SiteName
	}
	path := e.ColumnPath
	if path == "" {
		path = e.ColumnName
	}
	registryID := e.ID
	return &model.Target{
		SiteID: site.ID, SiteDepartmentID: &dept.ID, TargetCode: config.DefaultTargetCode(site.SiteCode, dept.DeptPath, e.ColumnID),
		TargetName: truncate(owner+"｜"+e.ColumnName, 200), EntryURL: columnEntryURL(site, dept.DeptPath, e.ColumnID),
		ColumnID: e.ColumnID, ChannelName: truncate(e.ColumnName, 200), ChannelPath: truncate("信息公开｜"+path, 1000),
		RegistryID: &registryID,
	}
}
