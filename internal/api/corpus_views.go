package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// The corpus's JSON shapes (openapi.yaml's Work*, Release*, Candidate*,
// IntakeRule, IntakeSummary, SearchResult) and what its endpoints share.

// workIDRE is a work's public id as the corpus makes it: "zw" and ten
// base32 letters.
var workIDRE = regexp.MustCompile(`^zw[a-z2-7]{10}$`)

// versionRE is a release version: the display day and a serial.
var versionRE = regexp.MustCompile(`^[0-9]{8}-[0-9]{1,6}$`)

var (
	workStatuses      = []string{store.WorkActive, store.WorkFrozen, store.WorkQuarantined, store.WorkMerged}
	candidateStatuses = []string{store.CandidateOpen, store.CandidateSame, store.CandidateDifferent, "all"}
)

// needCorpus answers 503 when the server was started without the corpus.
func (h *handler) needCorpus(w http.ResponseWriter, r *http.Request) bool {
	if h.corpus != nil {
		return true
	}
	h.fail(w, r, errorf(http.StatusServiceUnavailable, "unavailable",
		"this server was started without the corpus; nothing was read or changed"))
	return false
}

// workIDOf reads the work id of the path.
func workIDOf(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !workIDRE.MatchString(id) {
		return "", invalid("path: %q is not a work id (\"zw\" and ten letters or digits 2–7, e.g. zwabcdefgh23)", printable(id))
	}
	return id, nil
}

// versionOf checks a release version given as name.
func versionOf(name, v string) error {
	if !versionRE.MatchString(v) {
		return invalid("%s: %q is not a release version (the build day and a serial, e.g. 20260423-1)", name, printable(v))
	}
	return nil
}

// noActive is the answer when no release was activated yet.
var noActive = errorf(http.StatusNotFound, "not_found",
	"no corpus release is active yet: build one (POST /api/v1/releases), verify it and have an admin activate it")

// releaseFor opens the release a read names: the active one when version
// is empty, else that version, which must be verified.
func (h *handler) releaseFor(ctx context.Context, version string) (*corpus.Release, error) {
	if version == "" {
		rel, err := h.corpus.Active(ctx)
		if errors.Is(err, corpus.ErrNoActive) {
			return nil, noActive
		}
		return rel, err
	}
	rec, err := h.st.CorpusRelease(ctx, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundf("no release %s; GET /api/v1/releases lists them", version)
	}
	if err != nil {
		return nil, err
	}
	if rec.State != store.ReleaseVerified {
		return nil, errorf(http.StatusConflict, "conflict",
			"release %s is %s, not verified: only a verified release is read (POST /api/v1/releases/%s/verify)", version, rec.State, version)
	}
	return h.corpus.Open(ctx, version)
}

// workInRelease finds work id in rel, or a 404 that says whether the work
// exists at all and why it is not in the release.
func (h *handler) workInRelease(ctx context.Context, rel *corpus.Release, id string) (*corpus.WorkEntry, error) {
	if e, ok := rel.Work(id); ok {
		return e, nil
	}
	row, err := h.st.CorpusWorkRow(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundf("no work %s", id)
	}
	if err != nil {
		return nil, err
	}
	why := ""
	if held := corpus.HeldReasons(row); len(held) > 0 {
		why = "; it is held back: " + strings.Join(held, "；")
	}
	return nil, notFoundf("work %s is not in release %s (it was taken in, but this release does not hold it%s); GET /api/v1/works/%s/trace says which releases do",
		id, rel.Version, why, id)
}

// A work cursor is "<kind>|<last work id>" in URL-safe base64, like the
// numeric cursors but over the works' string ids.
const workCursor = "w1"

func encodeKeyCursor(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + key))
}

func (q *query) keyCursor(kind string, valid func(string) bool) string {
	s := q.raw("cursor")
	if s == "" {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	k, key, ok := strings.Cut(string(raw), "|")
	if err != nil || !ok || k != kind || !valid(key) {
		q.bad("cursor", "not a cursor this endpoint issued; pass next_cursor from the previous page unchanged")
		return ""
	}
	return key
}

type workView struct {
	ID             string    `json:"id"`
	Rev            int       `json:"rev"`
	Title          string    `json:"title"`
	Status         string    `json:"status"`
	StatusReason   string    `json:"status_reason"`
	MergedInto     *string   `json:"merged_into"`
	Review         string    `json:"review"`
	SourceURL      string    `json:"source_url"`
	SiteCode       string    `json:"site_code"`
	SiteName       string    `json:"site_name"`
	Rights         string    `json:"rights"`
	Access         string    `json:"access"`
	DocNo          string    `json:"doc_no"`
	Publisher      string    `json:"publisher"`
	QA             string    `json:"qa"`
	OpenCandidates int       `json:"open_candidates"`
	HeldBack       []string  `json:"held_back"`
	FetchedAt      time.Time `json:"fetched_at"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func workOf(w *store.CorpusWorkRow) workView {
	held := corpus.HeldReasons(w)
	if held == nil {
		held = []string{}
	}
	return workView{ID: w.ID, Rev: w.CurrentRev, Title: w.Rev.Title, Status: w.Status, StatusReason: w.StatusReason,
		MergedInto: orNull(w.MergedInto), Review: w.Review, SourceURL: w.SourceURL, SiteCode: w.SiteCode, SiteName: w.SiteName,
		Rights: w.SiteRights, Access: w.Access, DocNo: w.Rev.DocNo, Publisher: w.Rev.Publisher, QA: w.Rev.QA,
		OpenCandidates: w.OpenCandidates, HeldBack: held, FetchedAt: w.FetchedAt, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

type revisionView struct {
	Rev        int             `json:"rev"`
	SnapshotID string          `json:"snapshot_id"`
	TextSHA256 string          `json:"text_sha256"`
	Title      string          `json:"title"`
	DocNo      string          `json:"doc_no"`
	Publisher  string          `json:"publisher"`
	Attributes json.RawMessage `json:"attributes"`
	Chars      int             `json:"chars"`
	QA         string          `json:"qa"`
	QAProblems []string        `json:"qa_problems"`
	CreatedAt  time.Time       `json:"created_at"`
}

func revisionOf(r *store.CorpusRevision) revisionView {
	v := revisionView{Rev: r.Rev, SnapshotID: r.SnapshotID, TextSHA256: r.TextSHA256, Title: r.Title, DocNo: r.DocNo,
		Publisher: r.Publisher, Attributes: r.Attrs, Chars: r.Chars, QA: r.QA, QAProblems: []string{}, CreatedAt: r.CreatedAt}
	if len(v.Attributes) == 0 {
		v.Attributes = json.RawMessage("{}")
	}
	_ = json.Unmarshal(r.QAProblems, &v.QAProblems)
	if v.QAProblems == nil {
		v.QAProblems = []string{}
	}
	return v
}

// inReleaseView says which revision of a work the active release holds.
type inReleaseView struct {
	Release string `json:"release"`
	Rev     int    `json:"rev"`
}

type workDetailView struct {
	workView
	Revision      revisionView   `json:"revision"`
	Aliases       []string       `json:"aliases"`
	ActiveRelease *inReleaseView `json:"active_release"`
}

type releaseView struct {
	Version     string     `json:"version"`
	State       string     `json:"state"`
	Active      bool       `json:"active"`
	Works       int        `json:"works"`
	Held        int        `json:"held"`
	BuiltBy     string     `json:"built_by"`
	BuiltAt     time.Time  `json:"built_at"`
	VerifiedAt  *time.Time `json:"verified_at"`
	VerifyError string     `json:"verify_error"`
}

func releaseOf(r *store.CorpusRelease) releaseView {
	return releaseView{Version: r.Version, State: r.State, Active: r.Active, Works: r.Works, Held: r.Held, BuiltBy: r.BuiltBy,
		BuiltAt: r.BuiltAt, VerifiedAt: r.VerifiedAt, VerifyError: r.VerifyError}
}

// release reads release version's record with whether it is active.
func (h *handler) release(ctx context.Context, version string) (*releaseView, error) {
	rec, err := h.st.CorpusRelease(ctx, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundf("no release %s; GET /api/v1/releases lists them", version)
	}
	if err != nil {
		return nil, err
	}
	act, err := h.st.ActiveCorpusRelease(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	rec.Active = act != nil && act.Version == version
	v := releaseOf(rec)
	return &v, nil
}

type candidateView struct {
	ID        int64      `json:"id"`
	Kind      string     `json:"kind"`
	Status    string     `json:"status"`
	WorkA     string     `json:"work_a"`
	TitleA    string     `json:"title_a"`
	WorkB     string     `json:"work_b"`
	TitleB    string     `json:"title_b"`
	Distance  int        `json:"distance"`
	Detail    string     `json:"detail"`
	DecidedBy *string    `json:"decided_by"`
	DecidedAt *time.Time `json:"decided_at"`
	CreatedAt time.Time  `json:"created_at"`
}

func candidateOf(k *store.CorpusCandidate) candidateView {
	return candidateView{ID: k.ID, Kind: k.Kind, Status: k.Status, WorkA: k.WorkA, TitleA: k.TitleA, WorkB: k.WorkB,
		TitleB: k.TitleB, Distance: k.Distance, Detail: k.Detail, DecidedBy: orNull(k.DecidedBy), DecidedAt: k.DecidedAt,
		CreatedAt: k.CreatedAt}
}

type intakeRuleView struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	TargetCodes []string   `json:"target_codes"`
	Enabled     bool       `json:"enabled"`
	CreatedBy   string     `json:"created_by"`
	CreatedAt   time.Time  `json:"created_at"`
	LastRunAt   *time.Time `json:"last_run_at"`
	LastAdded   int        `json:"last_added"`
}

func intakeRuleOf(r *store.CorpusIntakeRule) intakeRuleView {
	codes := r.TargetCodes
	if codes == nil {
		codes = []string{}
	}
	return intakeRuleView{ID: r.ID, Name: r.Name, TargetCodes: codes, Enabled: r.Enabled, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt, LastRunAt: r.LastRunAt, LastAdded: r.LastAdded}
}

type intakeFailureView struct {
	ArticleID int64  `json:"article_id"`
	Error     string `json:"error"`
}

type intakeSummaryView struct {
	Looked       int                 `json:"looked"`
	NewWorks     int                 `json:"new_works"`
	NewRevisions int                 `json:"new_revisions"`
	Unchanged    int                 `json:"unchanged"`
	FailedQA     int                 `json:"failed_qa"`
	Candidates   int                 `json:"candidates"`
	Failures     []intakeFailureView `json:"failures"`
}

func intakeSummaryOf(s *corpus.RunSummary) intakeSummaryView {
	v := intakeSummaryView{Looked: s.Looked, NewWorks: s.NewWorks, NewRevisions: s.NewRevisions, Unchanged: s.Unchanged,
		FailedQA: s.FailedQA, Candidates: s.Candidates, Failures: []intakeFailureView{}}
	for _, f := range s.Failures {
		v.Failures = append(v.Failures, intakeFailureView{ArticleID: f.ArticleID, Error: f.Error})
	}
	return v
}
