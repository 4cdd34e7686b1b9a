package crawl_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestColumnRegistry checks what the gkmlpt index TREE writes into
// master_column_registry (seed 004 §5.8, §7.6): every column seen, its
// admin level, its topic tags from topic_synonyms.yaml, its subscription,
// and vanished columns marked inactive rather than deleted.
func TestColumnRegistry(t *testing.T) {
	st := storetest.SQLite(t)
	w := newWorld(t, st, false)
	ctx := context.Background()

	// A column the CMS no longer shows: the crawl must mark it inactive.
	qc, err := st.SiteByCode(ctx, "qingcheng")
	if err != nil {
		t.Fatal(err)
	}
	gone := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: qc.ID, ColumnID: "999999", ColumnName: "已撤销栏目",
		AdminLevel: "county", TopicTags: []string{}, LastSeenAt: time.Now(), Active: true}
	if err := st.UpsertColumnRegistry(ctx, gone); err != nil {
		t.Fatal(err)
	}

	w.crawl(t, nil, false)

	cols, err := st.ListColumns(ctx, store.ColumnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]model.ColumnRegistry{}
	for _, c := range cols {
		if c.SiteID == qc.ID {
			byID[c.ColumnID] = c
		}
	}
	if c, ok := byID["999999"]; !ok || c.Active {
		t.Errorf("vanished column: %+v (want kept, inactive)", c)
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: "qingcheng"})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) == 0 {
		t.Fatal("no qingcheng targets")
	}
	for _, tg := range targets {
		c, ok := byID[tg.ColumnID]
		switch {
		case !ok:
			t.Errorf("configured column %s missing from the registry", tg.ColumnID)
		case !c.Active || c.AdminLevel != "county" || c.PostCount <= 0:
			t.Errorf("column %s: %+v", tg.ColumnID, c)
		case c.SubscribedTargetID == nil || *c.SubscribedTargetID != tg.ID:
			t.Errorf("column %s not subscribed to target %d: %v", tg.ColumnID, tg.ID, c.SubscribedTargetID)
		case c.SiteDepartmentID == nil || *c.SiteDepartmentID != *tg.SiteDepartmentID:
			// The catalog subscribes a column under the department that
			// listed it, so the registry must know which one that is.
			t.Errorf("column %s: site department %v, want %d", tg.ColumnID, c.SiteDepartmentID, *tg.SiteDepartmentID)
		}
	}
	// "规划计划 " (trailing space on the site) is stored trimmed and tagged.
	tagged, err := st.ListColumns(ctx, store.ColumnFilter{Tag: "规划计划", ActiveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sites := map[int64]bool{}
	for _, c := range tagged {
		if !slices.Contains(c.TopicTags, "规划计划") {
			t.Errorf("column %s/%s listed for tag 规划计划 without it: %v", c.ColumnName, c.ColumnID, c.TopicTags)
		}
		if c.ColumnName != "规划计划" && c.ColumnName != "规划与计划" && c.ColumnName != "发展规划" {
			continue
		}
		sites[c.SiteID] = true
	}
	if len(sites) < 2 {
		t.Errorf("tag 规划计划 found on %d sites, want the county sites' variants (规划计划 / 规划与计划): %+v", len(sites), tagged)
	}
}
