package storetest

import (
	"context"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// CatalogColumn puts a gkmlpt column of site department deptPath of site
// siteCode into the column catalog, as a crawl of the department's index
// would, and returns its catalog id. The site and department must be in st
// already (a synced configuration).
func CatalogColumn(t testing.TB, st *store.Store, siteCode, deptPath, columnID, name string) int64 {
	t.Helper()
	ctx := context.Background()
	site, err := st.SiteByCode(ctx, siteCode)
	if err != nil {
		t.Fatal(err)
	}
	depts, err := st.ListSiteDepartments(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range depts {
		if d.DeptPath != deptPath {
			continue
		}
		col := &model.ColumnRegistry{AdapterID: "gkmlpt", SiteID: site.ID, SiteDepartmentID: &d.ID, ColumnID: columnID,
			ColumnName: name, AdminLevel: "county", PostCount: 4, Active: true, LastSeenAt: time.Now()}
		if err := st.UpsertColumnRegistry(ctx, col); err != nil {
			t.Fatal(err)
		}
		return col.ID
	}
	t.Fatalf("site %s has no department %s", siteCode, deptPath)
	return 0
}
