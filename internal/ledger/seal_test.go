package ledger_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// cst is UTC+8, the users' day, written out rather than taken from the
// package under test.
var cst = time.FixedZone("UTC+8", 8*3600)

func at(day string, hh, mm, ss, ns int) time.Time {
	t, err := time.ParseInLocation("2006-01-02", day, cst)
	if err != nil {
		panic(err)
	}
	return t.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second + time.Duration(ns))
}

// world logs requests on 2026-11-27 and 2026-11-29 (none on the 28th) and
// has human tallies on the 27th and 28th.
type world struct {
	human map[string][]model.HumanTally
}

func newWorld(t *testing.T, s *store.Store) world {
	t.Helper()
	ctx := context.Background()
	status := func(v int) *int { return &v }
	logs := []model.CrawlLog{
		// The first instant of the 27th: the first day of the chain.
		{Host: "www.gdqy.gov.test", Purpose: "robots", Method: "GET", HTTPStatus: status(200), Bytes: 120, Success: true, OccurredAt: at("2026-11-27", 0, 0, 0, 0)},
		{Host: "www.gdqy.gov.test", Purpose: "list", Method: "GET", HTTPStatus: status(200), Bytes: 5321, Success: true, OccurredAt: at("2026-11-27", 9, 30, 0, 250000000)},
		{Host: "www.gd.gov.test", Purpose: "article", Method: "GET", HTTPStatus: status(304), BytesSaved: 40000, Success: true, DurationMS: status(12), OccurredAt: at("2026-11-27", 23, 59, 59, 999999000)},
		// Logged on the 29th.
		{Host: "www.gd.gov.test", Purpose: "article", Method: "GET", Success: false, OccurredAt: at("2026-11-29", 0, 0, 0, 0)},
		{Host: "www.gdqy.gov.test", Purpose: "list", Method: "HEAD", HTTPStatus: status(503), Bytes: 0, Success: false, OccurredAt: at("2026-11-29", 12, 0, 0, 0)},
		{Host: "www.gdqy.gov.test", Purpose: "article", Method: "GET", HTTPStatus: status(200), Bytes: 9000, Success: true, OccurredAt: at("2026-11-29", 13, 0, 0, 0)},
		{Host: "www.gdqy.gov.test", Purpose: "attachment", Method: "GET", HTTPStatus: status(200), Bytes: 77, Success: true, OccurredAt: at("2026-11-29", 23, 59, 59, 999999000)},
	}
	for i := range logs {
		if err := s.InsertCrawlLog(ctx, &logs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return world{human: map[string][]model.HumanTally{
		"2026-11-27": {{CardID: 9, Views: 4, Clicks: 1}, {CardID: 3, Views: 10, Clicks: 2}},
		"2026-11-28": {{CardID: 3, Views: 1, Clicks: 0}},
	}}
}

func (w world) source(ctx context.Context, day string) ([]model.HumanTally, error) {
	return w.human[day], nil
}

func sealer(s *store.Store, w world, now time.Time) *ledger.Sealer {
	return &ledger.Sealer{Store: s, Human: w.source, Now: func() time.Time { return now }}
}

// TestSealDue: a day is sealed once it is over plus ten minutes, from the
// day of the first request, with empty days sealed too; sealing again is a
// no-op; the records are the canonical lines of the day's requests and
// tallies, and the sealed chain verifies.
func TestSealDue(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		w := newWorld(t, s)

		// 00:09:59 on the 30th: the 29th is over, but within its ten minutes.
		got, err := sealer(s, w, at("2026-11-30", 0, 9, 59, 0)).SealDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"2026-11-27", "2026-11-28"}; !slices.Equal(got, want) {
			t.Fatalf("sealed %v at 00:09:59, want %v", got, want)
		}
		got, err = sealer(s, w, at("2026-11-30", 0, 10, 0, 0)).SealDue(ctx)
		if err != nil || !slices.Equal(got, []string{"2026-11-29"}) {
			t.Fatalf("sealed %v (%v) at 00:10, want the 29th", got, err)
		}
		got, err = sealer(s, w, at("2026-12-01", 0, 9, 0, 0)).SealDue(ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("sealed %v (%v) again, want nothing: the 30th is not over plus ten minutes", got, err)
		}

		days, err := s.LedgerDays(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string][2]int64{}
		for _, d := range days {
			counts[d.Day] = [2]int64{d.CrawlerCount, d.HumanCount}
		}
		want := map[string][2]int64{"2026-11-27": {3, 2}, "2026-11-28": {0, 1}, "2026-11-29": {4, 0}}
		if len(counts) != len(want) {
			t.Fatalf("sealed days %v, want %v", counts, want)
		}
		for d, c := range want {
			if counts[d] != c {
				t.Errorf("%s: crawler and human records %v, want %v", d, counts[d], c)
			}
		}
		// The empty crawler ledger of the 28th has RFC 6962's empty root.
		if days[1].CrawlerRoot != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Errorf("empty crawler root %s", days[1].CrawlerRoot)
		}
		if days[0].PrevHead != strings.Repeat("0", 64) || days[1].PrevHead != days[0].Head || days[2].PrevHead != days[1].Head {
			t.Errorf("chain links: %+v", days)
		}

		crawler, err := s.SealedLedger(ctx, "2026-11-27", model.LedgerCrawler)
		if err != nil {
			t.Fatal(err)
		}
		if len(crawler.Records) != 3 {
			t.Fatalf("crawler records of the 27th: %+v", crawler.Records)
		}
		wantLine := `{"id":3,"at":"2026-11-27T15:59:59.999999Z","host":"www.gd.gov.test","purpose":"article","method":"GET","sent":true,"status":304,"bytes":0,"bytes_saved":40000,"ok":true}`
		if crawler.Records[2].Data != wantLine {
			t.Errorf("crawler record\n%s\nwant\n%s", crawler.Records[2].Data, wantLine)
		}
		c29, err := s.SealedLedger(ctx, "2026-11-29", model.LedgerCrawler)
		if err != nil {
			t.Fatal(err)
		}
		if wantFirst := `{"id":4,"at":"2026-11-28T16:00:00.000000Z","host":"www.gd.gov.test","purpose":"article","method":"GET","sent":false,"status":null,"bytes":0,"bytes_saved":0,"ok":false}`; len(c29.Records) == 0 || c29.Records[0].Data != wantFirst {
			t.Errorf("first crawler record of the 29th %+v, want %s", c29.Records, wantFirst)
		}
		human, err := s.SealedLedger(ctx, "2026-11-27", model.LedgerHuman)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range human.Records {
			lines = append(lines, r.Data)
		}
		if want := []string{`{"card":3,"views":10,"clicks":2}`, `{"card":9,"views":4,"clicks":1}`}; !slices.Equal(lines, want) {
			t.Errorf("human records %v, want %v (by card, counts only)", lines, want)
		}

		sum, err := ledger.VerifyStore(ctx, s, "", w.source)
		if err != nil {
			t.Fatalf("verify the untouched chain: %v", err)
		}
		if sum.Days != 3 || sum.CrawlerRecords != 7 || sum.HumanRecords != 3 || sum.LastHead != days[2].Head {
			t.Errorf("summary %+v", sum)
		}
	})
}

// TestSealNothingBeforeFirstRequest: with no request logged there is no
// first day, and nothing is sealed.
func TestSealNothingBeforeFirstRequest(t *testing.T) {
	s := storetest.SQLite(t)
	got, err := (&ledger.Sealer{Store: s, Now: func() time.Time { return at("2026-11-30", 12, 0, 0, 0) }}).SealDue(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("sealed %v (%v) with no request logged", got, err)
	}
}

// TestSealConcurrentSealers: two processes sealing the same database at
// once seal each day once between them, without an error, and both sign
// with the one key the database keeps.
func TestSealConcurrentSealers(t *testing.T) {
	dialects := []struct {
		name string
		open func(t *testing.T) (string, string)
	}{
		{"sqlite", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			return "sqlite://" + filepath.Join(dir, "zhizhi.db"), filepath.Join(dir, "data")
		}},
		{"postgres", func(t *testing.T) (string, string) { return storetest.PostgresURL(t), t.TempDir() }},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, dataDir := d.open(t)
			var stores [2]*store.Store
			for i := range stores {
				s, err := store.Open(ctx, dsn, dataDir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			w := newWorld(t, stores[0])
			now := at("2026-12-05", 1, 0, 0, 0)
			var wg sync.WaitGroup
			var sealed [2][]string
			var errs [2]error
			var keys [2]string
			start := make(chan struct{})
			for i := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					keys[i], errs[i] = ledger.VerifierKey(ctx, stores[i])
					if errs[i] != nil {
						return
					}
					sealed[i], errs[i] = sealer(stores[i], w, now).SealDue(ctx)
				}()
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatalf("a sealer failed: %v", err)
			}
			if keys[0] != keys[1] {
				t.Fatalf("two keys: %s and %s", keys[0], keys[1])
			}
			all := append(slices.Clone(sealed[0]), sealed[1]...)
			slices.Sort(all)
			want := []string{"2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"}
			if !slices.Equal(all, want) {
				t.Fatalf("sealed %v and %v between them, want each of %v once", sealed[0], sealed[1], want)
			}
			days, err := stores[0].LedgerDays(ctx, "", "")
			if err != nil || len(days) != len(want) {
				t.Fatalf("%d sealed days (%v), want %d", len(days), err, len(want))
			}
			if _, err := ledger.VerifyStore(ctx, stores[1], keys[0], nil); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
}

// TestExportVerifiesWithoutTheDatabase: an export checks out with its files
// and the public key alone, the database gone; with another key it does not.
func TestExportVerifiesWithoutTheDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "zhizhi.db"), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, s)
	if _, err := sealer(s, w, at("2026-11-30", 1, 0, 0, 0)).SealDue(ctx); err != nil {
		t.Fatal(err)
	}
	vkey, err := ledger.VerifierKey(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	written, err := ledger.Export(ctx, s, "2026-11-27", "2026-11-29", out)
	if err != nil || len(written) != 3 {
		t.Fatalf("export: %v %v", written, err)
	}
	s.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	sum, used, err := ledger.VerifyDir(out, vkey)
	if err != nil {
		t.Fatalf("verify the export: %v", err)
	}
	if used != vkey || sum.Days != 3 || sum.CrawlerRecords != 7 || sum.HumanRecords != 3 || sum.ContinuesFrom != "" {
		t.Errorf("summary %+v with key %s", sum, used)
	}
	// One day's directory alone: it continues a head it does not hold.
	sum, _, err = ledger.VerifyDir(filepath.Join(out, "2026-11-28"), vkey)
	if err != nil || sum.Days != 1 || sum.ContinuesFrom == "" {
		t.Errorf("one day alone: %+v %v", sum, err)
	}
	other := otherKey(t)
	_, _, err = ledger.VerifyDir(out, other)
	var p *ledger.Problem
	if !errors.As(err, &p) || p.Day != "2026-11-27" || !strings.Contains(p.Msg, "no signature by the given key") {
		t.Errorf("verified with another key: %v", err)
	}
}

// TestExportRefusesWhatIsNotSealedOrExists: no partial export.
func TestExportRefusesWhatIsNotSealedOrExists(t *testing.T) {
	ctx := context.Background()
	s := storetest.SQLite(t)
	w := newWorld(t, s)
	if _, err := sealer(s, w, at("2026-11-29", 1, 0, 0, 0)).SealDue(ctx); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := ledger.Export(ctx, s, "2026-11-27", "2026-11-29", out); err == nil || !strings.Contains(err.Error(), "2026-11-29 is not sealed") {
		t.Fatalf("export of an unsealed day: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a refused export wrote %v", entries)
	}
	if err := os.Mkdir(filepath.Join(out, "2026-11-28"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Export(ctx, s, "2026-11-27", "2026-11-28", out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("export over an existing day: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "2026-11-27")); err == nil {
		t.Fatal("a refused export wrote the 27th")
	}
}
