package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// TestServeCrawlJobSurvivesKills: a crawl job of the acquisition API
// whose serve process is killed with SIGKILL several times, at random
// moments and at least twice while a page's request is in flight (the
// site answers slowly), is taken up each time by another serve process —
// the next one started on SQLite, the other one already running on
// PostgreSQL — and ends with exactly its limit of pages. Judged from the
// simulated site's own access log: no URL asked twice, nothing asked of
// any other host, every request polite, and the only requests beyond the
// limit are the pages whose answers were lost in a kill, which the job
// lists as INTERRUPTED and does not give as results.
func TestServeCrawlJobSurvivesKills(t *testing.T) {
	waitBound(t)
	for _, dialect := range []string{store.DialectSQLite, store.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			waitBound(t)
			crawlJobKills(t, dialect)
		})
	}
}

func crawlJobKills(t *testing.T, dialect string) {
	ctx := context.Background()
	sw := newServeWorld(t, dialect)
	keepTargets(t, sw.st) // no target crawls: the job has the host to itself
	sw.zhizhi(t, "s3cret-pass-1\n", "user", "add", "alice", "--role", "operator", "--password-stdin")
	out := sw.zhizhi(t, "", "apikey", "create", "--user", "alice", "--name", "agent", "--scopes", "acquire")
	key := regexp.MustCompile(`zk_[A-Za-z0-9_-]+`).FindString(out)
	if key == "" {
		t.Fatalf("apikey create printed no key:\n%s", out)
	}
	const host, limit = "www.lianzhou.gov.test", 8
	// Each answer trickles out over a second or more, so that a kill can
	// land while a request is in flight.
	if err := sw.world.Sim.SetFault(host, sim.Fault{Kind: sim.FaultSlow, BytesPerSec: 1500}); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("random seed %d", seed)

	pages := func() []string {
		var out []string
		for _, a := range sw.world.Sim.AccessLog(host) {
			if a.Path != "/robots.txt" && a.Path != "/sitemap.xml" {
				out = append(out, a.Path)
			}
		}
		return out
	}
	call := func(base, method, path string, body any) map[string]any {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var v map[string]any
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return v
	}

	// The serve processes alive: one at a time on SQLite (each restart
	// takes the job back at its start), two on PostgreSQL (the survivor
	// takes the job back from the dead one's stopped heartbeat).
	var live []*serveProc
	n := 0
	start := func() {
		n++
		live = append(live, sw.startServe(t, filepath.Join(sw.dataDir, "serve-"+string(rune('a'+n-1)))))
	}
	start()
	if dialect == store.DialectPostgres {
		start()
	}
	defer func() {
		for _, p := range live {
			p.stop(t)
		}
	}()
	q, err := queue.Open(ctx, queue.Options{Store: sw.st})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	// worker is the live process running the job now (nil while none is).
	worker := func() *serveProc {
		if len(live) == 1 {
			return live[0]
		}
		running, err := q.JobsOfKinds(ctx, []string{queue.KindAPICrawl}, rivertype.JobStateRunning)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sw.st.ServeProcesses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range running {
			if j.Kind != queue.KindAPICrawl || len(j.AttemptedBy) == 0 {
				continue
			}
			for _, r := range rows {
				for _, p := range live {
					if r.ID == j.AttemptedBy[len(j.AttemptedBy)-1] && r.PID == p.cmd.Process.Pid {
						return p
					}
				}
			}
		}
		return nil
	}

	// The biggest portal of the simulated web whose pages link to each
	// other (a page lost in a kill takes the links on it along: the job
	// must still find its limit); attachments (not pages the job reads)
	// left out.
	started := call("http://"+live[0].addr, http.MethodPost, "/v2/crawl", map[string]any{"url": "http://" + host + "/",
		"limit": limit, "crawlEntireDomain": true, "sitemap": "skip", "excludePaths": []string{`\.(pdf|docx?|xlsx?|zip)$`}})
	id, _ := started["id"].(string)

	// Kills: mid-request ones wait for a request in flight and kill at a
	// random moment of it; the others at a random offset after a page.
	plan := []bool{true, false, true} // in flight?
	if dialect == store.DialectPostgres {
		plan = []bool{true, false}
	}
	deadline := time.Now().Add(8 * time.Minute) // a safety net, not a measure
	midRequest := 0
	for i, inFlight := range plan {
		from := len(pages())
		var victim *serveProc
		for {
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: the job made no progress (%d pages asked)", i+1, len(pages()))
			}
			if victim = worker(); victim != nil && len(pages()) > from {
				if !inFlight {
					break
				}
				if sw.world.Sim.InFlight(host) > 0 {
					time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
					if sw.world.Sim.InFlight(host) > 0 {
						break
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !inFlight {
			time.Sleep(time.Duration(rng.IntN(2500)) * time.Millisecond)
		}
		busy := sw.world.Sim.InFlight(host) > 0
		victim.kill()
		for j, p := range live {
			if p == victim {
				live = append(live[:j], live[j+1:]...)
				break
			}
		}
		if busy {
			midRequest++
		}
		asked := len(pages())
		t.Logf("kill %d: %d pages asked, a request in flight: %v", i+1, asked, busy)
		if asked >= limit {
			t.Fatalf("the job was done by kill %d (%d pages); the test proves nothing", i+1, asked)
		}
		start()
	}
	if want := strings.Count(fmt.Sprint(plan), "true"); midRequest < want {
		t.Errorf("only %d of the kills landed while a request was in flight; want %d", midRequest, want)
	}

	var status map[string]any
	for {
		status = call("http://"+live[0].addr, http.MethodGet, "/v1/crawl/"+id, nil)
		if status["status"] != "scraping" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job is still scraping: %v\n%s", status, live[0].output())
		}
		time.Sleep(time.Second)
	}
	var data []any
	for page := status; ; {
		d, _ := page["data"].([]any)
		data = append(data, d...)
		next, _ := page["next"].(string)
		if next == "" {
			break
		}
		page = call(next, http.MethodGet, "", nil)
	}
	errs := call("http://"+live[0].addr, http.MethodGet, "/v1/crawl/"+id+"/errors", nil)
	lost := map[string]bool{}
	list, _ := errs["errors"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		u, _ := m["url"].(string)
		if m["code"] != "INTERRUPTED" {
			t.Errorf("an error other than a lost answer: %v", m)
			continue
		}
		lost[strings.TrimPrefix(u, "http://"+host)] = true
	}

	// From the site's own log.
	log := pages()
	seen := map[string]bool{}
	for _, path := range log {
		if seen[path] {
			t.Errorf("%s was asked for twice", path)
		}
		seen[path] = true
	}
	results := map[string]bool{}
	for _, d := range data {
		m, _ := d.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		u, _ := md["sourceURL"].(string)
		path := strings.TrimPrefix(u, "http://"+host)
		switch {
		case results[path]:
			t.Errorf("%s is given twice", u)
		case !seen[path]:
			t.Errorf("%s is given but the site never saw it asked", u)
		case lost[path]:
			t.Errorf("%s is given and listed as lost", u)
		}
		results[path] = true
	}
	for path := range lost {
		if !seen[path] {
			t.Errorf("%s is listed as lost in a kill but was never asked", path)
		}
	}
	if status["status"] != "completed" || status["completed"] != float64(limit) || len(data) != limit ||
		len(results) != limit || len(log) != limit+len(lost) {
		t.Errorf("after %d kills: status %v, completed %v, %d pages in data, %d asked of the site, %d lost: %v\nerrors: %v\n%s",
			len(plan), status["status"], status["completed"], len(data), len(log), len(lost), log, errs, live[0].output())
	}
	if midRequest > 0 && len(lost) == 0 {
		t.Logf("no answer was lost although %d kills landed mid-request (each request still finished first)", midRequest)
	}
	for _, h := range sw.world.Sim.Hosts() {
		if h == host || h == sim.ControlHost {
			continue
		}
		if a := sw.world.Sim.AccessLog(h); len(a) > 0 {
			t.Errorf("the job left its scope: %s was asked %d times (%s first)", h, len(a), a[0].Path)
		}
	}
	for _, v := range sim.PolitenessViolations(host, sw.world.Sim.AccessLog(host), 50*time.Millisecond) {
		t.Error(v)
	}
	t.Logf("%d kills (%d mid-request), %d pages given, %d requests for pages, %d answers lost", len(plan), midRequest,
		len(data), len(log), len(lost))
}
