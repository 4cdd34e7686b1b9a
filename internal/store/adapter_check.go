package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Outcomes of checking a site against the CMS adapter it is configured
// with.
const (
	CheckMatched   = "matched"   // its home page still shows the adapter's signatures
	CheckOther     = "other"     // it shows another adapter's (DetectedAs names it)
	CheckUnmatched = "unmatched" // it shows no adapter's
	CheckError     = "error"     // its home page could not be read (Problem says why)
)

// AdapterCheck is the last check of one site against one adapter.
type AdapterCheck struct {
	AdapterID  string
	SiteID     int64
	SiteCode   string // read only
	SiteName   string // read only
	CheckedAt  time.Time
	CheckedBy  string
	Outcome    string
	DetectedAs string // the adapter the site was recognised as, if any
	Evidence   string // the signature that recognised it
	Problem    string
}

// Passed says whether the site is still the adapter's.
func (c AdapterCheck) Passed() bool { return c.Outcome == CheckMatched }

// RecordAdapterChecks keeps checks as the adapter's last results for their
// sites, replacing earlier ones, and records the run in the audit trail,
// in one transaction. CheckedAt, when zero, is now.
func (s *Store) RecordAdapterChecks(ctx context.Context, adapterID, actor string, checks []AdapterCheck) error {
	if adapterID == "" || actor == "" {
		return fmt.Errorf("record adapter checks: an adapter and an actor are needed")
	}
	now := s.now()
	summary := map[string]int{}
	return s.WithTx(ctx, func(tx *Tx) error {
		clear(summary)
		for _, c := range checks {
			switch c.Outcome {
			case CheckMatched, CheckOther, CheckUnmatched, CheckError:
			default:
				return fmt.Errorf("record adapter check of site %d: unknown outcome %q", c.SiteID, c.Outcome)
			}
			at := c.CheckedAt
			if at.IsZero() {
				at = now
			}
			if _, err := tx.c.exec(ctx, `INSERT INTO adapter_check (adapter_id, site_id, checked_at, checked_by, outcome,
				detected_as, evidence, problem) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (adapter_id, site_id) DO UPDATE SET checked_at = excluded.checked_at,
				checked_by = excluded.checked_by, outcome = excluded.outcome, detected_as = excluded.detected_as,
				evidence = excluded.evidence, problem = excluded.problem`,
				adapterID, c.SiteID, s.ts(at), clipRunes(actor, 200), c.Outcome, clipRunes(c.DetectedAs, 100),
				clipRunes(c.Evidence, 1000), clipRunes(c.Problem, 2000)); err != nil {
				return fmt.Errorf("record adapter check of site %d: %w", c.SiteID, err)
			}
			summary[c.Outcome]++
		}
		after, _ := json.Marshal(summary)
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "adapter.detect", ObjectType: "adapter",
			ObjectID: adapterID, After: after, Detail: fmt.Sprintf("检测了 %d 个站点", len(checks))})
	})
}

// AdapterChecks returns the last check of every site against adapterID
// (every adapter when empty), by adapter and site code.
func (s *Store) AdapterChecks(ctx context.Context, adapterID string) ([]AdapterCheck, error) {
	q := `SELECT c.adapter_id, c.site_id, s.site_code, s.site_name, c.checked_at, c.checked_by, c.outcome,
		c.detected_as, c.evidence, c.problem FROM adapter_check c JOIN crawl_site s ON s.id = c.site_id`
	var args []any
	if adapterID != "" {
		q += ` WHERE c.adapter_id = ?`
		args = append(args, adapterID)
	}
	rows, err := s.conn().query(ctx, q+` ORDER BY c.adapter_id, s.site_code`, args...)
	if err != nil {
		return nil, fmt.Errorf("adapter checks: %w", err)
	}
	defer rows.Close()
	var out []AdapterCheck
	for rows.Next() {
		var c AdapterCheck
		if err := rows.Scan(&c.AdapterID, &c.SiteID, &c.SiteCode, &c.SiteName, timeCol{&c.CheckedAt}, &c.CheckedBy,
			&c.Outcome, &c.DetectedAs, &c.Evidence, &c.Problem); err != nil {
			return nil, fmt.Errorf("adapter checks: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// clipRunes cuts s to at most n characters.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
