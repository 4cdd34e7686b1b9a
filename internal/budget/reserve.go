package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"zhizhi/internal/store"
)

// ErrDone: a reservation was settled or cancelled already.
var ErrDone = errors.New("budget reservation already settled or cancelled")

// Reservation is a request's estimate held against its key's budget until
// it is settled with the actual cost or cancelled.
type Reservation struct {
	s        *Service
	id       int64
	keyID    int64
	day      string
	estimate Cost

	mu   sync.Mutex
	done bool
}

// Estimate is what the reservation holds.
func (r *Reservation) Estimate() Cost { return r.estimate }

// Reserve holds est against key keyID's budgets of today (UTC+8) before a
// request is sent, or refuses with *OverError naming the first budget it
// would exceed. est.Requests is usually 1; an amount of 0 is not checked,
// so a request that cannot render passes a spent browser budget. The check
// and the hold are one transaction that locks the key's day (PostgreSQL) or
// the database (SQLite): of any number of requests racing, from any number
// of processes, no two both take the last unit.
func (s *Service) Reserve(ctx context.Context, keyID int64, est Cost) (*Reservation, error) {
	if keyID <= 0 {
		return nil, fmt.Errorf("budget reserve: %w: no api key (key id %d): budgets are per key", ErrInvalid, keyID)
	}
	if err := est.check("the estimate"); err != nil {
		return nil, fmt.Errorf("budget reserve: %w", err)
	}
	lim, err := s.Limits(ctx, keyID)
	if err != nil {
		return nil, fmt.Errorf("budget reserve: %w", err)
	}
	now := s.clock()
	day := Day(now)
	r := &Reservation{s: s, keyID: keyID, day: day, estimate: est}
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		used, err := tx.LockBudgetDay(ctx, keyID, day)
		if err != nil {
			return err
		}
		if err := tx.DropExpiredBudgetHolds(ctx, keyID, now); err != nil {
			return err
		}
		held, err := tx.BudgetHeld(ctx, keyID, day, now)
		if err != nil {
			return err
		}
		taken := fromStore(used).plus(fromStore(held)).each()
		limits := lim.PerDay.each()
		for i, e := range est.each() {
			if e.v > 0 && taken[i].v+e.v > limits[i].v {
				return &OverError{Budget: e.name, Limit: limits[i].v, Used: taken[i].v, Resets: dayEnd(now)}
			}
		}
		r.id, err = tx.InsertBudgetHold(ctx, keyID, day, c2s(est), now, now.Add(HoldFor))
		return err
	})
	var over *OverError
	if errors.As(err, &over) {
		return nil, over
	}
	if err != nil {
		return nil, fmt.Errorf("budget reserve: %w", err)
	}
	return r, nil
}

// Settle charges the actual cost of the request to the day it was reserved
// on and releases the rest of the estimate (or charges more than it, when
// the request cost more: what was spent was spent). It is recorded even
// when ctx is cancelled, since the client hanging up does not undo the
// request. Settling twice is ErrDone.
func (r *Reservation) Settle(ctx context.Context, actual Cost) error {
	if err := actual.check("the actual cost"); err != nil {
		return fmt.Errorf("budget settle: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return fmt.Errorf("budget settle: %w", ErrDone)
	}
	ctx = context.WithoutCancel(ctx)
	err := r.s.st.WithTx(ctx, func(tx *store.Tx) error {
		// Lock the day first, as Reserve does, so a reservation never sees
		// the hold gone and the charge not yet made.
		if _, err := tx.LockBudgetDay(ctx, r.keyID, r.day); err != nil {
			return err
		}
		if err := tx.DeleteBudgetHold(ctx, r.id); err != nil {
			return err
		}
		return tx.AddBudgetUsage(ctx, r.keyID, r.day, c2s(actual))
	})
	if err != nil {
		return fmt.Errorf("budget settle: %w", err)
	}
	r.done = true
	return nil
}

// Cancel releases the whole estimate and charges nothing: the request was
// refused before it was sent (robots.txt, the SSRF guard, an open
// breaker). Cancelling a settled or cancelled reservation does nothing, so
// `defer r.Cancel(ctx)` beside a Settle is safe.
func (r *Reservation) Cancel(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil
	}
	if err := r.s.st.DeleteBudgetHold(context.WithoutCancel(ctx), r.id); err != nil {
		return fmt.Errorf("budget cancel: %w", err)
	}
	r.done = true
	return nil
}
