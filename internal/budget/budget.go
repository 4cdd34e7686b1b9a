// Package budget owns what an API key may spend on the acquisition API:
// per-key daily budgets of requests, bytes, browser seconds and OCR pages
// (a day in China Standard Time, UTC+8), reserved before a request is sent
// and settled with its actual cost after, the per-minute rate limit, and
// GET /v1/usage. Every count lives in the database, so the limits hold
// across all serve processes sharing it.
package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/store"
)

// Cost is an amount of each metered resource: a request's estimate before
// it is sent, its actual cost after, or a day's total. Browser seconds are
// whole seconds; a caller rounds a render's time up.
type Cost struct {
	Requests       int64 `json:"requests"`
	Bytes          int64 `json:"bytes"`
	BrowserSeconds int64 `json:"browser_seconds"`
	OCRPages       int64 `json:"ocr_pages"`
}

// Budget names, as OverError.Budget and the usage JSON spell them.
const (
	Requests       = "requests"
	Bytes          = "bytes"
	BrowserSeconds = "browser_seconds"
	OCRPages       = "ocr_pages"
)

// Limits is what one key may spend: per day, and requests per minute. A
// limit of 0 allows none of that resource (a key that may not render has
// BrowserSeconds 0).
type Limits struct {
	PerDay            Cost  `json:"per_day"`
	RequestsPerMinute int64 `json:"requests_per_minute"`
}

// Defaults are the limits of a key no one set limits for: enough for a
// person or an agent looking at portals all day (a request every half
// minute of a working day, a megabyte each), and half an hour of browser
// time and 200 OCR pages, the two that load the machine most.
var Defaults = Limits{
	PerDay:            Cost{Requests: 1000, Bytes: 1 << 30, BrowserSeconds: 1800, OCRPages: 200},
	RequestsPerMinute: 60,
}

// HoldFor is how long a reservation holds its estimate. A request not
// settled or cancelled by then (its process was killed) is released: it
// stops counting against the key, and is never charged.
const HoldFor = 15 * time.Minute

// Service reserves, settles and reports budgets, kept in the store.
type Service struct {
	st  *store.Store
	now func() time.Time
}

// New returns a Service on st; now is its clock (nil: time.Now).
func New(st *store.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now}
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Day is the budget day t falls in, YYYY-MM-DD in UTC+8.
func Day(t time.Time) string { return t.In(zone.Shanghai).Format(time.DateOnly) }

// dayEnd is when the budget day of t ends: the next midnight in UTC+8.
func dayEnd(t time.Time) time.Time {
	l := t.In(zone.Shanghai)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, zone.Shanghai).UTC()
}

// Limits returns the limits of key keyID: those set for it, or Defaults.
func (s *Service) Limits(ctx context.Context, keyID int64) (Limits, error) {
	b, err := s.st.KeyBudget(ctx, keyID)
	if errors.Is(err, store.ErrNotFound) {
		return Defaults, nil
	}
	if err != nil {
		return Limits{}, err
	}
	return Limits{PerDay: fromStore(b.PerDay), RequestsPerMinute: b.RequestsPerMinute}, nil
}

// ErrInvalid: a negative limit, estimate or cost.
var ErrInvalid = errors.New("invalid budget")

// Check refuses a negative limit, naming it.
func (l Limits) Check() error {
	if err := l.PerDay.check("the daily limit"); err != nil {
		return err
	}
	if l.RequestsPerMinute < 0 {
		return fmt.Errorf("%w: requests per minute is %d: give 0 or more", ErrInvalid, l.RequestsPerMinute)
	}
	return nil
}

// SetLimits sets the limits of key keyID, recorded in the audit trail as
// actor's change ("apikey.budget"), in one transaction. A negative limit
// is ErrInvalid; an unknown key is store.ErrNotFound.
func (s *Service) SetLimits(ctx context.Context, actor string, keyID int64, l Limits) error {
	return s.st.WithTx(ctx, func(tx *store.Tx) error { return s.SetLimitsIn(ctx, tx, actor, keyID, l) })
}

// SetLimitsIn is SetLimits inside tx, for the key's creation
// (auth.Service.CreateAPIKeyWith).
func (s *Service) SetLimitsIn(ctx context.Context, tx *store.Tx, actor string, keyID int64, l Limits) error {
	if err := l.Check(); err != nil {
		return fmt.Errorf("budget of api key %d: %w", keyID, err)
	}
	if _, err := tx.APIKeyForUpdate(ctx, keyID); err != nil {
		return fmt.Errorf("budget of api key %d: %w", keyID, err)
	}
	var before json.RawMessage
	old, err := tx.KeyBudget(ctx, keyID)
	switch {
	case err == nil:
		before, _ = json.Marshal(Limits{PerDay: fromStore(old.PerDay), RequestsPerMinute: old.RequestsPerMinute})
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("budget of api key %d: %w", keyID, err)
	}
	if err := tx.SetKeyBudget(ctx, &store.KeyBudget{APIKeyID: keyID, PerDay: c2s(l.PerDay), RequestsPerMinute: l.RequestsPerMinute}); err != nil {
		return err
	}
	after, _ := json.Marshal(l)
	return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "apikey.budget", ObjectType: "apikey",
		ObjectID: strconv.FormatInt(keyID, 10), Before: before, After: after})
}

// each lists c's amounts with their budget names, in the order budgets are
// checked and shown.
func (c Cost) each() [4]struct {
	name string
	v    int64
} {
	return [4]struct {
		name string
		v    int64
	}{{Requests, c.Requests}, {Bytes, c.Bytes}, {BrowserSeconds, c.BrowserSeconds}, {OCRPages, c.OCRPages}}
}

func (c Cost) check(what string) error {
	for _, a := range c.each() {
		if a.v < 0 {
			return fmt.Errorf("%w: %s of %s is %d: give 0 or more", ErrInvalid, what, words(a.name), a.v)
		}
	}
	return nil
}

func (c Cost) plus(d Cost) Cost {
	return Cost{c.Requests + d.Requests, c.Bytes + d.Bytes, c.BrowserSeconds + d.BrowserSeconds, c.OCRPages + d.OCRPages}
}

func c2s(c Cost) store.BudgetAmounts {
	return store.BudgetAmounts{Requests: c.Requests, Bytes: c.Bytes, BrowserSeconds: c.BrowserSeconds, OCRPages: c.OCRPages}
}

func fromStore(a store.BudgetAmounts) Cost {
	return Cost{Requests: a.Requests, Bytes: a.Bytes, BrowserSeconds: a.BrowserSeconds, OCRPages: a.OCRPages}
}

// words names a budget in plain words.
func words(budget string) string {
	switch budget {
	case Requests:
		return "requests"
	case Bytes:
		return "bytes downloaded"
	case BrowserSeconds:
		return "browser seconds"
	case OCRPages:
		return "OCR pages"
	}
	return budget
}

// OverError refuses a reservation that would take key past one of its
// daily budgets. Used is what the day has taken already, settled and
// reserved.
type OverError struct {
	Budget string // Requests, Bytes, BrowserSeconds or OCRPages
	Limit  int64
	Used   int64
	Resets time.Time // when the budget day ends
}

func (e *OverError) Error() string {
	return fmt.Sprintf("daily budget of %s exceeded: %d of %d used today (UTC+8 day); it renews at %s, or ask an operator to raise it (zhizhi apikey budget)",
		words(e.Budget), e.Used, e.Limit, e.Resets.In(zone.Shanghai).Format("2006-01-02 15:04 UTC+8"))
}
