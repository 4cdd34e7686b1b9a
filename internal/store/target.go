package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"zhizhi/internal/model"
)

const targetColumns = `t.id, t.site_id, t.site_department_id, t.target_code, t.target_name, t.entry_url,
	t.sample_article_url, t.dept_id, t.column_id, t.parser_override_json, t.channel_name, t.channel_path,
	t.content_category, t.content_subcategory, t.schedule_cron, t.expected_cadence_days, t.interval_sec,
	t.enabled, t.source, t.last_crawled_at, t.last_article_time, t.created_at, t.updated_at,
	t.dept_binding, t.registry_id, t.created_by`

func scanTarget(row interface{ Scan(...any) error }) (*model.Target, error) {
	var t model.Target
	err := row.Scan(&t.ID, &t.SiteID, &t.SiteDepartmentID, &t.TargetCode, &t.TargetName, &t.EntryURL,
		strCol{&t.SampleArticleURL}, &t.DeptID, strCol{&t.ColumnID}, jsonCol{&t.ParserOverride},
		strCol{&t.ChannelName}, strCol{&t.ChannelPath}, strCol{&t.ContentCategory},
		strCol{&t.ContentSubcategory}, strCol{&t.ScheduleCron}, &t.ExpectedCadenceDays, &t.IntervalSec,
		&t.Enabled, &t.Source, nullTimeCol{&t.LastCrawledAt}, nullTimeCol{&t.LastArticleTime},
		timeCol{&t.CreatedAt}, timeCol{&t.UpdatedAt}, strCol{&t.DeptBinding}, &t.RegistryID, &t.CreatedBy)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// defaultCadenceDays is the default expected_cadence_days.
const defaultCadenceDays = 30

// UpsertTarget inserts or updates the target with tg.TargetCode and sets
// tg.ID. It applies the derivation rules: a target of a CMS
// adapter site must name its site department; the department's binding
// must not be pending (ErrPendingBinding); dept_id is the department's
// local_dept_id when mapped and NULL otherwise. The runtime fields
// last_crawled_at and last_article_time are never overwritten. An empty
// Source means admin; a zero ExpectedCadenceDays means 30.
func (t *Tx) UpsertTarget(ctx context.Context, tg *model.Target) (id int64, changed bool, err error) {
	if tg.Source == "" {
		tg.Source = model.SourceAdmin
	}
	if tg.ExpectedCadenceDays == 0 {
		tg.ExpectedCadenceDays = defaultCadenceDays
	}
	if err := t.deriveTargetDept(ctx, tg); err != nil {
		return 0, false, fmt.Errorf("upsert target %s: %w", tg.TargetCode, err)
	}
	old, err := scanTarget(t.c.queryRow(ctx, `SELECT `+targetColumns+` FROM crawl_target t WHERE t.target_code = ?`, tg.TargetCode))
	if err != nil && notFound(err) != ErrNotFound {
		return 0, false, fmt.Errorf("upsert target %s: %w", tg.TargetCode, err)
	}
	now := t.s.now()
	if old == nil {
		id, err := t.c.insertID(ctx, `INSERT INTO crawl_target (site_id, site_department_id, target_code,
			target_name, entry_url, sample_article_url, dept_id, column_id, parser_override_json,
			channel_name, channel_path, content_category, content_subcategory, schedule_cron,
			expected_cadence_days, interval_sec, enabled, source, last_crawled_at, last_article_time,
			created_at, updated_at, dept_binding, registry_id, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			tg.SiteID, tg.SiteDepartmentID, tg.TargetCode, tg.TargetName, tg.EntryURL,
			nullStr(tg.SampleArticleURL), tg.DeptID, nullStr(tg.ColumnID), jsonArg(tg.ParserOverride),
			nullStr(tg.ChannelName), nullStr(tg.ChannelPath), nullStr(tg.ContentCategory),
			nullStr(tg.ContentSubcategory), nullStr(tg.ScheduleCron), tg.ExpectedCadenceDays, tg.IntervalSec,
			tg.Enabled, tg.Source, t.s.tsPtr(tg.LastCrawledAt), t.s.tsPtr(tg.LastArticleTime),
			t.s.ts(now), t.s.ts(now), nullStr(tg.DeptBinding), tg.RegistryID, tg.CreatedBy)
		if err != nil {
			return 0, false, fmt.Errorf("upsert target %s: %w", tg.TargetCode, err)
		}
		tg.ID, tg.CreatedAt, tg.UpdatedAt = id, now, now
		return id, true, nil
	}
	tg.ID, tg.CreatedAt = old.ID, old.CreatedAt
	tg.LastCrawledAt, tg.LastArticleTime = old.LastCrawledAt, old.LastArticleTime
	// Set once, when the row is made: a sync of the files knows neither.
	tg.RegistryID, tg.CreatedBy = old.RegistryID, old.CreatedBy
	if sameTarget(old, tg) {
		tg.UpdatedAt = old.UpdatedAt
		return old.ID, false, nil
	}
	_, err = t.c.exec(ctx, `UPDATE crawl_target SET site_id = ?, site_department_id = ?, target_name = ?,
		entry_url = ?, sample_article_url = ?, dept_id = ?, column_id = ?, parser_override_json = ?,
		channel_name = ?, channel_path = ?, content_category = ?, content_subcategory = ?, schedule_cron = ?,
		expected_cadence_days = ?, interval_sec = ?, enabled = ?, source = ?, dept_binding = ?, updated_at = ?
		WHERE id = ?`,
		tg.SiteID, tg.SiteDepartmentID, tg.TargetName, tg.EntryURL, nullStr(tg.SampleArticleURL), tg.DeptID,
		nullStr(tg.ColumnID), jsonArg(tg.ParserOverride), nullStr(tg.ChannelName), nullStr(tg.ChannelPath),
		nullStr(tg.ContentCategory), nullStr(tg.ContentSubcategory), nullStr(tg.ScheduleCron),
		tg.ExpectedCadenceDays, tg.IntervalSec, tg.Enabled, tg.Source, nullStr(tg.DeptBinding), t.s.ts(now), old.ID)
	if err != nil {
		return 0, false, fmt.Errorf("upsert target %s: %w", tg.TargetCode, err)
	}
	tg.UpdatedAt = now
	return old.ID, true, nil
}

// deriveTargetDept applies the site department rules.
func (t *Tx) deriveTargetDept(ctx context.Context, tg *model.Target) error {
	var cmsAdapter string
	err := t.c.queryRow(ctx, `SELECT cms_adapter FROM crawl_site WHERE id = ?`, tg.SiteID).Scan(strCol{&cmsAdapter})
	if err != nil {
		return fmt.Errorf("site %d: %w", tg.SiteID, notFound(err))
	}
	if tg.SiteDepartmentID == nil {
		if cmsAdapter != "" {
			return fmt.Errorf("site %d uses CMS adapter %s, so the target needs a site department", tg.SiteID, cmsAdapter)
		}
		return templateBinding(tg)
	}
	var (
		siteID      int64
		binding     string
		localDeptID *int64
	)
	err = t.c.queryRow(ctx, `SELECT site_id, dept_binding, local_dept_id FROM site_department WHERE id = ?`,
		*tg.SiteDepartmentID).Scan(&siteID, &binding, &localDeptID)
	if err != nil {
		return fmt.Errorf("site department %d: %w", *tg.SiteDepartmentID, notFound(err))
	}
	if siteID != tg.SiteID {
		return fmt.Errorf("site department %d belongs to site %d, not to site %d", *tg.SiteDepartmentID, siteID, tg.SiteID)
	}
	switch binding {
	case model.BindingPending:
		return ErrPendingBinding
	}
	tg.DeptBinding = binding
	switch binding {
	case model.BindingMapped:
		tg.DeptID = localDeptID
	default:
		tg.DeptID = nil
	}
	return nil
}

// templateBinding checks the binding of a target without a site
// department against its dept_id: mapped names a department, the other
// three none. A row written without a binding is mapped when it names a
// department and stays unknown otherwise.
func templateBinding(tg *model.Target) error {
	switch tg.DeptBinding {
	case "":
		if tg.DeptID != nil {
			tg.DeptBinding = model.BindingMapped
		}
	case model.BindingPending:
		return ErrPendingBinding
	case model.BindingMapped:
		if tg.DeptID == nil {
			return fmt.Errorf("dept_binding mapped needs a dept_id")
		}
	case model.BindingCityLevel, model.BindingCrossDept, model.BindingExternalRef:
		if tg.DeptID != nil {
			return fmt.Errorf("dept_binding %s takes no dept_id (%d)", tg.DeptBinding, *tg.DeptID)
		}
	default:
		return fmt.Errorf("dept_binding %q is not one of mapped, city_level, cross_dept, external_ref", tg.DeptBinding)
	}
	return nil
}

func sameTarget(a, b *model.Target) bool {
	x, y := *a, *b
	x.CreatedAt, x.UpdatedAt, y.CreatedAt, y.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	x.ParserOverride = json.RawMessage(canonicalJSON(x.ParserOverride))
	y.ParserOverride = json.RawMessage(canonicalJSON(y.ParserOverride))
	return reflect.DeepEqual(x, y)
}

// DisableYAMLTargetsExcept disables every enabled target declared in YAML
// whose code is not in keepCodes: a target gone from the files stops being
// crawled, its row and history stay. Admin-created targets are untouched.
func (t *Tx) DisableYAMLTargetsExcept(ctx context.Context, keepCodes []string) (disabled int, err error) {
	query := `UPDATE crawl_target SET enabled = ?, updated_at = ? WHERE source = 'yaml' AND enabled = ?`
	args := []any{false, t.s.ts(t.s.now()), true}
	if len(keepCodes) > 0 {
		query += ` AND target_code NOT IN (` + placeholders(len(keepCodes)) + `)`
		for _, c := range keepCodes {
			args = append(args, c)
		}
	}
	res, err := t.c.exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("disable yaml targets: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("disable yaml targets: %w", err)
	}
	return int(n), nil
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// TargetFilter selects targets for ListTargets; zero fields select all.
type TargetFilter struct {
	SiteCode    string
	TargetCode  string
	EnabledOnly bool // target, its site and its site department all enabled
}

// ListTargets returns the targets matching f ordered by target_code.
func (s *Store) ListTargets(ctx context.Context, f TargetFilter) ([]model.Target, error) {
	query := `SELECT ` + targetColumns + ` FROM crawl_target t
		JOIN crawl_site s ON s.id = t.site_id
		LEFT JOIN site_department d ON d.id = t.site_department_id WHERE 1 = 1`
	var args []any
	if f.SiteCode != "" {
		query += ` AND s.site_code = ?`
		args = append(args, f.SiteCode)
	}
	if f.TargetCode != "" {
		query += ` AND t.target_code = ?`
		args = append(args, f.TargetCode)
	}
	if f.EnabledOnly {
		query += ` AND t.enabled = ? AND s.enabled = ? AND (d.id IS NULL OR d.enabled = ?)`
		args = append(args, true, true, true)
	}
	query += ` ORDER BY t.target_code`
	rows, err := s.conn().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	defer rows.Close()
	var out []model.Target
	for rows.Next() {
		tg, err := scanTarget(rows)
		if err != nil {
			return nil, fmt.Errorf("list targets: %w", err)
		}
		out = append(out, *tg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	return out, nil
}

// TargetByCode returns the target with code, or ErrNotFound.
func (s *Store) TargetByCode(ctx context.Context, code string) (*model.Target, error) {
	tg, err := scanTarget(s.conn().queryRow(ctx, `SELECT `+targetColumns+` FROM crawl_target t WHERE t.target_code = ?`, code))
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", code, notFound(err))
	}
	return tg, nil
}

// TargetByID returns the target with id, or ErrNotFound.
func (s *Store) TargetByID(ctx context.Context, id int64) (*model.Target, error) {
	tg, err := scanTarget(s.conn().queryRow(ctx, `SELECT `+targetColumns+` FROM crawl_target t WHERE t.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("target %d: %w", id, notFound(err))
	}
	return tg, nil
}

// MarkTargetCrawled records a finished crawl of a target: last_crawled_at
// becomes crawledAt, and last_article_time moves forward to newest when that
// is later than what is stored (nil leaves it).
func (s *Store) MarkTargetCrawled(ctx context.Context, targetID int64, crawledAt time.Time, newest *time.Time) error {
	var err error
	if newest == nil {
		_, err = s.conn().exec(ctx, `UPDATE crawl_target SET last_crawled_at = ? WHERE id = ?`, s.ts(crawledAt), targetID)
	} else {
		_, err = s.conn().exec(ctx, `UPDATE crawl_target SET last_crawled_at = ?,
			last_article_time = CASE WHEN last_article_time IS NULL OR last_article_time < ? THEN ?
				ELSE last_article_time END
			WHERE id = ?`, s.ts(crawledAt), s.ts(*newest), s.ts(*newest), targetID)
	}
	if err != nil {
		return fmt.Errorf("mark target %d crawled: %w", targetID, err)
	}
	return nil
}
