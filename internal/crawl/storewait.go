package crawl

import (
	"context"
	"errors"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// DefaultStoreWait is how long a one-shot crawl waits for a database that
// stopped answering before it gives up.
const DefaultStoreWait = 2 * time.Minute

// untilStored runs pass — one pass of a target's crawl — again and again
// while the database is what stops it. A database that stops answering
// (store.IsUnavailable) is not the site's failure: the pass stopped at the
// first statement that failed and left the link it was at due, unmarked;
// the crawl waits for the database and goes on where it was, with the
// links still due (a walk that finished is not walked again). An article
// fetched while the database was away and not stored is fetched again; one
// stored is not counted twice (its second fetch is a re-check).
//
// The crawl gives up once the database has not answered for StoreWait
// (then Err is a *store.UnavailableError), when ctx ends or the run is
// drained (then it is Interrupted).
func (c *Crawler) untilStored(ctx context.Context, t model.Target, pass func(walkedSince *time.Time) Result) Result {
	walkedSince := c.WalkedSince
	var total Result
	var downSince time.Time // when the database stopped answering, for passes that got nowhere
	for n := 0; ; n++ {
		res := pass(walkedSince)
		progressed := res.progressed()
		if n > 0 {
			res = mergePasses(total, res)
		}
		total = res
		if !store.IsUnavailable(res.Err) {
			return total
		}
		announce := downSince.IsZero() || progressed
		if announce {
			downSince = time.Now()
		}
		if walkedSince == nil {
			// The walk of this crawl, if it finished, is not walked again.
			since := total.Started
			walkedSince = &since
		}
		if err := c.waitStore(ctx, t, res.Err, downSince, announce); err != nil {
			if errors.As(err, new(*store.UnavailableError)) {
				total.Err = err
			} else {
				// Stopped while waiting: still the database's error, so
				// that whoever records the run waits for it too.
				total.Err = errors.Join(err, res.Err)
				total.Interrupted = true
			}
			return total
		}
	}
}

// progressed reports whether a pass did anything before it stopped.
func (r Result) progressed() bool {
	return r.Pages+r.Created+r.Updated+r.Unchanged+r.Failed+r.Skipped > 0
}

// waitStore waits for the database after cause, up to StoreWait from
// downSince, saying so when it begins (announce: not again for each pass
// that got nowhere) and when it is back.
func (c *Crawler) waitStore(ctx context.Context, t model.Target, cause error, downSince time.Time, announce bool) error {
	limit := c.StoreWait
	if limit == 0 {
		limit = DefaultStoreWait
	}
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.Drain != nil {
		go func() {
			select {
			case <-c.Drain:
				cancel()
			case <-waitCtx.Done():
			}
		}()
	}
	left := time.Duration(-1)
	if limit > 0 {
		// An SQLite file another writer holds answers a ping at once but
		// refuses every write: the time counts from the first failure.
		if down := time.Since(downSince); down >= limit {
			c.log().Error("the database did not come back: the crawl stops; what was stored is kept, the rest stays due",
				"target", t.TargetCode, "waited", down.Round(time.Second), "err", cause)
			return &store.UnavailableError{Waited: down, Err: cause}
		}
		left = max(limit-time.Since(downSince), time.Second)
	}
	if announce {
		c.log().Warn("the database does not answer: the crawl waits for it and then goes on where it was; nothing is marked failed",
			"target", t.TargetCode, "err", cause)
	}
	waited, err := c.Store.WaitAvailable(waitCtx, left, cause)
	total := time.Since(downSince).Round(time.Second)
	if err != nil {
		if c.draining() && ctx.Err() == nil {
			err = ErrInterrupted
		}
		var ue *store.UnavailableError
		if errors.As(err, &ue) {
			ue.Waited = total
		}
		c.log().Error("the database did not come back: the crawl stops; what was stored is kept, the rest stays due",
			"target", t.TargetCode, "waited", total, "err", err)
		return err
	}
	c.log().Info("the database answers again: the crawl goes on", "target", t.TargetCode,
		"waited", waited.Round(time.Millisecond))
	return nil
}

// mergePasses folds the next pass of a crawl into what the earlier ones
// did: counts add up, what is left (pending, retries, the error) is the
// last pass's.
func mergePasses(prev, next Result) Result {
	out := next
	out.Started = prev.Started
	out.SiteCode = firstNonEmpty(next.SiteCode, prev.SiteCode)
	out.addCounts(prev)
	out.Discovered += prev.Discovered
	out.Problems = append(append([]string(nil), prev.Problems...), next.Problems...)
	out.Walk = firstNonEmpty(next.Walk, prev.Walk)
	out.Blocked = firstNonEmpty(next.Blocked, prev.Blocked)
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// addCounts adds o's page, article and byte counts to r's.
func (r *Result) addCounts(o Result) {
	r.Pages += o.Pages
	r.Created += o.Created
	r.Updated += o.Updated
	r.Unchanged += o.Unchanged
	r.Failed += o.Failed
	r.Skipped += o.Skipped
	r.Bytes += o.Bytes
}
