package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestRobotsStateMigration: robots.txt kept per host name before
// migration 5 is found afterwards under the host's http and https origins,
// a failure still counted as one (so the host stays closed until a retry),
// and the host's health is untouched.
func TestRobotsStateMigration(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if err := store.MigrateTo(ctx, s, 3); err != nil {
			t.Fatalf("down to 3: %v", err)
		}
		at := time.Date(2026, 3, 5, 8, 0, 0, 0, time.UTC)
		ins := `INSERT INTO host_state (host, consecutive_errors, robots_body, robots_status, robots_fetched_at, robots_etag)
			VALUES ($1, $2, $3, $4, $5, $6)`
		ts := any(at)
		if s.Dialect() == store.DialectSQLite {
			ins = `INSERT INTO host_state (host, consecutive_errors, robots_body, robots_status, robots_fetched_at, robots_etag)
				VALUES (?, ?, ?, ?, ?, ?)`
			ts = at.Format("2006-01-02T15:04:05.000000Z")
		}
		for _, r := range []struct {
			host   string
			errs   int
			body   []byte
			status int
			etag   any
		}{
			{"www.read.gov.test", 0, []byte("User-agent: *\nDisallow: /x\n"), 200, `"r1"`},
			{"www.down.gov.test", 1, []byte("robots.txt unreachable: connection refused"), 0, nil},
			{"www.busy.gov.test", 1, nil, 503, nil},
		} {
			if _, err := s.DB().ExecContext(ctx, ins, r.host, r.errs, r.body, r.status, ts, r.etag); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("up: %v", err)
		}
		for _, tc := range []struct {
			origin   string
			status   int
			failures int
			lastErr  string
			body     string
		}{
			{"http://www.read.gov.test:80", 200, 0, "", "User-agent: *\nDisallow: /x\n"},
			{"https://www.read.gov.test:443", 200, 0, "", "User-agent: *\nDisallow: /x\n"},
			{"http://www.down.gov.test:80", 0, 1, "network error", ""},
			{"https://www.busy.gov.test:443", 503, 1, "HTTP 503", ""},
		} {
			r, err := s.GetRobotsState(ctx, tc.origin)
			if err != nil || r.Status != tc.status || r.Failures != tc.failures || r.LastError != tc.lastErr ||
				string(r.Body) != tc.body || !r.FetchedAt.Equal(at) {
				t.Errorf("%s after the migration: %+v (%v)", tc.origin, r, err)
			}
			if tc.failures > 0 && (r.FailingSince == nil || !r.FailingSince.Equal(at)) {
				t.Errorf("%s: failing since %v, want %v", tc.origin, r.FailingSince, at)
			}
		}
		if r, _ := s.GetRobotsState(ctx, "http://www.read.gov.test:80"); r.ETag != `"r1"` || r.Host != "www.read.gov.test" {
			t.Errorf("validators or host lost: %+v", r)
		}
		if h, err := s.GetHostState(ctx, "www.down.gov.test"); err != nil || h.ConsecutiveErrors != 1 {
			t.Errorf("host health after the migration: %+v (%v)", h, err)
		}
		if _, err := s.GetRobotsState(ctx, "http://www.never.gov.test:80"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an origin never fetched: %v, want ErrNotFound", err)
		}
	})
}

// TestRobotsStateRoundTrip: a stored robots.txt and a failure read back as
// written, and a later fetch replaces the row.
func TestRobotsStateRoundTrip(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 3, 5, 8, 0, 0, 123456000, time.UTC)
		fail := model.RobotsState{Origin: "https://www.gd.gov.test:443", Host: "www.gd.gov.test", Status: 0, FetchedAt: at,
			Failures: 2, FailingSince: &at, LastError: "connection refused"}
		if err := s.PutRobotsState(ctx, &fail); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRobotsState(ctx, fail.Origin)
		if err != nil || got.Failures != 2 || got.LastError != "connection refused" || !got.FailingSince.Equal(at) || got.Body != nil {
			t.Fatalf("failure round trip: %+v (%v)", got, err)
		}
		read := model.RobotsState{Origin: fail.Origin, Host: fail.Host, Status: 200, Body: []byte("User-agent: *\n"),
			FetchedAt: at.Add(time.Minute), ETag: `"e"`}
		if err := s.PutRobotsState(ctx, &read); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetRobotsState(ctx, fail.Origin)
		if err != nil || got.Failures != 0 || got.FailingSince != nil || got.LastError != "" || string(got.Body) != "User-agent: *\n" || got.ETag != `"e"` {
			t.Fatalf("after a read: %+v (%v)", got, err)
		}
		all, err := s.ListRobotsStates(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("list: %+v (%v)", all, err)
		}
	})
}
