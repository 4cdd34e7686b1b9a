package target

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// GroupCover is a gkmlpt group column (a node of the classify tree with
// columns under it) whose list — which the site fills with its children's
// posts — is already collected by enabled targets on those children. A
// target on the group would find every article already stored: it
// collects nothing and is 停更 from its first run.
type GroupCover struct {
	ColumnID, ColumnName string
	Children             []model.Target // the enabled targets on its child columns
}

// Warning says it in the console's words, naming the child targets.
func (g *GroupCover) Warning() string {
	var names []string
	for _, t := range g.Children {
		names = append(names, fmt.Sprintf("%s（%s）", t.ChannelName, t.TargetCode))
	}
	return fmt.Sprintf("栏目「%s」（编号 %s）是栏目组，列表里的文章都来自它的下级栏目，而这些文章已由下级栏目的采集目标采集：%s。"+
		"订阅它不会采到任何新文章，并会随即显示为停更；请改为订阅尚未采集的下级栏目。",
		g.ColumnName, g.ColumnID, strings.Join(names, "、"))
}

// GroupCovered finds whether column columnID of site department deptID is
// a group column already collected through its children, from the column
// catalog's tree (each column's path of names from the root, as the
// department's gkmlpt index gave it). nil: it is not, or the catalog does
// not know the column yet.
func (s *Service) GroupCovered(ctx context.Context, siteID, deptID int64, columnID string) (*GroupCover, error) {
	if columnID == "" {
		return nil, nil
	}
	cols, targets, err := s.siteColumns(ctx, siteID)
	if err != nil {
		return nil, err
	}
	for _, c := range cols {
		if c.ColumnID == columnID && c.SiteDepartmentID != nil && *c.SiteDepartmentID == deptID {
			return groupCover(c, cols, targets), nil
		}
	}
	return nil, nil
}

// GroupsCovered is GroupCovered for every catalog column of the site, by
// catalog id: the catalog marks them before anyone ticks them.
func (s *Service) GroupsCovered(ctx context.Context, siteID int64) (map[int64]*GroupCover, error) {
	cols, targets, err := s.siteColumns(ctx, siteID)
	if err != nil {
		return nil, err
	}
	out := map[int64]*GroupCover{}
	for _, c := range cols {
		if g := groupCover(c, cols, targets); g != nil {
			out[c.ID] = g
		}
	}
	return out, nil
}

func (s *Service) siteColumns(ctx context.Context, siteID int64) ([]store.ColumnEntry, []model.Target, error) {
	cols, err := s.Store.ListColumnEntries(ctx, store.ColumnFilter{SiteID: siteID})
	if err != nil {
		return nil, nil, err
	}
	site, err := s.Store.SiteByID(ctx, siteID)
	if err != nil {
		return nil, nil, err
	}
	targets, err := s.Store.ListTargets(ctx, store.TargetFilter{SiteCode: site.SiteCode, EnabledOnly: true})
	if err != nil {
		return nil, nil, err
	}
	return cols, targets, nil
}

// groupCover judges self against its site's catalog columns and enabled
// targets: a group is covered when every leaf under it is collected, on
// the leaf itself or on a column between it and the group.
func groupCover(self store.ColumnEntry, cols []store.ColumnEntry, targets []model.Target) *GroupCover {
	if self.SiteDepartmentID == nil || self.ColumnPath == "" || self.Subscribed() {
		return nil
	}
	deptID := *self.SiteDepartmentID
	var under []store.ColumnEntry
	for _, c := range cols {
		if c.SiteDepartmentID != nil && *c.SiteDepartmentID == deptID && c.Active &&
			strings.HasPrefix(c.ColumnPath, self.ColumnPath+"｜") {
			under = append(under, c)
		}
	}
	if len(under) == 0 {
		return nil
	}
	collected := map[string]model.Target{} // by column id
	for _, t := range targets {
		if t.SiteDepartmentID != nil && *t.SiteDepartmentID == deptID && t.ColumnID != "" {
			collected[t.ColumnID] = t
		}
	}
	g := &GroupCover{ColumnID: self.ColumnID, ColumnName: self.ColumnName}
	seen := map[string]bool{}
	for _, leaf := range under {
		if slices.ContainsFunc(under, func(c store.ColumnEntry) bool { return strings.HasPrefix(c.ColumnPath, leaf.ColumnPath+"｜") }) {
			continue // not a leaf
		}
		var by *model.Target
		for _, c := range under {
			if t, ok := collected[c.ColumnID]; ok && (c.ColumnPath == leaf.ColumnPath || strings.HasPrefix(leaf.ColumnPath, c.ColumnPath+"｜")) {
				by = &t
				break
			}
		}
		if by == nil {
			return nil // this leaf's posts would be new
		}
		if !seen[by.TargetCode] {
			seen[by.TargetCode] = true
			g.Children = append(g.Children, *by)
		}
	}
	return g
}
