package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// BenchmarkServeWorkers crawls a simulated web of generated county sites
// (BENCH_COUNTIES, default 12; half gkmlpt, half template sites,
// each its own host) at polite rates with 1, 2 and 3 `zhizhi serve`
// processes on one PostgreSQL database, each with 4 crawl workers. It
// reports the wall time of the whole crawl, articles and requests per
// second, and the CPU the serve processes spent per job and per request.
// One iteration is a whole crawl: run it with -benchtime=1x.
//
//	go test ./internal/cli -run '^$' -bench BenchmarkServeWorkers -benchtime=1x
func BenchmarkServeWorkers(b *testing.B) {
	counties := 12
	if v := os.Getenv("BENCH_COUNTIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			b.Fatalf("BENCH_COUNTIES=%q: want 1 to 200", v)
		}
		counties = n
	}
	for _, procs := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("processes=%d", procs), func(b *testing.B) {
			for range b.N {
				benchServeCrawl(b, counties, procs)
			}
		})
	}
}

func benchServeCrawl(b *testing.B, counties, procs int) {
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	sp, cfg := startCounties(ctx, b, counties)
	defer sp.cmd.Process.Kill()
	dbURL := storetest.PostgresURL(b)
	data := b.TempDir()
	env := []string{"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_CONFIG_DIR=" + cfg, "ZHIZHI_RESOLVE=" + sp.resolve,
		"ZHIZHI_CHROMIUM=" + filepath.Join(data, "no-chromium"), "ZHIZHI_LOG_LEVEL=warn"}
	for _, args := range [][]string{{"migrate"}, {"dept", "import", filepath.Join(cfg, config.DepartmentsFile)}, {"config", "sync"}} {
		if r := runZhizhi(b, append(env, "ZHIZHI_DATA_DIR="+data), args...); r.code != 0 {
			b.Fatalf("zhizhi %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	st, err := store.Open(ctx, dbURL, data)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	sw := &serveWorld{st: st, env: env, dataDir: data}
	b.StartTimer()
	start := time.Now()
	var ps []*serveProc
	for i := range procs {
		ps = append(ps, sw.startServe(b, filepath.Join(data, fmt.Sprintf("worker-%d", i)), "--workers", "4"))
	}
	sw.waitDone(b, 50*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	var cpu time.Duration
	for _, p := range ps {
		cpu += processCPU(b, p.cmd.Process.Pid)
		p.stop(b)
	}
	var articles, requests int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM article`).Scan(&articles); err != nil {
		b.Fatal(err)
	}
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM crawl_log WHERE http_status > 0`).Scan(&requests); err != nil {
		b.Fatal(err)
	}
	q, err := queue.Open(ctx, queue.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	byWorker, err := q.AttemptsByWorker(ctx)
	if err != nil {
		b.Fatal(err)
	}
	jobs := 0
	for _, n := range byWorker {
		jobs += n
	}
	b.ReportMetric(elapsed.Seconds(), "s/crawl")
	b.ReportMetric(float64(articles)/elapsed.Seconds(), "articles/s")
	b.ReportMetric(float64(requests)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(max(jobs, 1)), "cpu-ms/job")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(max(requests, 1)), "cpu-ms/request")
	b.Logf("%d counties, %d processes: %d articles, %d requests, %d jobs in %v; serve CPU %v; jobs per worker %v",
		counties, procs, articles, requests, jobs, elapsed.Round(time.Second), cpu, byWorker)
}

// processCPU is the user and system CPU time a live process has used, from
// /proc (Linux clock ticks of 1/100 s).
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skipf("no /proc to read CPU time from: %v", err)
	}
	// Fields after the command name (which may hold spaces, in parentheses).
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
