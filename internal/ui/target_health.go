package ui

import (
	"time"

	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// targetHealth is what health says of t at now (run is its newest run,
// nil for none): the console's badges follow the same rules as
// `zhizhi health`, 从未采集 included.
func targetHealth(t model.Target, run *store.TargetRun, now time.Time) health.Verdict {
	if run != nil && run.Outcome == store.RunInterrupted {
		run = nil // an interrupted run says nothing about the target
	}
	return health.Judge(store.HealthTarget{ID: t.ID, TargetCode: t.TargetCode, CadenceDays: t.ExpectedCadenceDays,
		LastArticleTime: t.LastArticleTime, LastCrawledAt: t.LastCrawledAt, CreatedAt: t.CreatedAt,
		ScheduleCron: t.ScheduleCron, LastRun: run}, now)
}
