package cli

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestAuditSealSurvivesKills: `zhizhi audit seal`, the real binary, sealing
// a backlog of 180 days of both ledgers, is killed with SIGKILL right after
// it has said a day or three are sealed, twelve times, and then let finish.
// Its standard output is a Unix socket with the smallest send buffer, so
// the binary can never get more than a few lines ahead of what the test has
// read: however loaded the machine, every kill lands in a run under way. The chain must then hold every day once, in order, each
// day's crawler ledger exactly its crawl_log rows and its human ledger
// exactly the human readers' tallies; every day a run said it sealed
// must be in it, and none may be said twice (a run killed between storing
// a day and saying so leaves it unsaid); `audit verify` must find it all
// good.
func TestAuditSealSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary a dozen times; skipped with -short")
	}
	waitBound(t)
	eachDialect(t, func(t *testing.T, dir, dsn string) {
		// Each killed run seals at most the 1–3 days waited for, the line
		// or two read but not yet looked at, the few lines its stdout
		// buffer holds and the day it is on (about 13); 180 days outlast
		// twelve of them.
		const days, perDay = 180, 30
		ctx := context.Background()
		st, err := store.Open(ctx, dsn, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		shanghai := time.FixedZone("UTC+8", 8*3600)
		today := time.Now().In(shanghai)
		first := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, shanghai).AddDate(0, 0, -(days + 2))
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))

		// The ledgers as they stand: requests all day long, and each day
		// three readers scored human and one bot on the portal.
		var want []string // days in order
		wantCrawler := map[string][]string{}
		wantHuman := map[string][]string{}
		for d := range days {
			start := first.AddDate(0, 0, d)
			day := start.Format(time.DateOnly)
			want = append(want, day)
			for i := range perDay {
				status, dur := 200, 120
				l := &model.CrawlLog{Host: fmt.Sprintf("www.county%d.gov.test", i%7), Purpose: model.PurposeDetail,
					Method: "GET", HTTPStatus: &status, Bytes: int64(1000 + i), Success: true, DurationMS: &dur,
					OccurredAt: start.Add(time.Duration(i) * 24 * time.Hour / perDay)}
				if i%10 == 9 { // held back by zhizhi itself: logged, never sent
					l.HTTPStatus, l.DurationMS, l.Success, l.Bytes = nil, nil, false, 0
				}
				if err := st.InsertCrawlLog(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			card := int64(d%5 + 1)
			ups := []store.VisitorUpdate{}
			for v, band := range []string{store.BandHuman, store.BandHuman, store.BandHuman, store.BandBot} {
				clicks := int64(0)
				if v == 0 {
					clicks = 1
				}
				ups = append(ups, store.VisitorUpdate{Day: day, Key: fmt.Sprintf("%064x", v+1), UAClass: "browser",
					Apply: func(vd *store.VisitorDay) []store.CardCount {
						vd.Requests, vd.Pages, vd.Clicks, vd.Navigations = 3, 2, clicks, 2+clicks
						vd.Band = band
						vd.Score = map[bool]int{true: 10, false: 90}[band == store.BandHuman]
						return []store.CardCount{{CardID: card, Views: 2, Clicks: clicks}, {CardID: card + 10, Views: 1}}
					}})
			}
			if _, err := st.ApplyVisits(ctx, ups); err != nil {
				t.Fatal(err)
			}
			wantHuman[day] = []string{string(ledger.HumanRecord(model.HumanTally{CardID: card, Views: 6, Clicks: 1})),
				string(ledger.HumanRecord(model.HumanTally{CardID: card + 10, Views: 3}))}
			logs, err := st.CrawlLogsBetween(ctx, start, start.AddDate(0, 0, 1))
			if err != nil || len(logs) != perDay {
				t.Fatalf("%s: %d crawl_log rows %v, want %d", day, len(logs), err, perDay)
			}
			for _, l := range logs {
				wantCrawler[day] = append(wantCrawler[day], string(ledger.CrawlerRecord(l)))
			}
		}

		env := []string{"ZHIZHI_DATA_DIR=" + dir, "ZHIZHI_DATABASE_URL=" + dsn}
		bin := zhizhiBinary(t)
		told := map[string]int{} // day → how many runs said they sealed it
		run := func(killAfterLines int, kill bool) (code int, killedMidway bool) {
			cmd := exec.Command(bin, "audit", "seal")
			cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") }), env...)
			stdout, childOut := throttledPipe(t)
			cmd.Stdout = childOut
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			childOut.Close()
			defer stdout.Close()
			// The kill is sent from the reading loop itself: while it waits
			// before the kill nothing is read, so the binary can go on at
			// most as far as its stdout buffer lets it.
			pause := time.Duration(rng.IntN(40)) * time.Millisecond
			readDone := make(chan struct{})
			go func() {
				defer close(readDone)
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 0, 64), 4096) // read a line or two at a time
				seen := 0
				for sc.Scan() {
					day, ok := strings.CutPrefix(sc.Text(), "audit seal: sealed ")
					if !ok {
						continue
					}
					told[day]++
					if seen++; kill && seen == killAfterLines {
						time.Sleep(pause)
						killedMidway = cmd.Process.Signal(os.Kill) == nil
					}
				}
			}()
			<-readDone
			err = cmd.Wait()
			if killedMidway {
				// The kill may have come after the end: it counts as midway
				// only when it was the kill that ended the run.
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
					killedMidway = false
				}
			}
			if !killedMidway && exitStatus(err) != 0 {
				t.Fatalf("audit seal exited %d:\n%s", exitStatus(err), stderr.String())
			}
			return exitStatus(err), killedMidway
		}

		midway := 0
		for range 12 {
			// After one to three days told, a moment later: in the middle.
			if _, killed := run(1+rng.IntN(3), true); killed {
				midway++
			}
			sealed, err := st.LedgerDays(ctx, "", "")
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range sealed[:min(len(sealed), days)] {
				if d.Day != want[i] {
					t.Fatalf("after a kill the sealed days are %v…, want them in order from %s", sealed, want[0])
				}
			}
		}
		if code, _ := run(0, false); code != 0 {
			t.Fatalf("the last run exited %d", code)
		}
		if midway != 12 {
			t.Fatalf("only %d of 12 kills ended a run under way; the test proves nothing", midway)
		}

		sealed, err := st.LedgerDays(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range sealed {
			got = append(got, d.Day)
		}
		// Days after the seeded ones (with nothing logged) are sealed too,
		// up to yesterday: the chain has no gaps.
		if len(got) < days || !slices.Equal(got[:days], want) {
			t.Fatalf("sealed days %v, want %v first", got, want)
		}
		// A run killed between storing a day and saying so leaves it
		// unsaid; a day said twice was said before it was stored.
		for day, n := range told {
			if n > 1 {
				t.Errorf("%s was said sealed %d times, want once at most", day, n)
			}
			if !slices.Contains(got, day) {
				t.Errorf("%s was said sealed, and is not in the chain", day)
			}
		}
		for _, day := range want {
			for _, led := range []struct {
				name string
				want []string
			}{{"crawler", wantCrawler[day]}, {"human", wantHuman[day]}} {
				l, err := st.SealedLedger(ctx, day, led.name)
				if err != nil {
					t.Fatal(err)
				}
				var recs []string
				for i, r := range l.Records {
					if r.Seq != int64(i) {
						t.Errorf("%s %s: record %d stored at %d", day, led.name, i, r.Seq)
					}
					recs = append(recs, r.Data)
				}
				if !slices.Equal(recs, led.want) {
					t.Errorf("%s %s ledger: %d records, want %d as logged:\n%s", day, led.name, len(recs), len(led.want),
						strings.Join(recs[:min(len(recs), 3)], "\n"))
				}
			}
		}
		if r := runZhizhi(t, env, "audit", "verify"); r.code != 0 || !strings.Contains(r.stdout, "all good") {
			t.Errorf("audit verify after the kills: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		t.Logf("%d of 12 kills ended a run under way", midway)
	})
}

// throttledPipe is a connected pair of Unix stream sockets whose writing end
// has the smallest send buffer the kernel allows (a few short lines): a
// child writing its progress there blocks until the reader has read it, so
// it cannot run ahead of a test that reacts to what it says.
func throttledPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetsockoptInt(fds[1], syscall.SOL_SOCKET, syscall.SO_SNDBUF, 1); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "stdout-reader"), os.NewFile(uintptr(fds[1]), "stdout-writer")
}
