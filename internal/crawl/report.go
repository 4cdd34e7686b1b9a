package crawl

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/width"

	"zhizhi/internal/config/zone"
)

// Progress renders crawl progress on one line: targets done, pages,
// articles new/updated/unchanged/failed, bytes. On a terminal it redraws
// the line in place; elsewhere it prints a line at most every interval.
type Progress struct {
	W        io.Writer
	TTY      bool
	Total    int           // targets
	Interval time.Duration // for non-TTY output; default 10 s

	mu                                  sync.Mutex
	done, pages                         int
	created, updated, unchanged, failed int
	bytes                               int64
	last                                time.Time
	started                             time.Time
}

// Event takes one crawl event.
func (p *Progress) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started.IsZero() {
		p.started = time.Now()
	}
	switch e.Kind {
	case "done":
		p.done++
	case "page":
		p.pages++
	case "article":
		switch e.Outcome {
		case "created":
			p.created++
		case "updated":
			p.updated++
		case "unchanged":
			p.unchanged++
		default:
			p.failed++
		}
	}
	p.bytes += e.Bytes
	p.draw(false)
}

// Finish draws the final state and ends the line.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(true)
	if p.TTY {
		fmt.Fprintln(p.W)
	}
}

func (p *Progress) draw(force bool) {
	interval := p.Interval
	if interval == 0 {
		interval = 10 * time.Second
	}
	now := time.Now()
	if !p.TTY && !force && now.Sub(p.last) < interval {
		return
	}
	if p.TTY && !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	bar := progressBar(p.done, p.Total, 20)
	line := fmt.Sprintf("%s 栏目 %d/%d · 列表页 %d · 文章 新增 %d 更新 %d 未变 %d 失败 %d · %s · %s",
		bar, p.done, p.Total, p.pages, p.created, p.updated, p.unchanged, p.failed,
		HumanBytes(p.bytes), now.Sub(p.started).Round(time.Second))
	if p.TTY {
		fmt.Fprintf(p.W, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.W, line)
	}
}

func progressBar(done, total, n int) string {
	if total <= 0 {
		total = 1
	}
	fill := done * n / total
	return "[" + strings.Repeat("█", fill) + strings.Repeat("░", n-fill) + "]"
}

// HumanBytes writes a byte count in B, KiB, MiB or GiB.
func HumanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// DisplayWidth counts East Asian wide and full-width runes as two columns.
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

func pad(s string, w int) string {
	if d := w - DisplayWidth(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}

// WriteTable prints one row per target and a total line; a failed target's
// reason follows the table.
func WriteTable(w io.Writer, results []Result) {
	header := []string{"栏目 target", "站点 site", "页", "新增", "更新", "未变", "失败", "跳过", "待办", "流量", "结果"}
	rows := [][]string{}
	var tot Result
	for _, r := range results {
		status := "✓ 成功"
		switch {
		case r.Interrupted:
			status = "⏸ 已中断"
		case r.Blocked != "":
			status = "⛔ robots 禁止"
		case r.Err != nil:
			status = "✗ 失败"
		case r.Failed > 0 || len(r.Problems) > 0:
			status = "⚠ 部分失败"
		case r.Retrying > 0:
			status = "⏳ 待重试"
		}
		rows = append(rows, []string{r.TargetCode, r.SiteCode, fmt.Sprint(r.Pages), fmt.Sprint(r.Created),
			fmt.Sprint(r.Updated), fmt.Sprint(r.Unchanged), fmt.Sprint(r.Failed), fmt.Sprint(r.Skipped), fmt.Sprint(r.Pending), HumanBytes(r.Bytes), status})
		tot.addCounts(r)
		tot.Pending += r.Pending
	}
	rows = append(rows, []string{"合计 total", fmt.Sprintf("%d 个栏目", len(results)), fmt.Sprint(tot.Pages), fmt.Sprint(tot.Created),
		fmt.Sprint(tot.Updated), fmt.Sprint(tot.Unchanged), fmt.Sprint(tot.Failed), fmt.Sprint(tot.Skipped), fmt.Sprint(tot.Pending), HumanBytes(tot.Bytes), ""})
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = DisplayWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], DisplayWidth(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(pad(c, widths[i]))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("─", widths[i])
	}
	line(sep)
	for i, r := range rows {
		if i == len(rows)-1 {
			line(sep)
		}
		line(r)
	}
	if tot.Pending > 0 {
		fmt.Fprintf(w, "待办 %d：已发现但尚未抓取、或失败后等待重试的文章链接；下次运行时到期的会自动补上。\n", tot.Pending)
	}
	writeRetries(w, results)
	interrupted := 0
	for _, r := range results {
		if r.Interrupted {
			interrupted++
		}
	}
	if interrupted > 0 {
		fmt.Fprintf(w, "⏸ %d 个栏目已中断 (interrupted)：已采集的内容已保存，下次运行从中断处继续\n", interrupted)
	}
	for _, r := range results {
		// Being stopped is said once above, not as a failure per target.
		if r.Err != nil && !r.Interrupted {
			fmt.Fprintf(w, "✗ %s: %v\n", r.TargetCode, r.Err)
		}
		if r.Blocked != "" {
			fmt.Fprintf(w, "⛔ %s: %s — not collected; zhizhi obeys robots.txt\n", r.TargetCode, r.Blocked)
		}
		for i, p := range r.Problems {
			if i == 5 {
				fmt.Fprintf(w, "  … %d more problems in %s\n", len(r.Problems)-5, r.TargetCode)
				break
			}
			fmt.Fprintf(w, "  ⚠ %s: %s\n", r.TargetCode, p)
		}
	}
}

// writeRetries names, per target, the articles that wait for a retry:
// they are missing until it brings them.
func writeRetries(w io.Writer, results []Result) {
	for _, r := range results {
		if r.Retrying == 0 {
			continue
		}
		line := fmt.Sprintf("⏳ %s: %d 篇待重试", r.TargetCode, r.Retrying)
		if len(r.Retries) > 0 && r.Retries[0].NextAttemptAt != nil {
			line += fmt.Sprintf("（下次 %s）", WhenText(*r.Retries[0].NextAttemptAt))
		}
		fmt.Fprintln(w, line)
		for _, e := range r.Retries {
			when := "—"
			if e.NextAttemptAt != nil {
				when = WhenText(*e.NextAttemptAt)
			}
			fmt.Fprintf(w, "  ↻ %s — 已失败 %d 次，下次 %s：%s\n", e.URL, e.Attempts, when, oneLine(e.Error, 100))
		}
		if more := r.Retrying - len(r.Retries); more > 0 {
			fmt.Fprintf(w, "  … 另有 %d 篇\n", more)
		}
	}
	if RetryingTotal(results) > 0 {
		fmt.Fprintln(w, "到期后下次运行会自动重试；`zhizhi crawl --retry-failed` 立即重试。")
	}
}

// RetryingTotal counts the articles the results leave waiting for a retry.
func RetryingTotal(results []Result) int {
	n := 0
	for _, r := range results {
		n += r.Retrying
	}
	return n
}

// WhenText writes a time shown to a person, in ZHIZHI_TIMEZONE with the
// zone named: the clock time when it is today, with the date otherwise.
func WhenText(t time.Time) string {
	loc := zone.Display()
	t = t.In(loc)
	if t.Format(time.DateOnly) == time.Now().In(loc).Format(time.DateOnly) {
		return t.Format("15:04 MST")
	}
	return t.Format("2006-01-02 15:04 MST")
}

// oneLine keeps a message on one line and at most n display columns.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if DisplayWidth(s) <= n {
		return s
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := DisplayWidth(string(r))
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String() + "…"
}

// Exit codes of a crawl run.
const (
	ExitOK          = 0   // everything asked for succeeded
	ExitFailed      = 1   // a target or an article failed, or an article waits for a retry
	ExitInterrupted = 130 // the run was interrupted (SIGINT, SIGTERM)
)

// ExitCode is the exit status a crawl's results call for: interrupted
// first, then any failed target or article, or an article still waiting
// for a retry (it is known to be missing, whether or not this run tried
// it), else success. A column robots.txt forbids is not a failure: zhizhi
// obeyed.
func ExitCode(results []Result) int {
	code := ExitOK
	for _, r := range results {
		if r.Interrupted {
			return ExitInterrupted
		}
		if r.Err != nil || r.Failed > 0 || len(r.Problems) > 0 || r.Retrying > 0 {
			code = ExitFailed
		}
	}
	return code
}
