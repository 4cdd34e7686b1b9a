// Package configsync owns the configuration's way into the database and the
// running processes: Sync writes a loaded bundle's sites, departments and
// targets and counts a generation; Live reloads the directory when it sees
// a new one. It is apart from config so that loading and linting the files
// (and fuzzing them) does not depend on the store.
package configsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Counts counts what a sync did to one kind of row.
type Counts struct {
	Created   int
	Updated   int
	Unchanged int
}

// Report says what Sync wrote.
type Report struct {
	Sites           Counts
	Depts           Counts
	Targets         Counts
	TargetsDisabled int // yaml targets gone from the files
	OverridesKept   int // target fields a person changed, kept over the files
}

// String is the report as printed by `zhizhi config sync`.
func (r Report) String() string {
	line := func(name string, c Counts) string {
		return fmt.Sprintf("%-8s %d created, %d updated, %d unchanged", name+":", c.Created, c.Updated, c.Unchanged)
	}
	return strings.Join([]string{
		line("sites", r.Sites),
		line("depts", r.Depts),
		line("targets", r.Targets) + fmt.Sprintf(", %d disabled", r.TargetsDisabled) + r.keptNote(),
	}, "\n")
}

// keptNote tells whoever runs the sync that some target settings follow a
// person's change, not the files, and where to see them.
func (r Report) keptNote() string {
	if r.OverridesKept == 0 {
		return ""
	}
	return fmt.Sprintf("; %d setting(s) changed by a person kept over the files (see the console, or `zhizhi target list` for enabled)", r.OverridesKept)
}

// ErrConfigInvalid is returned by Sync for a bundle that lint rejects.
var ErrConfigInvalid = errors.New("configuration has errors")

// Sync writes the bundle's sites, site departments and targets to the
// database in one transaction (YAML → DB at start). Targets
// are written with source yaml, a cron from config.AssignCron and dept_id derived
// from the binding. A yaml target that is no longer in the files is
// disabled, never deleted, so its history stays. Runtime state (detect
// status, last crawl times) is not touched. Each sync counts one more
// configuration generation, which tells running serve processes to read
// the files again. Either everything is written or
// nothing: a bundle with lint errors, or a local_dept_id missing from
// local_department, writes nothing. A field a person changed in the console
// (a target_override) keeps its value: YAML is the template, the database
// the runtime truth.
func Sync(ctx context.Context, st *store.Store, b *config.Bundle) (Report, error) {
	var rep Report
	if errs := config.Errors(b.Problems); len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, p := range errs {
			lines[i] = p.String()
		}
		return rep, fmt.Errorf("config sync: %w (run `zhizhi config lint`):\n%s", ErrConfigInvalid, strings.Join(lines, "\n"))
	}
	// A directory with no site file is far more likely the wrong directory
	// than the wish to stop crawling everything: syncing it would disable
	// every yaml target in the database.
	if len(b.Sites) == 0 {
		return rep, fmt.Errorf("config sync: %w: %s holds no site file (%s/*.yaml) — check ZHIZHI_CONFIG_DIR / --dir; nothing written",
			ErrConfigInvalid, b.Dir, config.SitesDir)
	}

	// What exists already, read before the transaction, only to tell
	// created from updated in the report.
	known, err := existing(ctx, st)
	if err != nil {
		return rep, fmt.Errorf("config sync: %w", err)
	}

	err = st.WithTx(ctx, func(tx *store.Tx) error {
		rep = Report{}
		if err := checkDepartmentsExist(ctx, tx, b); err != nil {
			return err
		}
		var keep []string
		for _, s := range b.Sites {
			site := b.SiteModel(s)
			if old := known.sites[s.SiteCode]; old != nil {
				site.CreatedAt, site.UpdatedAt = old.CreatedAt, old.UpdatedAt
			}
			siteID, changed, err := tx.UpsertSite(ctx, site)
			if err != nil {
				return fmt.Errorf("%s: %w", s.Path, err)
			}
			count(&rep.Sites, changed, known.sites[s.SiteCode] != nil)

			deptIDs := map[*config.Dept]int64{}
			for _, d := range s.Depts {
				dm := d.DepartmentModel()
				dm.SiteID = siteID
				id, changed, err := tx.UpsertSiteDepartment(ctx, dm)
				if err != nil {
					return fmt.Errorf("%s: dept %s: %w", s.Path, d.DeptPath, err)
				}
				deptIDs[d] = id
				count(&rep.Depts, changed, known.depts[s.SiteCode+"\x00"+d.DeptPath])
			}

			for _, t := range s.Targets() {
				tm := t.Model()
				tm.SiteID = siteID
				if old := known.targets[t.TargetCode]; old != nil {
					tm.CreatedAt, tm.UpdatedAt = old.CreatedAt, old.UpdatedAt
				}
				if t.Dept != nil {
					id := deptIDs[t.Dept]
					tm.SiteDepartmentID = &id
				}
				// What a person changed in the console wins over the files.
				kept, err := tx.ApplyTargetOverrides(ctx, tm)
				if err != nil {
					return fmt.Errorf("%s: target %s: %w", t.Pos, t.TargetCode, err)
				}
				rep.OverridesKept += len(kept)
				_, changed, err := tx.UpsertTarget(ctx, tm)
				if err != nil {
					return fmt.Errorf("%s: target %s: %w", t.Pos, t.TargetCode, err)
				}
				count(&rep.Targets, changed, known.targets[t.TargetCode] != nil)
				keep = append(keep, t.TargetCode)
			}
		}
		slices.Sort(keep)
		n, err := tx.DisableYAMLTargetsExcept(ctx, keep)
		if err != nil {
			return err
		}
		rep.TargetsDisabled = n
		// Counted even when no row changed: a template or adapter file
		// may have, and running serve processes reload on a new count.
		_, err = tx.BumpConfigGeneration(ctx)
		return err
	})
	if err != nil {
		return Report{}, fmt.Errorf("config sync: %w", err)
	}
	return rep, nil
}

func count(c *Counts, changed, existed bool) {
	switch {
	case !changed:
		c.Unchanged++
	case existed:
		c.Updated++
	default:
		c.Created++
	}
}

// existingRows is what the database held before the sync: it tells created
// from updated in the report. The stored timestamps are also passed along
// with each row because the store's sameSite/sameTarget currently compare
// timestamps too; without them every unchanged row would be rewritten.
type existingRows struct {
	sites   map[string]*model.Site   // by site_code
	depts   map[string]bool          // site_code + NUL + dept_path
	targets map[string]*model.Target // by target_code
}

func existing(ctx context.Context, st *store.Store) (existingRows, error) {
	ex := existingRows{sites: map[string]*model.Site{}, depts: map[string]bool{}, targets: map[string]*model.Target{}}
	sites, err := st.ListSites(ctx)
	if err != nil {
		return ex, err
	}
	for i, s := range sites {
		ex.sites[s.SiteCode] = &sites[i]
		if s.CMSAdapter == "" {
			continue
		}
		depts, err := st.ListSiteDepartments(ctx, s.ID)
		if err != nil {
			return ex, err
		}
		for _, d := range depts {
			ex.depts[s.SiteCode+"\x00"+d.DeptPath] = true
		}
	}
	targets, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		return ex, err
	}
	for i, t := range targets {
		ex.targets[t.TargetCode] = &targets[i]
	}
	return ex, nil
}

// checkDepartmentsExist refuses the sync when a mapped dept or target names
// a department that is not in local_department, listing every one at once.
func checkDepartmentsExist(ctx context.Context, tx *store.Tx, b *config.Bundle) error {
	exists := map[int64]bool{}
	var missing []string
	for _, u := range b.LocalDeptRefs() {
		ok, checked := exists[u.ID]
		if !checked {
			var err error
			ok, err = tx.DepartmentExists(ctx, u.ID)
			if err != nil {
				return fmt.Errorf("check department %d: %w", u.ID, err)
			}
			exists[u.ID] = ok
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s: local_dept_id %d is not in local_department", u.Pos, u.ID))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d department binding(s) name unknown departments — import them first with `zhizhi dept import %s`, nothing was written:\n%s",
			len(missing), filepath.Join(b.Dir, config.DepartmentsFile), strings.Join(missing, "\n"))
	}
	return nil
}
