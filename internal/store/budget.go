package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// BudgetAmounts is an amount of each resource the acquisition API meters:
// a budget's limits, a day's usage, a request's estimate or actual cost.
type BudgetAmounts struct {
	Requests       int64
	Bytes          int64
	BrowserSeconds int64
	OCRPages       int64
}

// KeyBudget is what one API key may spend per day and how many requests it
// may make per minute.
type KeyBudget struct {
	APIKeyID          int64
	PerDay            BudgetAmounts
	RequestsPerMinute int64
	UpdatedAt         time.Time
}

const amountCols = `requests, bytes, browser_seconds, ocr_pages`

func amountDest(a *BudgetAmounts) []any {
	return []any{&a.Requests, &a.Bytes, &a.BrowserSeconds, &a.OCRPages}
}

// KeyBudget returns the budget set for key keyID, or ErrNotFound when none
// was ever set (the defaults apply).
func (s *Store) KeyBudget(ctx context.Context, keyID int64) (*KeyBudget, error) {
	return keyBudget(ctx, s.conn(), keyID)
}

// KeyBudget is Store.KeyBudget inside a transaction.
func (t *Tx) KeyBudget(ctx context.Context, keyID int64) (*KeyBudget, error) {
	return keyBudget(ctx, t.c, keyID)
}

func keyBudget(ctx context.Context, c conn, keyID int64) (*KeyBudget, error) {
	b := KeyBudget{APIKeyID: keyID}
	err := c.queryRow(ctx, `SELECT requests_per_day, bytes_per_day, browser_seconds_per_day, ocr_pages_per_day,
		requests_per_minute, updated_at FROM api_key_budget WHERE api_key_id = ?`, keyID).
		Scan(append(amountDest(&b.PerDay), &b.RequestsPerMinute, timeCol{&b.UpdatedAt})...)
	if err != nil {
		return nil, fmt.Errorf("budget of api key %d: %w", keyID, notFound(err))
	}
	return &b, nil
}

// SetKeyBudget sets (or replaces) the budget of key b.APIKeyID and stamps
// b.UpdatedAt.
func (t *Tx) SetKeyBudget(ctx context.Context, b *KeyBudget) error {
	now := t.s.now()
	_, err := t.c.exec(ctx, `INSERT INTO api_key_budget (api_key_id, requests_per_day, bytes_per_day,
			browser_seconds_per_day, ocr_pages_per_day, requests_per_minute, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (api_key_id) DO UPDATE SET requests_per_day = excluded.requests_per_day,
			bytes_per_day = excluded.bytes_per_day, browser_seconds_per_day = excluded.browser_seconds_per_day,
			ocr_pages_per_day = excluded.ocr_pages_per_day, requests_per_minute = excluded.requests_per_minute,
			updated_at = excluded.updated_at`,
		b.APIKeyID, b.PerDay.Requests, b.PerDay.Bytes, b.PerDay.BrowserSeconds, b.PerDay.OCRPages,
		b.RequestsPerMinute, t.s.ts(now))
	if err != nil {
		return fmt.Errorf("set budget of api key %d: %w", b.APIKeyID, err)
	}
	b.UpdatedAt = now
	return nil
}

// LockBudgetDay returns what key keyID has been charged on day (YYYY-MM-DD)
// and, with PostgreSQL, locks that row until the transaction ends, so the
// reservations and settlements of one key and day run one after another
// (SQLite's write transactions already do). The row is made when missing.
func (t *Tx) LockBudgetDay(ctx context.Context, keyID int64, day string) (BudgetAmounts, error) {
	if _, err := t.c.exec(ctx, `INSERT INTO budget_usage (api_key_id, day) VALUES (?, ?)
		ON CONFLICT (api_key_id, day) DO NOTHING`, keyID, day); err != nil {
		return BudgetAmounts{}, fmt.Errorf("lock budget of api key %d on %s: %w", keyID, day, err)
	}
	q := `SELECT ` + amountCols + ` FROM budget_usage WHERE api_key_id = ? AND day = ?`
	if t.s.dialect == DialectPostgres {
		q += ` FOR UPDATE`
	}
	var used BudgetAmounts
	if err := t.c.queryRow(ctx, q, keyID, day).Scan(amountDest(&used)...); err != nil {
		return BudgetAmounts{}, fmt.Errorf("lock budget of api key %d on %s: %w", keyID, day, err)
	}
	return used, nil
}

// DropExpiredBudgetHolds deletes the holds of key keyID that expired at or
// before now: their requests never settled (the process serving them
// died), and they are released rather than charged.
func (t *Tx) DropExpiredBudgetHolds(ctx context.Context, keyID int64, now time.Time) error {
	if _, err := t.c.exec(ctx, `DELETE FROM budget_hold WHERE api_key_id = ? AND expires_at <= ?`, keyID, t.s.ts(now)); err != nil {
		return fmt.Errorf("release expired budget holds of api key %d: %w", keyID, err)
	}
	return nil
}

// BudgetHeld sums the holds of key keyID on day that are still live at now.
func (t *Tx) BudgetHeld(ctx context.Context, keyID int64, day string, now time.Time) (BudgetAmounts, error) {
	return budgetHeld(ctx, t.c, keyID, day, now)
}

func budgetHeld(ctx context.Context, c conn, keyID int64, day string, now time.Time) (BudgetAmounts, error) {
	var held BudgetAmounts
	err := c.queryRow(ctx, `SELECT coalesce(sum(requests), 0), coalesce(sum(bytes), 0),
			coalesce(sum(browser_seconds), 0), coalesce(sum(ocr_pages), 0)
		FROM budget_hold WHERE api_key_id = ? AND day = ? AND expires_at > ?`, keyID, day, c.s.ts(now)).
		Scan(amountDest(&held)...)
	if err != nil {
		return BudgetAmounts{}, fmt.Errorf("budget held by api key %d on %s: %w", keyID, day, err)
	}
	return held, nil
}

// InsertBudgetHold holds amt against key keyID's budget of day until
// expires, and returns the hold's id.
func (t *Tx) InsertBudgetHold(ctx context.Context, keyID int64, day string, amt BudgetAmounts, now, expires time.Time) (int64, error) {
	id, err := t.c.insertID(ctx, `INSERT INTO budget_hold (api_key_id, day, `+amountCols+`, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, keyID, day, amt.Requests, amt.Bytes, amt.BrowserSeconds, amt.OCRPages,
		t.s.ts(now), t.s.ts(expires))
	if err != nil {
		return 0, fmt.Errorf("hold budget of api key %d: %w", keyID, err)
	}
	return id, nil
}

// DeleteBudgetHold removes hold id inside a settlement.
func (t *Tx) DeleteBudgetHold(ctx context.Context, id int64) error {
	if _, err := t.c.exec(ctx, `DELETE FROM budget_hold WHERE id = ?`, id); err != nil {
		return fmt.Errorf("release budget hold %d: %w", id, err)
	}
	return nil
}

// DeleteBudgetHold removes hold id: its request was cancelled.
func (s *Store) DeleteBudgetHold(ctx context.Context, id int64) error {
	if _, err := s.conn().exec(ctx, `DELETE FROM budget_hold WHERE id = ?`, id); err != nil {
		return fmt.Errorf("release budget hold %d: %w", id, err)
	}
	return nil
}

// AddBudgetUsage charges amt to key keyID on day.
func (t *Tx) AddBudgetUsage(ctx context.Context, keyID int64, day string, amt BudgetAmounts) error {
	_, err := t.c.exec(ctx, `INSERT INTO budget_usage (api_key_id, day, `+amountCols+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (api_key_id, day) DO UPDATE SET requests = budget_usage.requests + excluded.requests,
			bytes = budget_usage.bytes + excluded.bytes,
			browser_seconds = budget_usage.browser_seconds + excluded.browser_seconds,
			ocr_pages = budget_usage.ocr_pages + excluded.ocr_pages`,
		keyID, day, amt.Requests, amt.Bytes, amt.BrowserSeconds, amt.OCRPages)
	if err != nil {
		return fmt.Errorf("charge api key %d on %s: %w", keyID, day, err)
	}
	return nil
}

// BudgetDay returns what key keyID has been charged on day and what its
// live holds (at now) keep reserved.
func (s *Store) BudgetDay(ctx context.Context, keyID int64, day string, now time.Time) (used, held BudgetAmounts, err error) {
	err = s.conn().queryRow(ctx, `SELECT `+amountCols+` FROM budget_usage WHERE api_key_id = ? AND day = ?`, keyID, day).
		Scan(amountDest(&used)...)
	if err != nil && !errors.Is(notFound(err), ErrNotFound) {
		return used, held, fmt.Errorf("budget usage of api key %d on %s: %w", keyID, day, err)
	}
	held, err = budgetHeld(ctx, s.conn(), keyID, day, now)
	return used, held, err
}

// HitRateWindow counts one more request of key keyID in the minute that
// starts at start and returns the minute's count so far, this one
// included. The count is one atomic statement, so any number of processes
// counting at once each get a different number. The first request of a
// minute deletes the key's older minutes.
func (s *Store) HitRateWindow(ctx context.Context, keyID int64, start time.Time) (int64, error) {
	var n int64
	err := s.conn().queryRow(ctx, `INSERT INTO rate_window (api_key_id, window_start, requests) VALUES (?, ?, 1)
		ON CONFLICT (api_key_id, window_start) DO UPDATE SET requests = rate_window.requests + 1
		RETURNING requests`, keyID, s.ts(start)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("rate limit of api key %d: %w", keyID, err)
	}
	if n == 1 {
		if _, err := s.conn().exec(ctx, `DELETE FROM rate_window WHERE api_key_id = ? AND window_start < ?`,
			keyID, s.ts(start)); err != nil {
			return 0, fmt.Errorf("rate limit of api key %d: %w", keyID, err)
		}
	}
	return n, nil
}
