package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func visitorKey(n int) string { return fmt.Sprintf("%064x", n) }

// visit is an update that adds counts and sets the band as given; the
// store keeps what it is handed.
func visit(day string, key int, band string, pages, clicks int64, cards ...store.CardCount) store.VisitorUpdate {
	return store.VisitorUpdate{Day: day, Key: visitorKey(key), UAClass: "browser",
		Apply: func(v *store.VisitorDay) []store.CardCount {
			v.Requests += pages + clicks
			v.Pages += pages
			v.Clicks += clicks
			v.Band = band
			return cards
		}}
}

func TestPortalSaltIsSharedAndForgotten(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		first := bytes.Repeat([]byte{1}, 32)
		second := bytes.Repeat([]byte{2}, 32)
		got, err := s.PortalSalt(ctx, "2026-04-23", first)
		if err != nil || !bytes.Equal(got, first) {
			t.Fatalf("first salt: %x %v", got, err)
		}
		// A second process draws its own salt: the stored one wins.
		if got, err := s.PortalSalt(ctx, "2026-04-23", second); err != nil || !bytes.Equal(got, first) {
			t.Fatalf("second process got salt %x (%v), want the first one", got, err)
		}
		if got, err := s.PortalSalt(ctx, "2026-04-24", second); err != nil || !bytes.Equal(got, second) {
			t.Fatalf("next day's salt: %x %v", got, err)
		}
		days, err := s.OpenPortalDays(ctx)
		if err != nil || strings.Join(days, ",") != "2026-04-23,2026-04-24" {
			t.Fatalf("open days %v %v", days, err)
		}
		if closed, err := s.ClosePortalDay(ctx, "2026-04-23"); err != nil || !closed {
			t.Fatalf("close: %v %v", closed, err)
		}
		var n int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM portal_salt WHERE day = '2026-04-23'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("a closed day keeps its salt (%d rows, %v)", n, err)
		}
		if _, err := s.PortalSalt(ctx, "2026-04-23", second); !errors.Is(err, store.ErrDayClosed) {
			t.Errorf("salt for a closed day: %v, want ErrDayClosed", err)
		}
		if days, _ := s.OpenPortalDays(ctx); strings.Join(days, ",") != "2026-04-24" {
			t.Errorf("open days after the close: %v", days)
		}
	})
}

// TestPortalDayTallies: the humans' tallies count only visitors in the
// human band, live and after the close; the close forgets the visitors
// and keeps the totals.
func TestPortalDayTallies(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const day = "2026-04-23"
		ups := []store.VisitorUpdate{
			visit(day, 1, store.BandHuman, 2, 1, store.CardCount{CardID: 7, Views: 1, Clicks: 1}, store.CardCount{CardID: 3, Views: 1}),
			visit(day, 2, store.BandHuman, 1, 0, store.CardCount{CardID: 7, Views: 1}),
			visit(day, 3, store.BandBot, 40, 5, store.CardCount{CardID: 7, Views: 20, Clicks: 5}, store.CardCount{CardID: 9, Views: 20}),
			visit(day, 4, store.BandReview, 3, 1, store.CardCount{CardID: 9, Views: 3, Clicks: 1}),
			visit("2026-04-24", 1, store.BandHuman, 1, 0, store.CardCount{CardID: 7, Views: 1}),
		}
		if _, err := s.ApplyVisits(ctx, ups); err != nil {
			t.Fatal(err)
		}
		// The first visitor comes back and clicks card 3 through.
		if _, err := s.ApplyVisits(ctx, []store.VisitorUpdate{visit(day, 1, store.BandHuman, 0, 1, store.CardCount{CardID: 3, Clicks: 1})}); err != nil {
			t.Fatal(err)
		}
		wantTallies := "[{3 1 1} {7 2 1}]"
		wantStats := "{human 2 3 2} {review 1 3 1} {bot 1 40 5}"
		check := func(when string, closed bool) {
			t.Helper()
			tallies, err := s.HumanTallies(ctx, day)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(tallies); got != wantTallies {
				t.Errorf("%s: human tallies %s, want %s", when, got, wantTallies)
			}
			stats, err := s.PortalDayStats(ctx, day)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Trim(fmt.Sprint(stats.Bands), "[]")
			if got != wantStats || stats.Closed != closed {
				t.Errorf("%s: day stats %s closed=%v, want %s closed=%v", when, got, stats.Closed, wantStats, closed)
			}
		}
		check("open day", false)
		if closed, err := s.ClosePortalDay(ctx, day); err != nil || !closed {
			t.Fatalf("close: %v %v", closed, err)
		}
		check("closed day", true)
		for _, table := range []string{"portal_visitor", "portal_visit_card", "portal_salt"} {
			var n int
			if err := s.DB().QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE day = '` + day + `'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s keeps %d rows of the closed day (%v)", table, n, err)
			}
		}
		// The next day is untouched.
		if vs, err := s.Visitors(ctx, "2026-04-24"); err != nil || len(vs) != 1 {
			t.Errorf("the next day's visitors: %d %v", len(vs), err)
		}
		// Closing again changes nothing; late traffic is dropped.
		if closed, err := s.ClosePortalDay(ctx, day); err != nil || closed {
			t.Errorf("second close: %v %v", closed, err)
		}
		dropped, err := s.ApplyVisits(ctx, []store.VisitorUpdate{visit(day, 5, store.BandHuman, 1, 1, store.CardCount{CardID: 7, Views: 1, Clicks: 1})})
		if err != nil || dropped != 1 {
			t.Errorf("late visit to a closed day: dropped %d, %v", dropped, err)
		}
		check("after a late visit", true)
		// A flush that raced the close and wrote after it is swept away.
		if _, err := s.DB().Exec(`INSERT INTO portal_visitor (day, visitor_key, ua_class, band) VALUES ('` + day + `', '` + visitorKey(9) + `', 'browser', 'human')`); err != nil {
			t.Fatal(err)
		}
		if n, err := s.SweepClosedPortalDays(ctx); err != nil || n != 1 {
			t.Errorf("sweep: %d rows, %v; want 1", n, err)
		}
		if vs, err := s.Visitors(ctx, day); err != nil || len(vs) != 0 {
			t.Errorf("the closed day keeps %d visitors after the sweep (%v)", len(vs), err)
		}
		if vs, err := s.Visitors(ctx, "2026-04-24"); err != nil || len(vs) != 1 {
			t.Errorf("the sweep took the open day's visitors: %d %v", len(vs), err)
		}
		// A day nobody visited has no tallies and zero in every band.
		stats, err := s.PortalDayStats(ctx, "2026-01-01")
		if err != nil || fmt.Sprint(stats.Bands) != "[{human 0 0 0} {review 0 0 0} {bot 0 0 0}]" {
			t.Errorf("empty day: %+v %v", stats, err)
		}
	})
}

// TestApplyVisitsReadsTheStoredRow: each update sees the row as the last
// one left it, band changes included.
func TestApplyVisitsReadsTheStoredRow(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 4, 23, 2, 0, 0, 0, time.UTC)
		step := func(band string) store.VisitorUpdate {
			return store.VisitorUpdate{Day: "2026-04-23", Key: visitorKey(1), UAClass: "bot",
				Apply: func(v *store.VisitorDay) []store.CardCount {
					v.Requests++
					v.GapCount++
					v.GapMean += 1.5
					v.GapM2 += 0.25
					v.Events.Pointer += 3
					t := at.Add(time.Duration(v.Requests) * time.Minute)
					v.LastNavAt = &t
					v.Score, v.Band = int(v.Requests)*20, band
					return nil
				}}
		}
		if _, err := s.ApplyVisits(ctx, []store.VisitorUpdate{step(store.BandHuman), step(store.BandReview)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyVisits(ctx, []store.VisitorUpdate{step(store.BandBot)}); err != nil {
			t.Fatal(err)
		}
		v, err := s.Visitor(ctx, "2026-04-23", visitorKey(1))
		if err != nil {
			t.Fatal(err)
		}
		if v.Requests != 3 || v.GapCount != 3 || v.GapMean != 4.5 || v.GapM2 != 0.75 || v.Events.Pointer != 9 ||
			v.Score != 60 || v.Band != store.BandBot || v.UAClass != "bot" || v.LastNavAt == nil || !v.LastNavAt.Equal(at.Add(3*time.Minute)) {
			t.Errorf("visitor after three updates: %+v", v)
		}
	})
}

// TestApplyVisitsAcrossProcesses: two processes on one database flush the
// same visitors at the same time, in opposite orders; every count lands
// and neither flush fails (no lost update, no deadlock).
func TestApplyVisitsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			dir := t.TempDir()
			dsn := "sqlite://" + filepath.Join(dir, "zhizhi.db")
			if dialect == store.DialectPostgres {
				dsn = storetest.PostgresURL(t)
			}
			open := func() *store.Store {
				st, err := store.Open(ctx, dsn, dir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			a, b := open(), open()
			const keys, rounds = 8, 15
			batch := func(reverse bool) []store.VisitorUpdate {
				var ups []store.VisitorUpdate
				for k := range keys {
					if reverse {
						k = keys - 1 - k
					}
					ups = append(ups, visit("2026-04-23", k, store.BandHuman, 1, 0, store.CardCount{CardID: 1, Views: 1}))
				}
				return ups
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2*rounds)
			for i, st := range []*store.Store{a, b} {
				wg.Go(func() {
					for range rounds {
						if _, err := st.ApplyVisits(ctx, batch(i == 1)); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("flush: %v", err)
			}
			vs, err := a.Visitors(ctx, "2026-04-23")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if v.Pages != 2*rounds {
					t.Errorf("visitor %s…: %d pages, want %d", v.Key[:8], v.Pages, 2*rounds)
				}
			}
			tallies, err := a.HumanTallies(ctx, "2026-04-23")
			if err != nil || len(vs) != keys || len(tallies) != 1 || tallies[0].Views != 2*rounds*keys {
				t.Errorf("%d visitors, tallies %+v (%v); want %d visitors and %d views", len(vs), tallies, err, keys, 2*rounds*keys)
			}
		})
	}
}
