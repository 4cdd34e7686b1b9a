package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestLedgerKeyCreatedOnce: when another process stores its key between
// this one finding none and storing its own, both end up with the other's
// key and neither fails.
func TestLedgerKeyCreatedOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var inner [2]string
		var innerErr error
		signer, verifier, err := s.LedgerKey(ctx, func() (string, string, error) {
			// The other process wins the race while this one generates.
			inner[0], inner[1], innerErr = s.LedgerKey(ctx, func() (string, string, error) { return "signer-b", "verifier-b", nil })
			return "signer-a", "verifier-a", nil
		})
		if err != nil || innerErr != nil {
			t.Fatalf("ledger key: %v / %v", err, innerErr)
		}
		if signer != "signer-b" || verifier != "verifier-b" || inner != [2]string{"signer-b", "verifier-b"} {
			t.Fatalf("keys %s %s and %v, want both the first stored (b)", signer, verifier, inner)
		}
		signer, _, err = s.LedgerKey(ctx, func() (string, string, error) {
			t.Fatal("a key was generated although one is stored")
			return "", "", nil
		})
		if err != nil || signer != "signer-b" {
			t.Fatalf("stored key %s %v", signer, err)
		}
	})
}

// TestSealLedgerDayOnce: a day is stored once; sealing it again builds
// nothing and reports it was not sealed; a day is built on the newest
// sealed day before it.
func TestSealLedgerDayOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		hex := func(c string) string { return strings.Repeat(c, 64) }
		day := func(d, prev string) func(p *model.LedgerDay) (model.LedgerDay, map[string]store.LedgerTree, error) {
			return func(p *model.LedgerDay) (model.LedgerDay, map[string]store.LedgerTree, error) {
				got := ""
				if p != nil {
					got = p.Day
				}
				if got != prev {
					t.Errorf("%s built on %q, want %q", d, got, prev)
				}
				return model.LedgerDay{Day: d, PrevHead: hex("0"), HumanCount: 0, HumanRoot: hex("1"), CrawlerCount: 1,
						CrawlerRoot: hex("2"), Head: hex("3"), Note: "note of " + d},
					map[string]store.LedgerTree{model.LedgerCrawler: {Records: []string{`{"id":1}`}, Hashes: []string{hex("4")}}}, nil
			}
		}
		if ok, err := s.SealLedgerDay(ctx, "2026-11-27", day("2026-11-27", "")); err != nil || !ok {
			t.Fatalf("first seal: %v %v", ok, err)
		}
		if ok, err := s.SealLedgerDay(ctx, "2026-11-27", func(*model.LedgerDay) (model.LedgerDay, map[string]store.LedgerTree, error) {
			t.Fatal("a sealed day was built again")
			return model.LedgerDay{}, nil, nil
		}); err != nil || ok {
			t.Fatalf("second seal: %v %v, want not sealed and no error", ok, err)
		}
		if ok, err := s.SealLedgerDay(ctx, "2026-11-28", day("2026-11-28", "2026-11-27")); err != nil || !ok {
			t.Fatalf("next day: %v %v", ok, err)
		}
		days, err := s.LedgerDays(ctx, "2026-11-28", "")
		if err != nil || len(days) != 1 || days[0].Day != "2026-11-28" || days[0].Note != "note of 2026-11-28" || days[0].CrawlerCount != 1 {
			t.Fatalf("days from the 28th: %+v %v", days, err)
		}
		sl, err := s.SealedLedger(ctx, "2026-11-28", model.LedgerCrawler)
		if err != nil || len(sl.Records) != 1 || sl.Records[0].Data != `{"id":1}` || len(sl.Hashes) != 1 || sl.Hashes[0].Data != hex("4") {
			t.Fatalf("sealed ledger %+v %v", sl, err)
		}
		// A busy day: more rows than one statement stores, all kept in order.
		var records, hashes []string
		for i := range 1203 {
			records = append(records, fmt.Sprintf(`{"id":%d}`, i+1))
			hashes = append(hashes, fmt.Sprintf("%064x", i))
		}
		if ok, err := s.SealLedgerDay(ctx, "2026-11-29", func(*model.LedgerDay) (model.LedgerDay, map[string]store.LedgerTree, error) {
			return model.LedgerDay{Day: "2026-11-29", PrevHead: hex("3"), HumanRoot: hex("1"), CrawlerCount: 1203,
					CrawlerRoot: hex("2"), Head: hex("5"), Note: "note of 2026-11-29"},
				map[string]store.LedgerTree{model.LedgerCrawler: {Records: records, Hashes: hashes}}, nil
		}); err != nil || !ok {
			t.Fatalf("a busy day: %v %v", ok, err)
		}
		sl, err = s.SealedLedger(ctx, "2026-11-29", model.LedgerCrawler)
		if err != nil || len(sl.Records) != 1203 || len(sl.Hashes) != 1203 {
			t.Fatalf("busy day: %d records, %d hashes (%v), want 1203 each", len(sl.Records), len(sl.Hashes), err)
		}
		for i := range 1203 {
			if sl.Records[i].Seq != int64(i) || sl.Records[i].Data != records[i] || sl.Hashes[i].Seq != int64(i) || sl.Hashes[i].Data != hashes[i] {
				t.Fatalf("busy day row %d: %+v %+v", i, sl.Records[i], sl.Hashes[i])
			}
		}
		last, ok, err := s.LastLedgerDay(ctx)
		if err != nil || !ok || last.Day != "2026-11-29" {
			t.Fatalf("last day %+v %v %v", last, ok, err)
		}
	})
}
