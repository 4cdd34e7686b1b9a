package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"sync"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Fetcher is the polite HTTP client the pipeline fetches through.
type Fetcher interface {
	Do(ctx context.Context, r fetch.Request) (*fetch.Response, error)
}

// Crawler runs targets.
type Crawler struct {
	Store  *store.Store
	Blobs  store.Blobs
	Fetch  Fetcher
	Bundle *config.Bundle
	Now    func() time.Time
	Log    *slog.Logger

	// Progress, when set, receives an event after every page and article.
	Progress func(Event)

	// MaxAttachmentBytes bounds one attachment (default 50 MiB).
	MaxAttachmentBytes int64
	// SummaryHeadBytes is the head read of summary-access sites (default 64 KiB).
	SummaryHeadBytes int64
	// MaxListPages bounds pagination when a template does not (default 50).
	MaxListPages int
	// MaxRechecks bounds the conditional re-checks of known articles per
	// target and run (default 200).
	MaxRechecks int
	// Full walks every list page (within the page limit) instead of
	// stopping at links an earlier finished walk settled; only unknown and
	// due links are fetched all the same.
	Full bool
	// Drain is closed when the run should take no new work: the list page
	// or article in flight finishes, what is done is stored, and the rest
	// stays due in the frontier.
	Drain <-chan struct{}
	// WalkedSince, when set, skips the list walk of a target whose last
	// walk finished at or after it: a crawl job continued after its budget
	// ran out walked the lists already and only works its frontier.
	WalkedSince *time.Time
	// SkipRechecks leaves the re-checks of stored articles to
	// RecheckTarget (serve runs them as their own low-priority jobs).
	SkipRechecks bool

	// StoreWait is how long a target's crawl waits for the database when
	// it stops answering before the crawl gives up (0: DefaultStoreWait;
	// negative: as long as ctx lasts, as serve waits).
	StoreWait time.Duration

	// Cards, when set, is the near-duplicate index of the stored cards
	// (LoadCardIndex): a card close to another article's is marked its
	// duplicate. Nil: cards are stored without that check.
	Cards *CardIndex

	once  sync.Once
	cache *indexCache
}

// Event reports progress.
type Event struct {
	Target  string
	Kind    string // page | article | bytes | done
	Outcome string // created | updated | unchanged | failed (articles)
	Bytes   int64
}

// Result is what one target's crawl did.
type Result struct {
	TargetCode string
	SiteCode   string
	Pages      int
	Created    int
	Updated    int
	Unchanged  int
	Failed     int
	Skipped    int // robots-disallowed or refused items
	Discovered int // article links seen for the first time
	// Pending counts the target's links still to fetch after this run:
	// never fetched (the run stopped) or failed and waiting for a retry.
	Pending int
	// Retrying counts those of them whose last attempt failed: articles
	// known to be missing until their retry brings them. Retries names the
	// first of them, soonest retry first.
	Retrying int
	Retries  []store.WaitingRetry
	// Walk is how the list walk ended: end, known, limit; "" when it did
	// not finish (an error, an interruption) and the next walk goes on.
	Walk     string
	Bytes    int64
	Problems []string // per-item failures, for the report
	Err      error    // the target itself failed
	Blocked  string   // the site's robots.txt forbids the column: not a failure, zhizhi obeyed
	// Interrupted: the run was asked to stop before this target was done.
	Interrupted bool
	Started     time.Time
	Finished    time.Time
}

func (c *Crawler) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Crawler) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

func (c *Crawler) emit(e Event) {
	if c.Progress != nil {
		c.Progress(e)
	}
}

// Run crawls the targets: the targets of one site one after another, sites
// side by side (the fetcher's limiter keeps every host polite). Results come
// back in the order of targets.
func (c *Crawler) Run(ctx context.Context, targets []model.Target) []Result {
	bySite := map[int64][]int{}
	var siteOrder []int64
	for i, t := range targets {
		if _, ok := bySite[t.SiteID]; !ok {
			siteOrder = append(siteOrder, t.SiteID)
		}
		bySite[t.SiteID] = append(bySite[t.SiteID], i)
	}
	// A run starts from each host's current robots.txt: a tightened file
	// applies at once (the client revalidates it with a conditional GET).
	if f, ok := c.Fetch.(interface{ ForgetRobots(host string) }); ok {
		for _, sid := range siteOrder {
			if site, err := c.Store.SiteByID(ctx, sid); err == nil {
				f.ForgetRobots(fetch.SiteHost(*site))
			}
		}
	}
	results := make([]Result, len(targets))
	var wg sync.WaitGroup
	for _, sid := range siteOrder {
		wg.Add(1)
		go func(siteID int64, idxs []int) {
			defer wg.Done()
			ok := true
			for _, i := range idxs {
				if c.draining() || ctx.Err() != nil {
					results[i] = Result{TargetCode: targets[i].TargetCode, Err: ErrInterrupted, Interrupted: true}
					ok = false
					continue
				}
				results[i] = c.CrawlTarget(ctx, targets[i])
				ok = ok && results[i].Err == nil
			}
			if site, err := c.Store.SiteByID(ctx, siteID); err == nil {
				c.finishSite(ctx, site, ok && c.allDeptsCrawled(ctx, site, targets, idxs))
			}
		}(sid, bySite[sid])
	}
	wg.Wait()
	return results
}

// allDeptsCrawled reports whether this run covered every enabled dept of
// a CMS site, so its index union is the whole TREE.
func (c *Crawler) allDeptsCrawled(ctx context.Context, site *model.Site, targets []model.Target, idxs []int) bool {
	depts, err := c.Store.ListSiteDepartments(ctx, site.ID)
	if err != nil {
		return false
	}
	covered := map[int64]bool{}
	for _, i := range idxs {
		if targets[i].SiteDepartmentID != nil {
			covered[*targets[i].SiteDepartmentID] = true
		}
	}
	for _, d := range depts {
		if d.Enabled && !covered[d.ID] {
			return false
		}
	}
	return true
}

// CrawlTarget crawls one target and never panics on what a site serves:
// every failure ends up in the Result. When the database stops answering
// it waits for it and goes on where it was (see untilStored).
func (c *Crawler) CrawlTarget(ctx context.Context, t model.Target) (res Result) {
	defer c.emit(Event{Target: t.TargetCode, Kind: "done"})
	return c.untilStored(ctx, t, func(walkedSince *time.Time) Result { return c.crawlOnce(ctx, t, walkedSince) })
}

// crawlOnce is one pass of CrawlTarget: the walk (unless a walk finished
// at or after walkedSince), then the due links.
func (c *Crawler) crawlOnce(ctx context.Context, t model.Target, walkedSince *time.Time) (res Result) {
	res = Result{TargetCode: t.TargetCode, Started: c.now()}
	defer func() { res.Finished = c.now() }()
	site, err := c.Store.SiteByID(ctx, t.SiteID)
	if err != nil {
		res.Err = fmt.Errorf("load site of %s: %w", t.TargetCode, err)
		return res
	}
	res.SiteCode = site.SiteCode
	job := &job{c: c, site: site, target: t, res: &res}
	switch {
	case walkedSince != nil && c.walkedSince(ctx, t.ID, *walkedSince):
		// This crawl walked the lists already before it was continued:
		// only the links still due are left to fetch.
		err = job.setParser()
	case site.CMSAdapter != "":
		err = job.runGkmlpt(ctx)
		job.endWalk(ctx, err)
	default:
		err = job.runTemplate(ctx)
		job.endWalk(ctx, err)
	}
	// The links recorded so far are fetched even when the walk could not
	// finish (a list page failing leaves the first pages' links due); not
	// when the host refuses us or the run is stopping.
	if res.Blocked == "" && !isStop(err) {
		if werr := job.work(ctx); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) {
		res.Interrupted = true
	}
	if counts, cerr := c.Store.FrontierCounts(context.WithoutCancel(ctx), t.ID); cerr == nil {
		res.Pending = counts[store.FrontierNew] + counts[store.FrontierFailed]
	}
	if werr := c.noteRetries(ctx, t, &res); werr != nil {
		err = errors.Join(err, werr)
	}
	if err != nil {
		res.Err = err
	}
	if err := c.Store.MarkTargetCrawled(context.WithoutCancel(ctx), t.ID, c.now(), job.newest); err != nil && res.Err == nil {
		res.Err = fmt.Errorf("record crawl of %s: %w", t.TargetCode, err)
	}
	return res
}

// RecheckTarget fetches the target's failed links whose retry is due, then
// revalidates its stored articles whose next check is due (conditional
// requests), without walking its lists. Serve runs it as its own work
// beside the scheduled crawls, so a retry five minutes away is not left
// until the next scheduled crawl.
func (c *Crawler) RecheckTarget(ctx context.Context, t model.Target) Result {
	return c.untilStored(ctx, t, func(*time.Time) Result { return c.recheckOnce(ctx, t) })
}

// recheckOnce is one pass of RecheckTarget.
func (c *Crawler) recheckOnce(ctx context.Context, t model.Target) (res Result) {
	res = Result{TargetCode: t.TargetCode, Started: c.now()}
	defer func() { res.Finished = c.now() }()
	site, err := c.Store.SiteByID(ctx, t.SiteID)
	if err != nil {
		res.Err = fmt.Errorf("load site of %s: %w", t.TargetCode, err)
		return res
	}
	res.SiteCode = site.SiteCode
	j := &job{c: c, site: site, target: t, res: &res}
	if err := j.setParser(); err != nil {
		res.Err = err
		return res
	}
	done := map[int64]bool{}
	err = j.retry(ctx, done)
	if err == nil {
		err = j.recheck(ctx, done)
	}
	if err != nil {
		res.Err = err
		if errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) {
			res.Interrupted = true
		}
	}
	if werr := c.noteRetries(ctx, t, &res); werr != nil && res.Err == nil {
		res.Err = werr
	}
	return res
}

// listedRetries is how many of a target's links waiting for a retry a
// result names.
const listedRetries = 5

// noteRetries records on res the target's links that wait for a retry
// after the run.
func (c *Crawler) noteRetries(ctx context.Context, t model.Target, res *Result) error {
	list, n, err := c.Store.WaitingRetries(context.WithoutCancel(ctx), t.ID, listedRetries)
	if err != nil {
		return fmt.Errorf("links of %s waiting for a retry: %w", t.TargetCode, err)
	}
	res.Retrying, res.Retries = n, list
	return nil
}

// setParser sets the target's detail parser without walking its lists.
func (j *job) setParser() error {
	if j.c.Bundle == nil {
		return fmt.Errorf("no configuration loaded")
	}
	if j.site.CMSAdapter != "" {
		a := j.c.Bundle.CMS[j.site.CMSAdapter]
		if a == nil {
			return fmt.Errorf("adapter %q of site %s is not in the configuration", j.site.CMSAdapter, j.site.SiteCode)
		}
		j.parse = gkmlptParser(a)
		return nil
	}
	tmpl, err := j.effectiveTemplate()
	if err != nil {
		return err
	}
	j.parse = templateParser(tmpl)
	return nil
}

// walkedSince reports whether the target's last list walk finished at or
// after since.
func (c *Crawler) walkedSince(ctx context.Context, targetID int64, since time.Time) bool {
	walks, err := c.Store.LastWalks(ctx, targetID, 1)
	return err == nil && len(walks) == 1 && walks[0].FinishedAt != nil && walks[0].Reached != "" &&
		!walks[0].FinishedAt.Before(since)
}

// job is the state of one target's crawl.
type job struct {
	c      *Crawler
	site   *model.Site
	target model.Target
	res    *Result
	newest *time.Time

	parse  detailParser // the target's detail parser, set by runTemplate/runGkmlpt
	walk   *walk        // the list walk in progress
	dryRun bool         // validate: fetch and parse, record nothing but crawl_log
}

func (j *job) siteFile() (*config.SiteFile, error) {
	if j.c.Bundle == nil {
		return nil, fmt.Errorf("no configuration loaded")
	}
	for _, s := range j.c.Bundle.Sites {
		if s.SiteCode == j.site.SiteCode {
			return s, nil
		}
	}
	return nil, fmt.Errorf("site %s is not in the configuration (%s)", j.site.SiteCode, j.c.Bundle.Dir)
}

func (j *job) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.res.Problems = append(j.res.Problems, msg)
	j.c.log().Warn("crawl item failed", "target", j.target.TargetCode, "problem", msg)
}

func (j *job) request(purpose, rawURL string) fetch.Request {
	if j.dryRun {
		purpose = model.PurposeProbe // so the client keeps no url_state for it
	}
	r := fetch.Request{URL: rawURL, Purpose: purpose}
	if j.site.ID != 0 {
		sid := j.site.ID
		r.SiteID = &sid
	}
	// A dry run of a site (validate --site) has no target: its requests
	// are logged against the site alone.
	if j.target.ID != 0 {
		tid := j.target.ID
		r.TargetID = &tid
	}
	return r
}

// get fetches and counts bytes.
func (j *job) get(ctx context.Context, r fetch.Request) (*fetch.Response, error) {
	resp, err := j.c.Fetch.Do(ctx, r)
	if resp != nil {
		j.res.Bytes += resp.WireBytes
		j.c.emit(Event{Target: j.target.TargetCode, Kind: "bytes", Bytes: resp.WireBytes})
	}
	if err != nil {
		return resp, err
	}
	if !resp.NotModified && (resp.Status < 200 || resp.Status > 299) {
		return resp, &fetch.StatusError{URL: r.URL, Status: resp.Status}
	}
	return resp, nil
}

func (j *job) noteNewest(t *time.Time) {
	if t == nil {
		return
	}
	if j.newest == nil || t.After(*j.newest) {
		v := *t
		j.newest = &v
	}
}

func (j *job) count(outcome string) {
	switch outcome {
	case store.OutcomeCreated:
		j.res.Created++
	case store.OutcomeUpdated:
		j.res.Updated++
	case store.OutcomeUnchanged:
		j.res.Unchanged++
	case model.StatusFailed:
		j.res.Failed++
	}
	j.c.emit(Event{Target: j.target.TargetCode, Kind: "article", Outcome: outcome})
}

// isStop reports errors after which the rest of a target can't go on: the
// host refuses us (breaker, robots), the context ended or the database
// stopped answering (nothing of the site's is to blame: the link is left
// as it was, due).
func isStop(err error) bool {
	return errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || fetch.IsHostStop(err) || store.IsUnavailable(err)
}

func mustParse(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return &url.URL{}
	}
	return u
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func marshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
