package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/store"
)

// usageIs checks the usage of one budget today.
func usageIs(t *testing.T, svc *budget.Service, keyID int64, budgetName string, want budget.Meter) {
	t.Helper()
	u, err := svc.Usage(context.Background(), keyID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]budget.Meter{budget.Requests: u.Requests, budget.Bytes: u.Bytes,
		budget.BrowserSeconds: u.BrowserSeconds, budget.OCRPages: u.OCRPages}[budgetName]
	if got != want {
		t.Errorf("%s: %+v, want %+v", budgetName, got, want)
	}
}

func wantOver(t *testing.T, err error, budgetName string, limit, used int64) {
	t.Helper()
	var over *budget.OverError
	if !errors.As(err, &over) || over.Budget != budgetName || over.Limit != limit || over.Used != used {
		t.Fatalf("reserve: %v (%+v), want over the %s budget, %d of %d used", err, over, budgetName, used, limit)
	}
}

// TestReserveSettleCancel: an estimate is held from reservation, the
// actual cost replaces it at settlement, a cancelled request costs nothing,
// each of the four budgets refuses the reservation that would pass its
// limit, and the next day (UTC+8) starts afresh.
func TestReserveSettleCancel(t *testing.T) {
	forEachDialect(t, 1, func(t *testing.T, w *world) {
		ctx := context.Background()
		svc := w.svc()
		lim := budget.Limits{PerDay: budget.Cost{Requests: 5, Bytes: 10 * mib, BrowserSeconds: 60, OCRPages: 10}, RequestsPerMinute: 60}
		_, id := w.key(t, "alice", auth.RoleOperator, &lim, auth.ScopeAcquire)

		r1, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 4 * mib})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 4 * mib, BrowserSeconds: 30})
		if err != nil {
			t.Fatal(err)
		}
		usageIs(t, svc, id, budget.Requests, budget.Meter{Limit: 5, Used: 0, Reserved: 2, Remaining: 3})
		usageIs(t, svc, id, budget.Bytes, budget.Meter{Limit: 10 * mib, Reserved: 8 * mib, Remaining: 2 * mib})
		usageIs(t, svc, id, budget.BrowserSeconds, budget.Meter{Limit: 60, Reserved: 30, Remaining: 30})

		// 8 MiB held, 4 more would make 12 of 10.
		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 4 * mib})
		wantOver(t, err, budget.Bytes, 10*mib, 8*mib)
		if !strings.Contains(err.Error(), "bytes downloaded") {
			t.Errorf("error %q does not name the budget in words", err)
		}

		// The page was 1 MiB: 3 MiB of the estimate come back.
		if err := r1.Settle(ctx, budget.Cost{Requests: 1, Bytes: 1 * mib}); err != nil {
			t.Fatal(err)
		}
		usageIs(t, svc, id, budget.Requests, budget.Meter{Limit: 5, Used: 1, Reserved: 1, Remaining: 3})
		usageIs(t, svc, id, budget.Bytes, budget.Meter{Limit: 10 * mib, Used: 1 * mib, Reserved: 4 * mib, Remaining: 5 * mib})
		r3, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 4 * mib})
		if err != nil {
			t.Fatalf("1 + 4 held + 4 of 10 MiB: %v", err)
		}

		// Refused before it was sent (robots.txt): nothing billed.
		if err := r2.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		usageIs(t, svc, id, budget.Requests, budget.Meter{Limit: 5, Used: 1, Reserved: 1, Remaining: 3})
		usageIs(t, svc, id, budget.Bytes, budget.Meter{Limit: 10 * mib, Used: 1 * mib, Reserved: 4 * mib, Remaining: 5 * mib})
		usageIs(t, svc, id, budget.BrowserSeconds, budget.Meter{Limit: 60, Remaining: 60})
		if err := r2.Settle(ctx, budget.Cost{Requests: 1}); !errors.Is(err, budget.ErrDone) {
			t.Errorf("settling a cancelled reservation: %v, want ErrDone", err)
		}
		if err := r1.Settle(ctx, budget.Cost{Requests: 1}); !errors.Is(err, budget.ErrDone) {
			t.Errorf("settling twice: %v, want ErrDone", err)
		}
		if err := r1.Cancel(ctx); err != nil {
			t.Errorf("cancelling a settled reservation: %v, want nothing done", err)
		}
		usageIs(t, svc, id, budget.Requests, budget.Meter{Limit: 5, Used: 1, Reserved: 1, Remaining: 3})

		// A page bigger than its estimate is charged what it was.
		if err := r3.Settle(ctx, budget.Cost{Requests: 1, Bytes: 6 * mib}); err != nil {
			t.Fatal(err)
		}
		usageIs(t, svc, id, budget.Bytes, budget.Meter{Limit: 10 * mib, Used: 7 * mib, Remaining: 3 * mib})

		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1, BrowserSeconds: 61})
		wantOver(t, err, budget.BrowserSeconds, 60, 0)
		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1, OCRPages: 11})
		wantOver(t, err, budget.OCRPages, 10, 0)

		// Requests: 2 used, 3 more pass, the sixth is refused.
		for i := range 3 {
			r, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1})
			if err != nil {
				t.Fatalf("request %d of 5: %v", 3+i, err)
			}
			if err := r.Settle(ctx, budget.Cost{Requests: 1}); err != nil {
				t.Fatal(err)
			}
		}
		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1})
		wantOver(t, err, budget.Requests, 5, 5)
		if !strings.Contains(err.Error(), "requests") || !strings.Contains(err.Error(), "2026-12-03 00:00 UTC+8") {
			t.Errorf("error %q: want the budget named and when it renews", err)
		}

		// Bad input: one clear error, nothing held.
		if _, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: -1}); err == nil || !strings.Contains(err.Error(), "bytes downloaded") {
			t.Errorf("negative estimate: %v", err)
		}
		if _, err := svc.Reserve(ctx, 0, budget.Cost{Requests: 1}); err == nil {
			t.Error("a reservation without a key passed")
		}

		// 00:00 UTC+8 is 16:00 UTC: a new budget day.
		w.clk.Set(time.Date(2026, 12, 2, 15, 59, 59, 0, time.UTC))
		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1})
		wantOver(t, err, budget.Requests, 5, 5)
		w.clk.Set(time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC))
		if _, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1}); err != nil {
			t.Fatalf("a new day: %v", err)
		}
		u, err := svc.Usage(ctx, id)
		if err != nil || u.Day != "2026-12-03" || !u.ResetsAt.Equal(time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)) ||
			u.Requests != (budget.Meter{Limit: 5, Reserved: 1, Remaining: 4}) || u.Bytes.Used != 0 {
			t.Errorf("new day's usage: %+v %v", u, err)
		}
	})
}

// TestReserveRace: 50 requests of one key race, from two processes, for
// the last 10 requests of its day: exactly 10 pass, every other is refused
// naming the requests budget.
func TestReserveRace(t *testing.T) {
	forEachDialect(t, 2, func(t *testing.T, w *world) {
		lim := budget.Defaults
		lim.PerDay.Requests = 30
		// Three rounds, each with a key of its own: a race lost once in a
		// while still shows.
		for round := range 3 {
			_, id := w.key(t, "alice", auth.RoleOperator, &lim, auth.ScopeAcquire)
			raceForLast10(t, w, id, round)
		}
	})
}

func raceForLast10(t *testing.T, w *world, id int64, round int) {
	ctx := context.Background()
	{
		for range 20 {
			r, err := w.svc().Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Settle(ctx, budget.Cost{Requests: 1, Bytes: 1000}); err != nil {
				t.Fatal(err)
			}
		}
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			passed, refused int
			other           []error
		)
		start := make(chan struct{})
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := w.procs[i%2].svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: 1000})
				var over *budget.OverError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					passed++
				case errors.As(err, &over) && over.Budget == budget.Requests && over.Limit == 30 && over.Used == 30:
					refused++
				default:
					other = append(other, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if passed != 10 || refused != 40 || len(other) != 0 {
			first := error(nil)
			if len(other) > 0 {
				first = other[0]
			}
			t.Fatalf("round %d: %d passed, %d refused, %d other errors (first: %v); want exactly 10 and 40",
				round, passed, refused, len(other), first)
		}
		usageIs(t, w.svc(), id, budget.Requests, budget.Meter{Limit: 30, Used: 20, Reserved: 10, Remaining: 0})
	}
}

// TestUnsettledReleased: a process that reserved and died never settles;
// its holds keep counting for HoldFor, then are released, not charged.
func TestUnsettledReleased(t *testing.T) {
	forEachDialect(t, 2, func(t *testing.T, w *world) {
		ctx := context.Background()
		lim := budget.Defaults
		lim.PerDay.Requests, lim.PerDay.BrowserSeconds = 3, 100
		_, id := w.key(t, "alice", auth.RoleOperator, &lim, auth.ScopeAcquire)
		dying, other := w.procs[0], w.procs[1]
		for range 3 {
			if _, err := dying.svc.Reserve(ctx, id, budget.Cost{Requests: 1, BrowserSeconds: 30}); err != nil {
				t.Fatal(err)
			}
		}
		dying.st.Close() // killed before settling

		_, err := other.svc.Reserve(ctx, id, budget.Cost{Requests: 1})
		wantOver(t, err, budget.Requests, 3, 3)
		w.clk.Set(t0.Add(budget.HoldFor - time.Second))
		_, err = other.svc.Reserve(ctx, id, budget.Cost{Requests: 1})
		wantOver(t, err, budget.Requests, 3, 3)

		w.clk.Set(t0.Add(budget.HoldFor))
		usageIs(t, other.svc, id, budget.Requests, budget.Meter{Limit: 3, Remaining: 3})
		usageIs(t, other.svc, id, budget.BrowserSeconds, budget.Meter{Limit: 100, Remaining: 100})
		for range 3 {
			if _, err := other.svc.Reserve(ctx, id, budget.Cost{Requests: 1, BrowserSeconds: 30}); err != nil {
				t.Fatalf("after the dead process's holds expired: %v", err)
			}
		}
		usageIs(t, other.svc, id, budget.Requests, budget.Meter{Limit: 3, Reserved: 3})
	})
}

// TestSetLimits: a key's limits are set in one audited change; a key
// without limits has the defaults; a negative limit or an unknown key is
// refused and changes nothing.
func TestSetLimits(t *testing.T) {
	forEachDialect(t, 1, func(t *testing.T, w *world) {
		ctx := context.Background()
		svc := w.svc()
		_, id := w.key(t, "alice", auth.RoleOperator, nil, auth.ScopeAcquire)
		if l, err := svc.Limits(ctx, id); err != nil || l != budget.Defaults {
			t.Fatalf("limits of a new key: %+v %v, want the defaults", l, err)
		}
		want := budget.Limits{PerDay: budget.Cost{Requests: 50, Bytes: 5 * mib, BrowserSeconds: 0, OCRPages: 3}, RequestsPerMinute: 6}
		if err := svc.SetLimits(ctx, "cli:root", id, want); err != nil {
			t.Fatal(err)
		}
		bad := want
		bad.PerDay.OCRPages = -1
		if err := svc.SetLimits(ctx, "cli:root", id, bad); !errors.Is(err, budget.ErrInvalid) || !strings.Contains(err.Error(), "OCR pages") {
			t.Errorf("negative limit: %v, want ErrInvalid naming OCR pages", err)
		}
		if err := svc.SetLimits(ctx, "cli:root", 999, want); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown key: %v, want not found", err)
		}
		if l, err := svc.Limits(ctx, id); err != nil || l != want {
			t.Errorf("limits: %+v %v, want %+v", l, err, want)
		}
		entries, err := w.procs[0].st.ListAudit(ctx, store.AuditFilter{})
		if err != nil || len(entries) == 0 {
			t.Fatalf("audit: %v %v", entries, err)
		}
		var after budget.Limits
		if e := entries[0]; e.Action != "apikey.budget" || e.ObjectID != strconv.FormatInt(id, 10) ||
			json.Unmarshal(e.After, &after) != nil || after != want {
			t.Errorf("audit: %s %s %s, want the budget change first, after %+v", e.Action, e.ObjectID, e.After, want)
		}
		// A browser budget of 0: a render is refused, a plain fetch is not.
		_, err = svc.Reserve(ctx, id, budget.Cost{Requests: 1, BrowserSeconds: 1})
		wantOver(t, err, budget.BrowserSeconds, 0, 0)
		if _, err := svc.Reserve(ctx, id, budget.Cost{Requests: 1, Bytes: mib}); err != nil {
			t.Errorf("a fetch with no browser budget: %v", err)
		}
	})
}
