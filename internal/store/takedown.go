package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"zhizhi/internal/config/zone"

	"zhizhi/internal/model"
)

// TakedownWindow is how long a source site waits at most, from the moment
// its request is recorded, for its cards to come off the portal.
const TakedownWindow = 48 * time.Hour

// ErrTakedownDone is returned when a takedown that was already carried out
// is carried out again.
var ErrTakedownDone = errors.New("this takedown request has already been carried out")

const takedownColumns = `k.id, k.site_id, k.scope, k.urls, k.requester, k.contact, k.reason, k.received_at,
	k.deadline_at, k.recorded_by, k.frozen_at, k.frozen_by, k.cards_frozen, k.receipt, s.site_name`

func scanTakedown(row interface{ Scan(...any) error }) (*model.Takedown, error) {
	var k model.Takedown
	var urls json.RawMessage
	err := row.Scan(&k.ID, &k.SiteID, &k.Scope, jsonCol{&urls}, &k.Requester, &k.Contact, &k.Reason,
		timeCol{&k.ReceivedAt}, timeCol{&k.DeadlineAt}, &k.RecordedBy, nullTimeCol{&k.FrozenAt},
		strCol{&k.FrozenBy}, &k.CardsFrozen, strCol{&k.Receipt}, strCol{&k.SiteName})
	if err != nil {
		return nil, err
	}
	if len(urls) > 0 {
		if err := json.Unmarshal(urls, &k.URLs); err != nil {
			return nil, fmt.Errorf("takedown %d urls: %w", k.ID, err)
		}
	}
	return &k, nil
}

// RecordTakedown records a site's request as it arrives; its deadline is
// TakedownWindow later. k.ReceivedAt, when zero, is now.
func (s *Store) RecordTakedown(ctx context.Context, k *model.Takedown) error {
	if k.Scope != model.TakedownSite && k.Scope != model.TakedownURLs {
		return fmt.Errorf("takedown scope %q: want %q or %q", k.Scope, model.TakedownSite, model.TakedownURLs)
	}
	if k.Scope == model.TakedownURLs && len(k.URLs) == 0 {
		return fmt.Errorf("a takedown of pages needs at least one page address")
	}
	if k.ReceivedAt.IsZero() {
		k.ReceivedAt = s.now()
	}
	k.DeadlineAt = k.ReceivedAt.Add(TakedownWindow)
	urls, err := json.Marshal(append([]string{}, k.URLs...))
	if err != nil {
		return err
	}
	return s.WithTx(ctx, func(tx *Tx) error {
		id, err := tx.c.insertID(ctx, `INSERT INTO takedown (site_id, scope, urls, requester, contact, reason,
			received_at, deadline_at, recorded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.SiteID, k.Scope, string(urls), k.Requester, k.Contact, k.Reason, s.ts(k.ReceivedAt),
			s.ts(k.DeadlineAt), k.RecordedBy)
		if err != nil {
			return fmt.Errorf("record takedown: %w", err)
		}
		k.ID = id
		after, _ := json.Marshal(map[string]any{"site_id": k.SiteID, "scope": k.Scope, "urls": k.URLs,
			"requester": k.Requester, "deadline_at": k.DeadlineAt})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: k.RecordedBy, Action: "takedown.record",
			ObjectType: "takedown", ObjectID: fmt.Sprint(id), After: after, Detail: k.Reason})
	})
}

// FreezeTakedown carries a request out: every card it names is frozen —
// hidden from the portal, kept in the store — and the request gets its
// receipt. A site-wide request also freezes the site's future cards.
func (s *Store) FreezeTakedown(ctx context.Context, id int64, actor string) (*model.Takedown, error) {
	var out *model.Takedown
	err := s.WithTx(ctx, func(tx *Tx) error {
		k, err := scanTakedown(tx.c.queryRow(ctx, `SELECT `+takedownColumns+` FROM takedown k
			JOIN crawl_site s ON s.id = k.site_id WHERE k.id = ?`, id))
		if err != nil {
			return fmt.Errorf("takedown %d: %w", id, notFound(err))
		}
		if !k.Open() {
			return fmt.Errorf("takedown %d: %w", id, ErrTakedownDone)
		}
		where, args := `site_id = ? AND takedown_id IS NULL`, []any{k.SiteID}
		if k.Scope == model.TakedownURLs {
			where += ` AND source_url IN (?` + strings.Repeat(`, ?`, len(k.URLs)-1) + `)`
			for _, u := range k.URLs {
				args = append(args, u)
			}
		}
		res, err := tx.c.exec(ctx, `UPDATE summary_card SET takedown_id = ?, updated_at = ? WHERE `+where,
			append([]any{id, s.ts(s.now())}, args...)...)
		if err != nil {
			return fmt.Errorf("freeze cards of takedown %d: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		now := s.now()
		k.FrozenAt, k.FrozenBy, k.CardsFrozen = &now, actor, int(n)
		k.Receipt = fmt.Sprintf("TD-%s-%d", now.In(shanghai).Format("20060102"), id)
		if _, err := tx.c.exec(ctx, `UPDATE takedown SET frozen_at = ?, frozen_by = ?, cards_frozen = ?, receipt = ?
			WHERE id = ?`, s.ts(now), actor, k.CardsFrozen, k.Receipt, id); err != nil {
			return fmt.Errorf("takedown %d: %w", id, err)
		}
		after, _ := json.Marshal(map[string]any{"cards_frozen": k.CardsFrozen, "receipt": k.Receipt})
		if err := tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "takedown.freeze",
			ObjectType: "takedown", ObjectID: fmt.Sprint(id), After: after}); err != nil {
			return err
		}
		out = k
		return nil
	})
	return out, err
}

// shanghai names receipts by the Chinese calendar day, the day the
// ledger cuts, whatever zone the console shows times in.
var shanghai = zone.Shanghai

// TakedownByID returns one request.
func (s *Store) TakedownByID(ctx context.Context, id int64) (*model.Takedown, error) {
	k, err := scanTakedown(s.conn().queryRow(ctx, `SELECT `+takedownColumns+` FROM takedown k
		JOIN crawl_site s ON s.id = k.site_id WHERE k.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("takedown %d: %w", id, notFound(err))
	}
	return k, nil
}

// ListTakedowns returns requests, open ones first by deadline, then the
// carried-out ones newest first.
func (s *Store) ListTakedowns(ctx context.Context, openOnly bool) ([]model.Takedown, error) {
	where := ``
	if openOnly {
		where = ` WHERE k.frozen_at IS NULL`
	}
	rows, err := s.conn().query(ctx, `SELECT `+takedownColumns+` FROM takedown k
		JOIN crawl_site s ON s.id = k.site_id`+where+`
		ORDER BY CASE WHEN k.frozen_at IS NULL THEN 0 ELSE 1 END,
		CASE WHEN k.frozen_at IS NULL THEN k.deadline_at END, k.id DESC LIMIT 500`)
	if err != nil {
		return nil, fmt.Errorf("list takedowns: %w", err)
	}
	defer rows.Close()
	var out []model.Takedown
	for rows.Next() {
		k, err := scanTakedown(rows)
		if err != nil {
			return nil, fmt.Errorf("list takedowns: %w", err)
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}
