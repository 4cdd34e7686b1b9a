package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestTargetRuns: every run is kept; the last run of a target is its
// newest; health reads the newest run that finished (an interrupted run
// says nothing about the target), and only enabled targets.
func TestTargetRuns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		at := func(min int) time.Time { return f.now.Add(time.Duration(min) * time.Minute) }
		runs := []store.TargetRun{
			{TargetID: f.cmsTgt, Runner: "cli", StartedAt: at(0), FinishedAt: at(1), Outcome: store.RunOK, Created: 3, Pages: 1, Bytes: 1000},
			{TargetID: f.yamlTarget, Runner: "worker-a", StartedAt: at(2), FinishedAt: at(3), Outcome: store.RunOK},
			{TargetID: f.cmsTgt, Runner: "worker-b", StartedAt: at(4), FinishedAt: at(5), Outcome: store.RunFailed, Failed: 2,
				Error: "2 articles failed; " + strings.Repeat("页面结构已改变 ", 1000)},
			{TargetID: f.cmsTgt, Runner: "worker-a", StartedAt: at(6), FinishedAt: at(7), Outcome: store.RunInterrupted, Created: 1},
		}
		for i := range runs {
			if err := s.RecordTargetRun(ctx, &runs[i]); err != nil {
				t.Fatalf("record run %d: %v", i, err)
			}
		}
		last, err := s.LastTargetRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(last) != 2 || last[f.cmsTgt].Outcome != store.RunInterrupted || last[f.yamlTarget].Runner != "worker-a" {
			t.Fatalf("last runs %+v, want the interrupted run of the CMS target and worker-a's of the other", last)
		}
		if got := last[f.cmsTgt]; !got.StartedAt.Equal(at(6)) || !got.FinishedAt.Equal(at(7)) || got.Created != 1 {
			t.Errorf("last run read back as %+v", got)
		}
		hist, err := s.TargetRuns(ctx, f.cmsTgt, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 3 || hist[0].Outcome != store.RunInterrupted || hist[2].Outcome != store.RunOK {
			t.Fatalf("history %+v, want 3 runs newest first", hist)
		}
		if e := hist[1].Error; len(e) > 4100 || !strings.HasPrefix(e, "2 articles failed") || !strings.HasSuffix(e, "…") {
			t.Errorf("a long error is kept as %d bytes ending %q, want it cut near 4000 bytes and marked", len(e), e[max(0, len(e)-10):])
		}

		hts, err := s.HealthTargets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byCode := map[string]store.HealthTarget{}
		for _, h := range hts {
			byCode[h.TargetCode] = h
		}
		cms := byCode["qyfgw_2849"]
		if cms.LastRun == nil || cms.LastRun.Outcome != store.RunFailed || cms.LastRun.Runner != "worker-b" || cms.LastRun.Failed != 2 {
			t.Errorf("health sees the CMS target's last run as %+v, want worker-b's failed run (the interrupted one says nothing)", cms.LastRun)
		}
		if cms.CadenceDays != 30 || cms.SiteCode != "qy" {
			t.Errorf("health target %+v, want cadence 30 (the default) on site qy", cms)
		}

		// A disabled target is not watched.
		if err := store.Exec(ctx, s, `UPDATE crawl_target SET enabled = ? WHERE id = ?`, false, f.yamlTarget); err != nil {
			t.Fatal(err)
		}
		hts, err = s.HealthTargets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(hts) != 1 || hts[0].TargetCode != "qyfgw_2849" {
			t.Errorf("health targets after disabling gd_zcwj: %+v", hts)
		}

		// A run of an unknown target is refused by the database.
		if err := s.RecordTargetRun(ctx, &store.TargetRun{TargetID: 999999, StartedAt: at(0), FinishedAt: at(0), Outcome: store.RunOK}); err == nil {
			t.Error("a run of a target that does not exist was recorded")
		}
		if err := s.RecordTargetRun(ctx, &store.TargetRun{TargetID: f.cmsTgt, StartedAt: at(0), FinishedAt: at(0), Outcome: "partial"}); err == nil {
			t.Error("an outcome outside ok/failed/interrupted/blocked was recorded")
		}
	})
}

// TestHostsNeedingAttention: the hosts listed are those backing off or
// behind an open breaker at the moment asked, blocked or flagged; a
// backoff or breaker that has ended is not listed. Failing robots.txt
// files are listed by origin.
func TestHostsNeedingAttention(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		in := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
		hosts := []model.HostState{
			{Host: "backoff.gov.test", ConsecutiveErrors: 2, BackoffUntil: in(8 * time.Second)},
			{Host: "backoff-over.gov.test", ConsecutiveErrors: 2, BackoffUntil: in(-time.Second)},
			{Host: "breaker.gov.test", ConsecutiveErrors: 5, BreakerUntil: in(23 * time.Hour)},
			{Host: "breaker-over.gov.test", ConsecutiveErrors: 5, BreakerUntil: in(-time.Minute)},
			{Host: "review.gov.test", NeedsReview: true},
			{Host: "captcha.gov.test", BlockReason: "captcha"},
			{Host: "fine.gov.test"},
		}
		for i := range hosts {
			if err := s.PutHostHealth(ctx, &hosts[i]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.HostsNeedingAttention(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range got {
			names = append(names, h.Host)
		}
		want := "backoff.gov.test breaker.gov.test captcha.gov.test review.gov.test"
		if strings.Join(names, " ") != want {
			t.Errorf("hosts needing attention %v, want %s", names, want)
		}
		since := now.Add(-time.Hour)
		for _, r := range []model.RobotsState{
			{Origin: "http://down.gov.test:80", Host: "down.gov.test", FetchedAt: now, Failures: 2, FailingSince: &since, LastError: "HTTP 503"},
			{Origin: "http://up.gov.test:80", Host: "up.gov.test", Status: 200, FetchedAt: now},
		} {
			if err := s.PutRobotsState(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
		failing, err := s.FailingRobots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(failing) != 1 || failing[0].Host != "down.gov.test" || failing[0].LastError != "HTTP 503" {
			t.Errorf("failing robots.txt %+v, want down.gov.test only", failing)
		}
	})
}
