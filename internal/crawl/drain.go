package crawl

import "errors"

// ErrInterrupted ends a target's crawl when the run was asked to stop
// (Crawler.Drain closed): what was done is stored, the rest stays due in
// the frontier for the next run.
var ErrInterrupted = errors.New("interrupted: the rest is left for the next run")

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
