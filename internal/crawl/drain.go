package crawl

import (
	"context"
	"errors"

	"zhizhi/internal/model"
)

// ErrInterrupted ends work the run did not do because it was asked to stop
// (Ctrl-C, SIGTERM): not a failure of the site or of its template.
var ErrInterrupted = errors.New("crawl interrupted")

// draining reports whether the run should take no new work.
func (c *Crawler) draining() bool {
	if c.Drain == nil {
		return false
	}
	select {
	case <-c.Drain:
		return true
	default:
		return false
	}
}

// interrupted reports whether err only says the run was stopped while the
// target was under way: its context was cancelled after the drain began,
// or it gave up new work.
func (c *Crawler) interrupted(err error) bool {
	return c.draining() && (errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled))
}

// skipped is the result of a target the run did not start because it was
// draining. The site is looked up even after the crawl's context ended: the
// summary names it.
func (c *Crawler) skipped(ctx context.Context, t model.Target) Result {
	res := Result{TargetCode: t.TargetCode, Interrupted: true, Started: c.now(), Finished: c.now()}
	if site, err := c.Store.SiteByID(context.WithoutCancel(ctx), t.SiteID); err == nil {
		res.SiteCode = site.SiteCode
	}
	c.emit(Event{Target: t.TargetCode, Kind: "done"})
	return res
}
