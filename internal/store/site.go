package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"zhizhi/internal/model"
)

const siteColumns = `id, site_code, site_name, base_url, site_role, cms_adapter, adapter_params_json,
	default_fetch_strategy, strategy_override_reason, respect_robots, yaml_path, access, owned,
	enabled, remark, attachment_ocr, corpus_rights, created_at, updated_at`

func scanSite(row interface{ Scan(...any) error }) (*model.Site, error) {
	var s model.Site
	err := row.Scan(&s.ID, &s.SiteCode, &s.SiteName, &s.BaseURL, &s.SiteRole, strCol{&s.CMSAdapter},
		jsonCol{&s.AdapterParams}, strCol{&s.DefaultFetchStrategy}, strCol{&s.StrategyOverrideReason},
		&s.RespectRobots, strCol{&s.YAMLPath}, &s.Access, &s.Owned, &s.Enabled, strCol{&s.Remark},
		&s.AttachmentOCR, &s.CorpusRights, timeCol{&s.CreatedAt}, timeCol{&s.UpdatedAt})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// UpsertSite inserts or updates the site with s.SiteCode and sets s.ID.
// An empty Access is stored as summary (a site nobody configured
// gets only summaries). StrategyOverrideReason is runtime state written by
// the crawler when it escalates a tier; an empty value here keeps the stored
// one. changed reports whether a row was written.
func (t *Tx) UpsertSite(ctx context.Context, s *model.Site) (id int64, changed bool, err error) {
	if s.Access == "" {
		s.Access = model.AccessSummary
	}
	if s.CorpusRights == "" {
		s.CorpusRights = model.RightsUnknown
	}
	old, err := scanSite(t.c.queryRow(ctx, `SELECT `+siteColumns+` FROM crawl_site WHERE site_code = ?`, s.SiteCode))
	if err != nil && notFound(err) != ErrNotFound {
		return 0, false, fmt.Errorf("upsert site %s: %w", s.SiteCode, err)
	}
	now := t.s.now()
	if old == nil {
		id, err := t.c.insertID(ctx, `INSERT INTO crawl_site (site_code, site_name, base_url, site_role,
			cms_adapter, adapter_params_json, default_fetch_strategy, strategy_override_reason,
			respect_robots, yaml_path, access, owned, enabled, remark, attachment_ocr, corpus_rights, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.SiteCode, s.SiteName, s.BaseURL, s.SiteRole, nullStr(s.CMSAdapter), jsonArg(s.AdapterParams),
			nullStr(s.DefaultFetchStrategy), nullStr(s.StrategyOverrideReason), s.RespectRobots,
			nullStr(s.YAMLPath), s.Access, s.Owned, s.Enabled, nullStr(s.Remark), s.AttachmentOCR, s.CorpusRights, t.s.ts(now), t.s.ts(now))
		if err != nil {
			return 0, false, fmt.Errorf("upsert site %s: %w", s.SiteCode, err)
		}
		s.ID, s.CreatedAt, s.UpdatedAt = id, now, now
		return id, true, nil
	}
	if s.StrategyOverrideReason == "" {
		s.StrategyOverrideReason = old.StrategyOverrideReason
	}
	s.ID, s.CreatedAt = old.ID, old.CreatedAt
	if sameSite(old, s) {
		s.UpdatedAt = old.UpdatedAt
		return old.ID, false, nil
	}
	_, err = t.c.exec(ctx, `UPDATE crawl_site SET site_name = ?, base_url = ?, site_role = ?, cms_adapter = ?,
		adapter_params_json = ?, default_fetch_strategy = ?, strategy_override_reason = ?, respect_robots = ?,
		yaml_path = ?, access = ?, owned = ?, enabled = ?, remark = ?, attachment_ocr = ?, corpus_rights = ?, updated_at = ? WHERE id = ?`,
		s.SiteName, s.BaseURL, s.SiteRole, nullStr(s.CMSAdapter), jsonArg(s.AdapterParams),
		nullStr(s.DefaultFetchStrategy), nullStr(s.StrategyOverrideReason), s.RespectRobots,
		nullStr(s.YAMLPath), s.Access, s.Owned, s.Enabled, nullStr(s.Remark), s.AttachmentOCR, s.CorpusRights, t.s.ts(now), old.ID)
	if err != nil {
		return 0, false, fmt.Errorf("upsert site %s: %w", s.SiteCode, err)
	}
	s.UpdatedAt = now
	return old.ID, true, nil
}

// sameSite compares the stored columns, JSON by meaning.
func sameSite(a, b *model.Site) bool {
	x, y := *a, *b
	x.CreatedAt, x.UpdatedAt, y.CreatedAt, y.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	x.AdapterParams = json.RawMessage(canonicalJSON(x.AdapterParams))
	y.AdapterParams = json.RawMessage(canonicalJSON(y.AdapterParams))
	return reflect.DeepEqual(x, y)
}

// SiteByCode returns the site with code, or ErrNotFound.
func (s *Store) SiteByCode(ctx context.Context, code string) (*model.Site, error) {
	site, err := scanSite(s.conn().queryRow(ctx, `SELECT `+siteColumns+` FROM crawl_site WHERE site_code = ?`, code))
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", code, notFound(err))
	}
	return site, nil
}

// SiteByID returns the site with id, or ErrNotFound.
func (s *Store) SiteByID(ctx context.Context, id int64) (*model.Site, error) {
	site, err := scanSite(s.conn().queryRow(ctx, `SELECT `+siteColumns+` FROM crawl_site WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("site %d: %w", id, notFound(err))
	}
	return site, nil
}

// ListSites returns every site ordered by site_code.
func (s *Store) ListSites(ctx context.Context) ([]model.Site, error) {
	rows, err := s.conn().query(ctx, `SELECT `+siteColumns+` FROM crawl_site ORDER BY site_code`)
	if err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	defer rows.Close()
	var out []model.Site
	for rows.Next() {
		site, err := scanSite(rows)
		if err != nil {
			return nil, fmt.Errorf("list sites: %w", err)
		}
		out = append(out, *site)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	return out, nil
}
