package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/onboard"
)

// A wizard run reads real sites at the polite pace — seconds a request, a
// city portal's forty departments take minutes — so it works in the
// background and the page polls. Runs live in the console's memory only:
// the wizard writes no configuration, so a restart loses the run and
// nothing else.
const (
	// runTTL is how long a run is kept after it starts.
	runTTL = 24 * time.Hour
	// maxRunning is how many runs may read the web at once: every run
	// shares the one polite fetcher, and more would only queue.
	maxRunning = 3
	// maxRuns bounds the runs held in memory; the oldest finished go
	// first.
	maxRuns = 50
	// runTimeout stops a run that has not finished: the largest paste
	// (200 sites) at the polite pace fits well within it.
	runTimeout = 3 * time.Hour
)

// errTooManyRuns refuses a run while maxRunning are reading the web.
var errTooManyRuns = fmt.Errorf("已有 %d 个向导任务正在运行（所有人合计），请等其中一个完成后再开始", maxRunning)

type runState string

const (
	runRunning   runState = "running"
	runDone      runState = "done"
	runCancelled runState = "cancelled"
	runFailed    runState = "failed"
)

// wizardRun is one batch: the paste, the progress while it runs, then the
// scanned sites with the person's choices and, once accepted, the drafts.
type wizardRun struct {
	ID      string
	owner   string
	Adapter string // the adapter page the person came from, if any
	Started time.Time
	Lines   []onboard.Line
	cancel  context.CancelFunc

	mu           sync.Mutex
	state        runState
	finished     time.Time
	failure      string
	detections   []onboard.Detection // as they finish, then in paste order
	deptsTotal   int
	deptsScanned int
	sitesTotal   int // matched sites to scan
	sitesScanned int
	problems     []runProblem // as they come
	sites        []onboard.Site
	include      []bool // per site: draft it
	drafts       []onboard.Draft
}

// runProblem is one site's or dept's trouble, shown while the run goes on.
type runProblem struct {
	Where   string
	Problem string
}

// observe takes the wizard's progress reports.
func (r *wizardRun) observe(e onboard.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case e.Detection != nil:
		d := *e.Detection
		r.detections = append(r.detections, d)
		if d.Problem != "" {
			r.problems = append(r.problems, runProblem{fmt.Sprintf("第 %d 行 %s", d.Line, d.BaseURL), d.Problem})
		}
		if d.Matched() {
			r.sitesTotal++
			r.deptsTotal += len(d.DeptLinks)
		}
	case e.Dept != nil:
		r.deptsScanned++
		if e.Dept.Problem != "" {
			r.problems = append(r.problems, runProblem{e.BaseURL + " / " + e.Dept.DeptPath, e.Dept.Problem})
		}
	case e.Site != nil:
		r.sitesScanned++
		if e.Site.Problem != "" {
			r.problems = append(r.problems, runProblem{e.BaseURL, e.Site.Problem})
		}
	}
}

// finish records the run's outcome.
func (r *wizardRun) finish(ds []onboard.Detection, sites []onboard.Site, state runState, failure string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ds != nil {
		r.detections = ds
	}
	r.sites = sites
	r.include = make([]bool, len(sites))
	for i, s := range sites {
		// A site onboarded already or not scanned cannot be drafted;
		// it starts left out so the rest can go ahead.
		r.include[i] = s.ConfiguredAs == "" && s.Problem == ""
	}
	r.state, r.failure, r.finished = state, failure, now
}

func (r *wizardRun) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == runRunning
}

// wizardRuns holds the console's runs by id.
type wizardRuns struct {
	mu   sync.Mutex
	runs map[string]*wizardRun
}

func newWizardRuns() *wizardRuns { return &wizardRuns{runs: map[string]*wizardRun{}} }

// runOwner names the person a run belongs to: the user, by id and name.
func runOwner(p *auth.Principal) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%d:%s", p.UserID, p.Username)
}

// start registers a new running run for owner, or refuses while
// maxRunning are running.
func (rs *wizardRuns) start(owner, adapter string, lines []onboard.Line, now time.Time) (*wizardRun, context.Context, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.expireLocked(now)
	running := 0
	for _, r := range rs.runs {
		if r.running() {
			running++
		}
	}
	if running >= maxRunning {
		return nil, nil, errTooManyRuns
	}
	if len(rs.runs) >= maxRuns {
		rs.dropOldestFinishedLocked()
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, fmt.Errorf("run id: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	r := &wizardRun{ID: hex.EncodeToString(b), owner: owner, Adapter: adapter, Started: now, Lines: lines,
		cancel: cancel, state: runRunning}
	rs.runs[r.ID] = r
	return r, ctx, nil
}

// remove forgets a run that never got going.
func (rs *wizardRuns) remove(r *wizardRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.cancel()
	delete(rs.runs, r.ID)
}

// get returns the run id of owner; another person's run, like an expired
// one, does not exist for them.
func (rs *wizardRuns) get(id, owner string, now time.Time) (*wizardRun, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.expireLocked(now)
	r, ok := rs.runs[id]
	if !ok || owner == "" || r.owner != owner {
		return nil, false
	}
	return r, true
}

// of lists owner's runs, newest first.
func (rs *wizardRuns) of(owner string, now time.Time) []*wizardRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.expireLocked(now)
	var out []*wizardRun
	for _, r := range rs.runs {
		if r.owner == owner {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out
}

func (rs *wizardRuns) expireLocked(now time.Time) {
	for id, r := range rs.runs {
		if now.Sub(r.Started) >= runTTL {
			r.cancel()
			delete(rs.runs, id)
		}
	}
}

func (rs *wizardRuns) dropOldestFinishedLocked() {
	var oldest *wizardRun
	for _, r := range rs.runs {
		if !r.running() && (oldest == nil || r.Started.Before(oldest.Started)) {
			oldest = r
		}
	}
	if oldest != nil {
		delete(rs.runs, oldest.ID)
	}
}

// runWizard does a run's work: detect every pasted site, scan the matched
// ones, suggest each dept's binding. It runs on its own goroutine; a
// panic ends the run with a message, not the server.
func (c *console) runWizard(ctx context.Context, r *wizardRun, base *onboard.Wizard) {
	defer r.cancel()
	var ds []onboard.Detection
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("onboarding wizard run failed", "run", r.ID, "panic", p)
			r.finish(ds, nil, runFailed, "向导运行出错，已记录日志，请重新开始或联系系统管理员。", c.now())
		}
	}()
	// The run's own copy: the wizard given may be shared by other runs.
	w := *base
	w.Progress = r.observe
	ds = w.Detect(ctx, r.Lines)
	sites := w.Scan(ctx, ds)
	// Suggestions need the departments even when the run was cancelled:
	// what was scanned is still shown.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	depts, err := c.store.ListDepartments(dctx)
	if err != nil {
		c.log.Error("onboarding wizard: list departments", "run", r.ID, "err", err)
		r.finish(ds, sites, runFailed, "读取本地部门失败，无法给出绑定建议，请稍后重新开始。", c.now())
		return
	}
	onboard.NewDirectory(depts).SuggestAll(sites)
	state, failure := runDone, ""
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		state, failure = runCancelled, fmt.Sprintf("任务超过 %d 小时未完成，已停止；下面是停止前完成的部分。", int(runTimeout/time.Hour))
	case ctx.Err() != nil:
		state, failure = runCancelled, "任务已取消；下面是取消前完成的部分。"
	}
	r.finish(ds, sites, state, failure, c.now())
}

// run returns the request's run of the signed-in person, or answers 404.
func (c *console) run(w http.ResponseWriter, req *http.Request) (*wizardRun, bool) {
	p, _ := auth.FromContext(req.Context())
	r, ok := c.runs.get(req.PathValue("id"), runOwner(p), c.now())
	if !ok {
		c.notFound(w, req, "没有这个向导任务：任务只对发起人可见，保留 24 小时；服务重启后任务也会丢失（向导不写配置，丢失的只是这次扫描），请重新开始。")
		return nil, false
	}
	return r, true
}

// bindingChoices are the options of a dept row's binding, pending last:
// it may be chosen, but the wizard will not go on with it.
var bindingChoices = []struct{ Value, Label string }{
	{"mapped", "对应本地部门"},
	{"city_level", "市本级"},
	{"cross_dept", "跨部门"},
	{"external_ref", "外部参考"},
	{"pending", "待定"},
}

func validBinding(b string) bool {
	return slices.ContainsFunc(bindingChoices, func(c struct{ Value, Label string }) bool { return c.Value == b })
}

// Label is the state in the person's words.
func (s runState) Label() string {
	switch s {
	case runRunning:
		return "进行中"
	case runDone:
		return "已完成"
	case runCancelled:
		return "已取消"
	case runFailed:
		return "出错"
	}
	return string(s)
}
