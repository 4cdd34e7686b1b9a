package crawl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/fetch"
	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// tally is one host's requests and body bytes as one side counted them.
type tally struct {
	requests int
	bytes    int64
	paths    map[string]int   // "METHOD path?query" → requests, to show a difference
	pbytes   map[string]int64 // "METHOD path?query" → bytes
}

func (t *tally) add(key string, bytes int64) {
	if t.paths == nil {
		t.paths = map[string]int{}
		t.pbytes = map[string]int64{}
	}
	t.pbytes[key] += bytes
	t.requests++
	t.bytes += bytes
	t.paths[key]++
}

// siteTallies counts the simulated web's own access log per host.
func siteTallies(w *sim.World) map[string]*tally {
	out := map[string]*tally{}
	for _, a := range w.AllAccess() {
		if out[a.Host] == nil {
			out[a.Host] = &tally{}
		}
		out[a.Host].add(a.Method+" "+a.Path, a.Bytes)
	}
	return out
}

// crawlLogTallies counts crawl_log per host: every row that stands for a
// request that went out (it has a duration), with its bytes.
func crawlLogTallies(t *testing.T, st *store.Store) map[string]*tally {
	t.Helper()
	out := map[string]*tally{}
	var before *time.Time
	var beforeID int64
	for {
		rows, err := st.ListCrawlLogs(context.Background(), store.CrawlLogFilter{BeforeAt: before, BeforeID: beforeID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			return out
		}
		for _, r := range rows {
			if r.DurationMS == nil {
				if r.Bytes != 0 {
					t.Errorf("crawl_log row %d (%s %s) went nowhere but counts %d bytes", r.ID, r.Method, r.ArticleURL, r.Bytes)
				}
				continue
			}
			if out[r.Host] == nil {
				out[r.Host] = &tally{}
			}
			key := r.ArticleURL
			if u, err := url.Parse(r.ArticleURL); err == nil {
				key = u.RequestURI()
			}
			out[r.Host].add(r.Method+" "+key, r.Bytes)
		}
		last := rows[len(rows)-1]
		at := last.OccurredAt
		before, beforeID = &at, last.ID
	}
}

// compareLedgers fails unless both sides count the same requests and
// bytes on every host, printing a per-host table (and, for a host whose
// requests differ, the paths that differ).
func compareLedgers(t *testing.T, siteSide, crawlSide map[string]*tally) {
	t.Helper()
	hosts := map[string]bool{}
	for h := range siteSide {
		hosts[h] = true
	}
	for h := range crawlSide {
		hosts[h] = true
	}
	var names []string
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	var b strings.Builder
	bad := false
	fmt.Fprintf(&b, "%-28s %10s %10s %12s %12s\n", "host", "site reqs", "log reqs", "site bytes", "log bytes")
	for _, h := range names {
		s, c := siteSide[h], crawlSide[h]
		if s == nil {
			s = &tally{}
		}
		if c == nil {
			c = &tally{}
		}
		mark := ""
		if s.requests != c.requests || s.bytes != c.bytes {
			mark, bad = "  ✗", true
		}
		fmt.Fprintf(&b, "%-28s %10d %10d %12d %12d%s\n", h, s.requests, c.requests, s.bytes, c.bytes, mark)
		if s.requests != c.requests || s.bytes != c.bytes {
			keys := map[string]bool{}
			for k := range s.paths {
				keys[k] = true
			}
			for k := range c.paths {
				keys[k] = true
			}
			var diff []string
			for k := range keys {
				if s.paths[k] != c.paths[k] || s.pbytes[k] != c.pbytes[k] {
					diff = append(diff, fmt.Sprintf("    %s: site %d requests %d bytes, log %d requests %d bytes", k, s.paths[k], s.pbytes[k], c.paths[k], c.pbytes[k]))
				}
			}
			sort.Strings(diff)
			if len(diff) > 12 {
				diff = append(diff[:12], fmt.Sprintf("    … %d more", len(diff)-12))
			}
			b.WriteString(strings.Join(diff, "\n") + "\n")
		}
	}
	if bad {
		t.Errorf("crawl_log and the sites' own access logs disagree:\n%s", b.String())
	} else {
		t.Logf("per host, crawl_log equals the sites' access logs:\n%s", b.String())
	}
}

// TestCrawlLogMatchesSiteAccessLog: after crawls of the whole simulated
// web, both tiers, a first full crawl and an incremental second one with
// conditional requests and 304s, crawl_log counts per host exactly the
// requests and body bytes the sites themselves logged.
func TestCrawlLogMatchesSiteAccessLog(t *testing.T) {
	browser := chromium(t)
	st := storetest.SQLite(t)
	w := newWorld(t, st, browser)
	w.crawl(t, nil, browser)
	compareLedgers(t, siteTallies(w.sim), crawlLogTallies(t, st))

	rep := w.sim.Advance(72 * time.Hour)
	if len(rep.Published) == 0 || len(rep.Edited) == 0 {
		t.Fatalf("advance published %d and edited %d articles; the test needs both", len(rep.Published), len(rep.Edited))
	}
	// The second crawl meets the sites' passing faults: throttling with
	// and without Retry-After, a redirect, a redirect loop, a slow body,
	// a lying charset. Each answer is a request on both sides.
	for _, f := range []struct {
		host  string
		fault sim.Fault
	}{
		{"www.lianzhou.gov.test", sim.Fault{Kind: sim.Fault429, RetryAfter: "1", Count: 1, PathPrefix: "/tzgg/"}},
		{"www.yingde.gov.test", sim.Fault{Kind: sim.Fault503, Count: 1, PathPrefix: "/ydjyj/"}},
		{"www.gd.gov.test", sim.Fault{Kind: sim.FaultRedirect, Location: "/zwgk/zcjd/", Count: 1, PathPrefix: "/zwgk/wjk/"}},
		{"www.gov.test", sim.Fault{Kind: sim.FaultRedirectLoop, Count: 4, PathPrefix: "/zhengce/jiedu/"}},
		{"www.qingcheng.gov.test", sim.Fault{Kind: sim.FaultSlow, BytesPerSec: 20000, Count: 3}},
		{newsHost, sim.Fault{Kind: sim.FaultCharsetLie, Count: 2}},
	} {
		if err := w.sim.SetFault(f.host, f.fault); err != nil {
			t.Fatal(err)
		}
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	// A target may fail on a fault; the ledgers must agree all the same.
	for _, r := range w.w.Crawler(later).Run(context.Background(), w.w.Targets(t, browser)) {
		if r.Err != nil {
			t.Logf("target %s: %v", r.TargetCode, r.Err)
		}
	}
	// A HEAD probe and a request robots.txt refuses (which never leaves).
	ctx := context.Background()
	if _, err := w.client.Do(ctx, fetch.Request{URL: "http://www.gov.test/", Method: "HEAD", Purpose: model.PurposeProbe}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Do(ctx, fetch.Request{URL: "http://www.gd.gov.test/zwgk/rsrm/", Purpose: model.PurposeProbe}); !fetch.IsRobotsDisallowed(err) {
		t.Fatalf("a disallowed page: %v, want a robots.txt refusal", err)
	}
	site, logged := siteTallies(w.sim), crawlLogTallies(t, st)
	compareLedgers(t, site, logged)

	// The crawls did meet what the ledgers must agree on.
	seen := map[int]bool{}
	heads := 0
	for _, a := range w.sim.AllAccess() {
		seen[a.Status] = true
		if a.Method == "HEAD" {
			heads++
		}
	}
	for _, status := range []int{200, 206, 302, 304, 412, 429, 503} {
		if !seen[status] {
			t.Errorf("no request answered %d: the test does not cover it", status)
		}
	}
	if heads == 0 {
		t.Error("no HEAD request reached a site")
	}
	t.Logf("statuses seen: %v, HEAD requests: %d", seen, heads)

	// The third entry: the crawler ledger, sealed (as if the day were
	// over), holds per host the same requests and bytes.
	sealed, err := (&ledger.Sealer{Store: st, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}).SealDue(ctx)
	if err != nil || len(sealed) == 0 {
		t.Fatalf("sealed %v, %v", sealed, err)
	}
	compareLedgers(t, site, sealedTallies(t, st, sealed))
}

// sealedTallies counts the sealed crawler ledgers of days per host: every
// record of a request that reached its site, with its bytes.
func sealedTallies(t *testing.T, st *store.Store, days []string) map[string]*tally {
	t.Helper()
	out := map[string]*tally{}
	for _, day := range days {
		l, err := st.SealedLedger(context.Background(), day, model.LedgerCrawler)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Records {
			var rec struct {
				Host  string `json:"host"`
				Sent  bool   `json:"sent"`
				Bytes int64  `json:"bytes"`
			}
			if err := json.Unmarshal([]byte(r.Data), &rec); err != nil {
				t.Fatalf("sealed record %s: %v", r.Data, err)
			}
			if !rec.Sent {
				continue
			}
			if out[rec.Host] == nil {
				out[rec.Host] = &tally{}
			}
			out[rec.Host].add("sealed", rec.Bytes)
		}
	}
	return out
}
