package store_test

import (
	"context"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestHostPressures: the public pressure table counts the requests that
// reached a host (rows with a duration), their bytes, the answers that
// make the crawler back off, the requests held back, and the breaker trips
// of the window only.
func TestHostPressures(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		day := time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC) // 2026-12-01 00:00 in Shanghai
		ms := func(v int) *int { return &v }
		status := func(v int) *int { return &v }
		rows := []model.CrawlLog{
			{Host: "a.gov.test", Purpose: "detail", Method: "GET", HTTPStatus: status(200), Bytes: 1000, DurationMS: ms(5), Success: true, OccurredAt: day.Add(time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Method: "GET", HTTPStatus: status(304), BytesSaved: 700, DurationMS: ms(0), Success: true, OccurredAt: day.Add(2 * time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Method: "GET", HTTPStatus: status(503), Bytes: 20, DurationMS: ms(3), OccurredAt: day.Add(3 * time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Method: "GET", ErrorClass: "robots", OccurredAt: day.Add(4 * time.Hour)}, // held back
			{Host: "b.gov.test", Purpose: "list", Method: "GET", HTTPStatus: status(429), Bytes: 10, DurationMS: ms(1), OccurredAt: day.Add(5 * time.Hour)},
			{Host: "b.gov.test", Purpose: "list", Method: "GET", ErrorClass: "timeout", DurationMS: ms(30000), OccurredAt: day.Add(6 * time.Hour)},
			{Host: "a.gov.test", Purpose: "detail", Method: "GET", HTTPStatus: status(200), Bytes: 5000, DurationMS: ms(5), Success: true, OccurredAt: day.Add(25 * time.Hour)}, // next day
		}
		for i := range rows {
			if err := s.InsertCrawlLog(ctx, &rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutHostState(ctx, &model.HostState{Host: "b.gov.test",
			BreakerTrips: []time.Time{day.Add(-48 * time.Hour), day.Add(7 * time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.HostPressures(ctx, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := []store.HostPressure{
			{Host: "a.gov.test", Requests: 3, Bytes: 1020, BytesSaved: 700, NotSent: 1, Errors: 1},
			{Host: "b.gov.test", Requests: 2, Bytes: 10, Errors: 2, BreakerTrips: 1},
		}
		if len(got) != len(want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}
