package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

const siteDepartmentColumns = `id, site_id, dept_path, local_dept_id, dept_binding, dept_display_name,
	detect_status, last_probed_at, last_classify_json, enabled, created_at, updated_at`

func scanSiteDepartment(row interface{ Scan(...any) error }) (*model.SiteDepartment, error) {
	var d model.SiteDepartment
	err := row.Scan(&d.ID, &d.SiteID, &d.DeptPath, &d.LocalDeptID, &d.DeptBinding, strCol{&d.DeptDisplayName},
		&d.DetectStatus, nullTimeCol{&d.LastProbedAt}, jsonCol{&d.LastClassifyJSON}, &d.Enabled,
		timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// UpsertSiteDepartment inserts or updates the department (d.SiteID,
// d.DeptPath) and sets d.ID. The runtime fields detect_status,
// last_probed_at and last_classify_json are written on insert only; an
// update never touches them (they belong to the prober, not to config).
func (t *Tx) UpsertSiteDepartment(ctx context.Context, d *model.SiteDepartment) (id int64, changed bool, err error) {
	if d.DeptBinding == "" {
		d.DeptBinding = model.BindingPending
	}
	if d.DetectStatus == "" {
		d.DetectStatus = model.DetectPending
	}
	old, err := scanSiteDepartment(t.c.queryRow(ctx, `SELECT `+siteDepartmentColumns+`
		FROM site_department WHERE site_id = ? AND dept_path = ?`, d.SiteID, d.DeptPath))
	if err != nil && notFound(err) != ErrNotFound {
		return 0, false, fmt.Errorf("upsert site department %s: %w", d.DeptPath, err)
	}
	now := t.s.now()
	if old == nil {
		id, err := t.c.insertID(ctx, `INSERT INTO site_department (site_id, dept_path, local_dept_id,
			dept_binding, dept_display_name, detect_status, last_probed_at, last_classify_json, enabled,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.SiteID, d.DeptPath, d.LocalDeptID, d.DeptBinding, nullStr(d.DeptDisplayName), d.DetectStatus,
			t.s.tsPtr(d.LastProbedAt), jsonArg(d.LastClassifyJSON), d.Enabled, t.s.ts(now), t.s.ts(now))
		if err != nil {
			return 0, false, fmt.Errorf("upsert site department %s: %w", d.DeptPath, err)
		}
		d.ID, d.CreatedAt, d.UpdatedAt = id, now, now
		return id, true, nil
	}
	d.ID, d.CreatedAt = old.ID, old.CreatedAt
	d.DetectStatus, d.LastProbedAt, d.LastClassifyJSON = old.DetectStatus, old.LastProbedAt, old.LastClassifyJSON
	if equalInt64Ptr(old.LocalDeptID, d.LocalDeptID) && old.DeptBinding == d.DeptBinding &&
		old.DeptDisplayName == d.DeptDisplayName && old.Enabled == d.Enabled {
		d.UpdatedAt = old.UpdatedAt
		return old.ID, false, nil
	}
	_, err = t.c.exec(ctx, `UPDATE site_department SET local_dept_id = ?, dept_binding = ?,
		dept_display_name = ?, enabled = ?, updated_at = ? WHERE id = ?`,
		d.LocalDeptID, d.DeptBinding, nullStr(d.DeptDisplayName), d.Enabled, t.s.ts(now), old.ID)
	if err != nil {
		return 0, false, fmt.Errorf("upsert site department %s: %w", d.DeptPath, err)
	}
	d.UpdatedAt = now
	return old.ID, true, nil
}

// SiteDepartmentByID returns the site department with id, or ErrNotFound.
func (s *Store) SiteDepartmentByID(ctx context.Context, id int64) (*model.SiteDepartment, error) {
	d, err := scanSiteDepartment(s.conn().queryRow(ctx, `SELECT `+siteDepartmentColumns+`
		FROM site_department WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("site department %d: %w", id, notFound(err))
	}
	return d, nil
}

// ListSiteDepartments returns the departments of a site ordered by dept_path.
func (s *Store) ListSiteDepartments(ctx context.Context, siteID int64) ([]model.SiteDepartment, error) {
	rows, err := s.conn().query(ctx, `SELECT `+siteDepartmentColumns+`
		FROM site_department WHERE site_id = ? ORDER BY dept_path`, siteID)
	if err != nil {
		return nil, fmt.Errorf("list site departments: %w", err)
	}
	defer rows.Close()
	var out []model.SiteDepartment
	for rows.Next() {
		d, err := scanSiteDepartment(rows)
		if err != nil {
			return nil, fmt.Errorf("list site departments: %w", err)
		}
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list site departments: %w", err)
	}
	return out, nil
}

// RecordProbe stores the result of probing a department's gkmlpt entry:
// detect_status, the probe time and the classify snapshot (nil keeps the
// previous snapshot).
func (s *Store) RecordProbe(ctx context.Context, siteDepartmentID int64, status string, at time.Time, classify json.RawMessage) error {
	_, err := s.conn().exec(ctx, `UPDATE site_department SET detect_status = ?, last_probed_at = ?,
		last_classify_json = COALESCE(?, last_classify_json) WHERE id = ?`,
		status, s.ts(at), jsonArg(classify), siteDepartmentID)
	if err != nil {
		return fmt.Errorf("record probe of site department %d: %w", siteDepartmentID, err)
	}
	return nil
}

func equalInt64Ptr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
