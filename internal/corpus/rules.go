package corpus

import (
	"context"
	"errors"
	"fmt"

	"zhizhi/internal/store"
)

// RunSummary counts what a batch of intakes did.
type RunSummary struct {
	Looked       int
	NewWorks     int
	NewRevisions int
	Unchanged    int
	FailedQA     int
	Candidates   int
	Failures     []IntakeFailure
}

// IntakeFailure is an article that could not be taken in, and why.
type IntakeFailure struct {
	ArticleID int64
	Error     string
}

// Add counts one intake's outcome.
func (s *RunSummary) Add(id int64, res *IntakeResult, err error) {
	s.Looked++
	if err != nil {
		s.Failures = append(s.Failures, IntakeFailure{ArticleID: id, Error: err.Error()})
		return
	}
	switch {
	case res.NewWork:
		s.NewWorks++
	case res.NewRevision:
		s.NewRevisions++
	default:
		s.Unchanged++
	}
	if res.NewRevision && len(res.QA) > 0 {
		s.FailedQA++
	}
	s.Candidates += res.Candidates
}

// CheckRuleTargets refuses target codes that do not exist.
func (c *Service) CheckRuleTargets(ctx context.Context, codes []string) error {
	for _, code := range codes {
		if _, err := c.Store.TargetByCode(ctx, code); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no target %q (zhizhi target list shows them)", code)
			}
			return err
		}
	}
	return nil
}

// IntakeTargets takes in every ready article of targets (every target when
// none) of full-access sites that the corpus does not hold, or holds from
// before the article changed.
func (c *Service) IntakeTargets(ctx context.Context, targets []string, actor string, progress Progress) (RunSummary, error) {
	var sum RunSummary
	if err := c.CheckRuleTargets(ctx, targets); err != nil {
		return sum, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var after int64
	for {
		ids, err := c.Store.ArticlesForIntake(ctx, targets, after, 200)
		if err != nil {
			return sum, err
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
			res, err := c.IntakeArticle(ctx, id, actor)
			sum.Add(id, res, err)
			after = id
		}
		progress("intake", sum.Looked, 0)
		if len(ids) < 200 {
			return sum, nil
		}
	}
}

// RunRules runs every enabled intake rule.
func (c *Service) RunRules(ctx context.Context, progress Progress) (RunSummary, error) {
	var all RunSummary
	rules, err := c.Store.CorpusIntakeRules(ctx)
	if err != nil {
		return all, err
	}
	for _, r := range rules {
		if !r.Enabled {
			continue
		}
		sum, err := c.IntakeTargets(ctx, r.TargetCodes, fmt.Sprintf("rule:%d", r.ID), progress)
		all.Looked += sum.Looked
		all.NewWorks += sum.NewWorks
		all.NewRevisions += sum.NewRevisions
		all.Unchanged += sum.Unchanged
		all.FailedQA += sum.FailedQA
		all.Candidates += sum.Candidates
		all.Failures = append(all.Failures, sum.Failures...)
		if err != nil {
			return all, fmt.Errorf("intake rule %d (%s): %w", r.ID, r.Name, err)
		}
		if err := c.Store.MarkCorpusIntakeRuleRun(ctx, r.ID, sum.NewWorks+sum.NewRevisions); err != nil {
			return all, err
		}
	}
	return all, nil
}
