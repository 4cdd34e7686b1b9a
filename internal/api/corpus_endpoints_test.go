package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/corpustest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// tokAdminKeyWrite is an admin's API key with the write scope: keys have
// no admin scope, so this is the key that may activate a release.
const tokAdminKeyWrite = "admin-key-write"

func init() {
	testPrincipals[tokAdminKeyWrite] = &auth.Principal{UserID: 3, Username: "zhao", Role: auth.RoleAdmin, APIKeyID: 11,
		Scopes: []string{ScopeWrite}}
}

// corpusWorld is a populated corpus the corpus endpoints are driven over.
type corpusWorld struct {
	t  testing.TB
	c  *corpustest.Corpus
	st *store.Store
	// released is a work of the active release; held one held back for
	// its site's rights; article an article taken in.
	released, held string
	article        int64
	url            string // the released work's source address
}

func newCorpusWorld(t testing.TB, st *store.Store) *corpusWorld {
	t.Helper()
	c := corpustest.Populate(t, st)
	w := &corpusWorld{t: t, c: c, st: st}
	ctx := context.Background()
	rel, err := c.Service.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.released, w.url = rel.Entries[0].ID, rel.Entries[0].URL
	if err := st.EachCorpusWork(ctx, func(r *store.CorpusWorkRow) error {
		if w.held == "" && r.SiteCode == "gov_ref" {
			w.held = r.ID
		}
		if r.ID == w.released && r.ArticleID != nil {
			w.article = *r.ArticleID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if w.held == "" || w.article == 0 {
		t.Fatalf("the corpus has no held-back work (%q) or no article behind %s", w.held, w.released)
	}
	return w
}

// newCorpusAPITest is the API over st with the corpus service.
func newCorpusAPITest(t *testing.T, st *store.Store, svc *corpus.Service) *apiTest {
	t.Helper()
	return newAPITestWith(t, st, fixedNow, noWeb, noColumn, func(o *Options) { o.Corpus = svc })
}

// freshRelease builds and verifies a release that is not active, for an
// activation to move to.
func (w *corpusWorld) freshRelease() string {
	w.t.Helper()
	ctx := context.Background()
	res, err := w.c.Service.Build(ctx, "user:tester", nil)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.c.Service.Verify(ctx, res.Version, "user:tester", corpus.VerifyOptions{SkipSnapshots: true}, nil); err != nil {
		w.t.Fatal(err)
	}
	return res.Version
}

// openCandidate opens a new duplicate candidate and returns its id.
func (w *corpusWorld) openCandidate() int64 {
	w.t.Helper()
	w.c.Duplicate(w.t, w.article)
	ks, err := w.st.CorpusCandidatesPage(context.Background(), store.CandidateOpen, 0, 1)
	if err != nil || len(ks) == 0 {
		w.t.Fatalf("no open candidate after a duplicate: %v", err)
	}
	return ks[0].ID
}

// toggleStatus asks for the status the released work is not in.
func (w *corpusWorld) toggleStatus() request {
	w.t.Helper()
	cur, err := w.st.CorpusWork(context.Background(), w.released)
	if err != nil {
		w.t.Fatal(err)
	}
	if cur.Status == store.WorkQuarantined {
		return postJSON("/api/v1/works/"+w.released+"/status", "", `{"status": "active"}`)
	}
	return postJSON("/api/v1/works/"+w.released+"/status", "", `{"status": "quarantined", "reason": "核对原文"}`)
}

// corpusCase is endpointCase over a corpus.
type corpusCase struct {
	name    string
	ok      func(w *corpusWorld) request
	okCode  int
	bad     func(w *corpusWorld) request
	role    auth.Role // the least role; viewer when empty
	scope   string
	notFond func(w *corpusWorld) request
	// strayOK: unknown query parameters are ignored (the Wayback CDX
	// server's rule), not refused.
	strayOK bool
}

func corpusEndpointCases() []corpusCase {
	op, adm := auth.RoleOperator, auth.RoleAdmin
	return []corpusCase{
		{name: "work list", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/works?status=active&site=lianzhou&limit=5", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/works?status=deleted", "") }},
		{name: "work get", okCode: 200, scope: ScopeRead,
			ok:      func(w *corpusWorld) request { return get("/api/v1/works/"+w.released, "") },
			bad:     func(w *corpusWorld) request { return get("/api/v1/works/ZW-1", "") },
			notFond: func(w *corpusWorld) request { return get("/api/v1/works/zwaaaaaaaaaa", "") }},
		{name: "work trace", okCode: 200, scope: ScopeRead,
			ok:      func(w *corpusWorld) request { return get("/api/v1/works/"+w.released+"/trace", "") },
			bad:     func(w *corpusWorld) request { return get("/api/v1/works/zw1/trace", "") },
			notFond: func(w *corpusWorld) request { return get("/api/v1/works/zwaaaaaaaaaa/trace", "") }},
		{name: "work text", okCode: 200, scope: ScopeRead,
			ok:      func(w *corpusWorld) request { return get("/api/v1/works/"+w.released+"/text", "") },
			bad:     func(w *corpusWorld) request { return get("/api/v1/works/"+w.released+"/text?release=latest", "") },
			notFond: func(w *corpusWorld) request { return get("/api/v1/works/"+w.held+"/text", "") }},
		{name: "work citation", okCode: 200, scope: ScopeRead,
			ok:      func(w *corpusWorld) request { return get("/api/v1/works/"+w.released+"/citation?format=gbt7714", "") },
			bad:     func(w *corpusWorld) request { return get("/api/v1/works/"+w.released+"/citation?format=apa", "") },
			notFond: func(w *corpusWorld) request { return get("/api/v1/works/zwaaaaaaaaaa/citation", "") }},
		{name: "work status", okCode: 200, role: op, scope: ScopeWrite,
			ok: func(w *corpusWorld) request { return w.toggleStatus() },
			bad: func(w *corpusWorld) request {
				return postJSON("/api/v1/works/"+w.released+"/status", "", `{"status": "quarantined"}`)
			},
			notFond: func(w *corpusWorld) request {
				return postJSON("/api/v1/works/zwaaaaaaaaaa/status", "", `{"status": "active"}`)
			}},
		{name: "corpus intake", okCode: 200, role: op, scope: ScopeWrite,
			ok: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/intake", "", fmt.Sprintf(`{"article_ids": [%d]}`, w.article))
			},
			bad: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/intake", "", fmt.Sprintf(`{"article_ids": [%d], "target_codes": ["x"]}`, w.article))
			}},
		{name: "intake rules", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/corpus/rules", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/corpus/rules?limit=0", "") }},
		{name: "intake rule create", okCode: 201, role: op, scope: ScopeWrite,
			ok: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/rules", "", `{"name": "连州市全部栏目", "target_codes": []}`)
			},
			bad: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/rules", "", `{"name": "无此栏目", "target_codes": ["no_such_target"]}`)
			}},
		{name: "candidates", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/corpus/candidates?status=all&limit=10", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/corpus/candidates?status=undecided", "") }},
		{name: "candidate decision", okCode: 200, role: op, scope: ScopeWrite,
			ok: func(w *corpusWorld) request {
				return postJSON(idPath("/api/v1/corpus/candidates/%d/decision", w.openCandidate()), "", `{"decision": "different"}`)
			},
			bad: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/candidates/1/decision", "", `{"decision": "merge"}`)
			},
			notFond: func(w *corpusWorld) request {
				return postJSON("/api/v1/corpus/candidates/99999/decision", "", `{"decision": "same"}`)
			}},
		{name: "release list", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/releases", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/releases?state=verified", "") }},
		{name: "release build", okCode: 201, role: op, scope: ScopeWrite,
			ok:  func(w *corpusWorld) request { return postJSON("/api/v1/releases", "", "") },
			bad: func(w *corpusWorld) request { return postJSON("/api/v1/releases", "", `{"version": "x"}`) }},
		{name: "release active", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/releases/active", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/releases/active?at=now", "") }},
		{name: "release verify", okCode: 200, role: op, scope: ScopeWrite,
			ok: func(w *corpusWorld) request {
				return postJSON("/api/v1/releases/"+w.c.Release+"/verify", "", `{"quick": true}`)
			},
			bad:     func(w *corpusWorld) request { return postJSON("/api/v1/releases/v1/verify", "", "") },
			notFond: func(w *corpusWorld) request { return postJSON("/api/v1/releases/19990101-1/verify", "", "") }},
		{name: "release activate", okCode: 200, role: adm, scope: ScopeWrite,
			ok: func(w *corpusWorld) request {
				return postJSON("/api/v1/releases/"+w.freshRelease()+"/activate", "", "")
			},
			bad:     func(w *corpusWorld) request { return postJSON("/api/v1/releases/latest/activate", "", "") },
			notFond: func(w *corpusWorld) request { return postJSON("/api/v1/releases/19990101-1/activate", "", "") }},
		{name: "release rollback", okCode: 200, role: adm, scope: ScopeWrite,
			ok:      func(w *corpusWorld) request { return postJSON("/api/v1/releases/rollback", "", "") },
			bad:     func(w *corpusWorld) request { return postJSON("/api/v1/releases/rollback", "", `{"to": "yesterday"}`) },
			notFond: func(w *corpusWorld) request { return postJSON("/api/v1/releases/rollback", "", `{"to": "19990101-1"}`) }},
		{name: "release export", okCode: 200, role: op, scope: ScopeExport,
			ok: func(w *corpusWorld) request {
				return get("/api/v1/releases/"+w.c.Release+"/export?format=passages", "")
			},
			bad:     func(w *corpusWorld) request { return get("/api/v1/releases/"+w.c.Release+"/export?format=csv", "") },
			notFond: func(w *corpusWorld) request { return get("/api/v1/releases/19990101-1/export", "") }},
		{name: "search", okCode: 200, scope: ScopeRead,
			ok:  func(w *corpusWorld) request { return get("/api/v1/search?q=%E9%80%9A%E7%9F%A5&limit=5", "") },
			bad: func(w *corpusWorld) request { return get("/api/v1/search?q=%E9%80%9A%01", "") }},
		{name: "cdx", okCode: 200, scope: ScopeRead, strayOK: true,
			ok: func(w *corpusWorld) request { return get("/cdx?url="+url.QueryEscape(w.url)+"&output=json", "") },
			bad: func(w *corpusWorld) request {
				return get("/cdx?url="+url.QueryEscape(w.url)+"&matchType=everything", "")
			}},
	}
}

// TestCorpusEndpoints runs, for every corpus operation: a success, a
// validation error, no credentials, a role too low, API keys with and
// without the scope (an operator's write key cannot activate; an admin's
// can), an absent object, and a stray query parameter.
func TestCorpusEndpoints(t *testing.T) {
	st := storetest.SQLite(t)
	w := newCorpusWorld(t, st)
	// A second verified release was active before, so a rollback always
	// has somewhere to go.
	if _, err := w.c.Service.Activate(context.Background(), w.freshRelease(), "user:tester"); err != nil {
		t.Fatal(err)
	}
	a := newCorpusAPITest(t, st, w.c.Service)
	for _, c := range corpusEndpointCases() {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			a.t = t
			role := c.role
			if role == "" {
				role = auth.RoleViewer
			}
			good, low := tokViewer, tokNoRole
			switch role {
			case auth.RoleOperator:
				good, low = tokOperator, tokViewer
			case auth.RoleAdmin:
				good, low = tokAdmin, tokOperator
			}
			a.expect(with(c.ok(w), good), c.okCode)
			a.expect(with(c.ok(w), tokAdmin), c.okCode)
			if e := a.expect(with(c.bad(w), good), http.StatusBadRequest).errorBody(t); e.Error != "invalid_request" || e.Detail == "" {
				t.Errorf("validation error body %+v, want invalid_request with a detail", e)
			}
			a.expect(with(c.ok(w), ""), http.StatusUnauthorized)
			a.expect(with(c.ok(w), tokUnknown), http.StatusUnauthorized)
			if e := a.expect(with(c.ok(w), low), http.StatusForbidden).errorBody(t); e.Error != "forbidden" {
				t.Errorf("role too low: error %q, want forbidden", e.Error)
			}
			// The operator's keys: each scope alone, then all of them.
			for _, key := range []string{tokKeyRead, tokKeyWrite, tokKeyExport, tokKeyAll} {
				want := http.StatusForbidden
				if slices.Contains(testPrincipals[key].Scopes, c.scope) && role != auth.RoleAdmin {
					want = c.okCode
				}
				a.expect(with(c.ok(w), key), want)
			}
			// An admin's write key acts on writes, not on reads or exports.
			want := http.StatusForbidden
			if c.scope == ScopeWrite {
				want = c.okCode
			}
			a.expect(with(c.ok(w), tokAdminKeyWrite), want)
			if c.notFond != nil {
				if e := a.expect(with(c.notFond(w), good), http.StatusNotFound).errorBody(t); e.Error != "not_found" {
					t.Errorf("absent object: error %q, want not_found", e.Error)
				}
				a.expect(with(c.notFond(w), ""), http.StatusUnauthorized)
				a.expect(with(c.notFond(w), low), http.StatusForbidden)
			}
			rq := c.ok(w)
			sep := "?"
			if strings.Contains(rq.target, "?") {
				sep = "&"
			}
			rq.target += sep + "colour=blue"
			if c.strayOK {
				a.expect(with(rq, good), c.okCode)
				return
			}
			if e := a.expect(with(rq, good), http.StatusBadRequest).errorBody(t); e.Error != "invalid_request" || !strings.Contains(e.Detail, "colour") {
				t.Errorf("unknown parameter: %+v, want invalid_request naming it", e)
			}
		})
	}
}

// TestCorpusRoutesWithoutCorpus: a server started without the corpus
// answers its routes 503, after the usual checks of the caller.
func TestCorpusRoutesWithoutCorpus(t *testing.T) {
	a := newAPITest(t, storetest.SQLite(t), fixedNow)
	for _, path := range []string{"/api/v1/works", "/api/v1/search?q=%E6%B0%B4", "/api/v1/releases", "/cdx?url=example.gov.test/"} {
		if e := a.expect(get(path, tokViewer), http.StatusServiceUnavailable).errorBody(t); e.Error != "unavailable" {
			t.Errorf("GET %s without the corpus: %+v", path, e)
		}
		a.expect(get(path, ""), http.StatusUnauthorized)
	}
	a.expect(postJSON("/api/v1/releases/rollback", tokOperator, ""), http.StatusForbidden)
}
