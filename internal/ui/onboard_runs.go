package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/onboard"
	"zhizhi/internal/queue"
	"zhizhi/internal/store"
)

// A wizard run reads real sites at the polite pace — seconds a request, a
// city portal's forty departments take minutes — so it works in the
// background, as a job of the queue (queue.KindOnboard) that any serve
// process may work, and the page polls. The run lives in the database:
// every console shows it, and a serve process that stops or dies hands
// it to another. The wizard writes no configuration.
const (
	// runTTL is how long a run is kept after it starts.
	runTTL = 24 * time.Hour
	// maxRunning is how many runs may read the web at once, all processes
	// together: every run shares the polite fetcher's pace, and more
	// would only queue.
	maxRunning = queue.OnboardMaxRunning
	// maxRuns bounds the runs kept; the oldest finished go first.
	maxRuns = 50
	// staleAfter: a run still running this long after it started has no
	// process working it any more (each stops its own at the timeout).
	staleAfter = queue.OnboardTimeout + 30*time.Minute
)

// errTooManyRuns refuses a run while maxRunning are reading the web.
var errTooManyRuns = fmt.Errorf("已有 %d 个向导任务正在运行（所有人合计），请等其中一个完成后再开始", maxRunning)

type runState string

const (
	runRunning   runState = store.OnboardRunning
	runDone      runState = store.OnboardDone
	runCancelled runState = store.OnboardCancelled
	runFailed    runState = store.OnboardFailed
)

// staleFailure is what a run no process finished says.
var staleFailure = fmt.Sprintf("任务开始 %d 小时后仍未完成，处理它的服务进程可能已停止；已标记为出错，请重新开始。", int(staleAfter/time.Hour))

// wizardRun is one batch as a page shows it, read from the database: the
// paste, the progress while it runs, then the scanned sites with the
// person's choices and, once accepted, the drafts.
type wizardRun struct {
	ID      string
	owner   string
	Adapter string // the adapter page the person came from, if any
	Started time.Time
	Lines   []onboard.Line

	state        runState
	finished     time.Time
	failure      string
	detections   []onboard.Detection // in paste order
	deptsTotal   int
	deptsScanned int
	sitesTotal   int // matched sites to scan
	sitesScanned int
	problems     []runProblem
	sites        []onboard.Site
	include      []bool // per site: draft it
	drafts       []onboard.Draft
}

// runProblem is one site's or dept's trouble, shown while the run goes on.
type runProblem struct {
	Where   string
	Problem string
}

// deptProblem is how the queue's worker keeps a dept row's trouble.
type deptProblem struct {
	DeptPath string `json:"dept_path"`
	Problem  string `json:"problem"`
}

// runOwner names the person a run belongs to: the user, by id and name.
func runOwner(p *auth.Principal) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%d:%s", p.UserID, p.Username)
}

// newRunID is a run's id: 128 random bits, as hex.
func newRunID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// loadRun reads run id for owner; another person's run, like an expired
// one, does not exist for them. A run no process finished is marked
// failed here, so that it never shows as running forever.
func (c *console) loadRun(ctx context.Context, id, owner string) (*wizardRun, error) {
	r, err := c.store.OnboardRun(ctx, id)
	if err != nil {
		return nil, err
	}
	now := c.now()
	if owner == "" || r.Owner != owner || now.Sub(r.Started) >= runTTL {
		return nil, store.ErrNotFound
	}
	if r.State == store.OnboardRunning && now.Sub(r.Started) >= staleAfter {
		if err := c.store.FailOnboardRun(ctx, id, staleFailure, now); err != nil {
			return nil, err
		}
		if r, err = c.store.OnboardRun(ctx, id); err != nil {
			return nil, err
		}
	}
	run := &wizardRun{ID: r.ID, owner: r.Owner, Adapter: r.Adapter, Started: r.Started, state: runState(r.State),
		failure: r.Failure}
	if r.Finished != nil {
		run.finished = *r.Finished
	}
	if err := unmarshalRun(r, run); err != nil {
		return nil, fmt.Errorf("onboarding run %s: %w", id, err)
	}
	lines, err := c.store.OnboardLines(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if l.Detection == nil {
			continue
		}
		var d onboard.Detection
		if err := json.Unmarshal(l.Detection, &d); err != nil {
			return nil, fmt.Errorf("onboarding run %s line %d: %w", id, l.Line, err)
		}
		run.detections = append(run.detections, d)
		if d.Problem != "" {
			run.problems = append(run.problems, runProblem{fmt.Sprintf("第 %d 行 %s", d.Line, d.BaseURL), d.Problem})
		}
		if d.Matched() {
			run.sitesTotal++
			run.deptsTotal += len(d.DeptLinks)
		}
		var dps []deptProblem
		if l.DeptProblems != nil {
			if err := json.Unmarshal(l.DeptProblems, &dps); err != nil {
				return nil, fmt.Errorf("onboarding run %s line %d: %w", id, l.Line, err)
			}
		}
		for _, p := range dps {
			run.problems = append(run.problems, runProblem{d.BaseURL + " / " + p.DeptPath, p.Problem})
		}
		if l.Site == nil {
			run.deptsScanned += l.DeptsScanned
			continue
		}
		var s onboard.Site
		if err := json.Unmarshal(l.Site, &s); err != nil {
			return nil, fmt.Errorf("onboarding run %s line %d: %w", id, l.Line, err)
		}
		run.sitesScanned++
		run.deptsScanned += l.DeptsScanned
		if s.Problem != "" {
			run.problems = append(run.problems, runProblem{s.BaseURL, s.Problem})
		}
	}
	return run, nil
}

// unmarshalRun reads the run's JSON documents into run.
func unmarshalRun(r *store.OnboardRun, run *wizardRun) error {
	for _, doc := range []struct {
		raw json.RawMessage
		dst any
	}{{r.Lines, &run.Lines}, {r.Sites, &run.sites}, {r.Include, &run.include}, {r.Drafts, &run.drafts}} {
		if doc.raw == nil {
			continue
		}
		if err := json.Unmarshal(doc.raw, doc.dst); err != nil {
			return err
		}
	}
	if len(run.include) != len(run.sites) {
		run.include = make([]bool, len(run.sites))
	}
	return nil
}

// saveChoices keeps run's sites, choices and drafts.
func (c *console) saveChoices(ctx context.Context, run *wizardRun) error {
	sites, err := json.Marshal(run.sites)
	if err != nil {
		return err
	}
	include, _ := json.Marshal(run.include)
	var drafts json.RawMessage
	if len(run.drafts) > 0 {
		if drafts, err = json.Marshal(run.drafts); err != nil {
			return err
		}
	}
	return c.store.SaveOnboardChoices(ctx, run.ID, sites, include, drafts, len(run.drafts))
}

// run returns the request's run of the signed-in person, or answers 404.
func (c *console) run(w http.ResponseWriter, req *http.Request) (*wizardRun, bool) {
	p, _ := auth.FromContext(req.Context())
	r, err := c.loadRun(req.Context(), req.PathValue("id"), runOwner(p))
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.notFound(w, req, "没有这个向导任务：任务只对发起人可见，保留 24 小时，请重新开始。")
		return nil, false
	case err != nil:
		c.serverError(w, req, err)
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
