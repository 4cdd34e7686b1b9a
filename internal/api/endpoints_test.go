package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

var fixedNow = time.Date(2026, 4, 23, 2, 0, 0, 0, time.UTC)

const deptCSV = "dept_id,dept_name,parent_dept_id,state,order_id\n1,清远市人民政府,,1,1\n37,清远市发展和改革局,1,1,2\n40,清远市财政局,1,1,3\n"

// endpointCase is one operation with a request that succeeds and one that
// breaks a validation rule.
type endpointCase struct {
	name    string
	ok      func(w *world) request // a valid request, sent with a token of the needed role
	okCode  int
	bad     func(w *world) request // violates a rule: 400
	write   bool                   // needs operator (else viewer)
	scope   string                 // the API key scope it needs
	notFond func(w *world) request // an absent id: 404 (nil when the route has no id)
}

func endpointCases() []endpointCase {
	return []endpointCase{
		{name: "openapi", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/openapi.yaml", "") },
			bad: func(w *world) request { return get("/api/v1/openapi.yaml?format=json", "") }},
		{name: "site list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/sites?site_role=province_ref&enabled=true", "") },
			bad: func(w *world) request { return get("/api/v1/sites?site_role=city", "") }},
		{name: "site get", okCode: 200, scope: ScopeRead,
			ok:      func(w *world) request { return get(idPath("/api/v1/sites/%d", w.cmsSite), "") },
			bad:     func(w *world) request { return get("/api/v1/sites/abc", "") },
			notFond: func(w *world) request { return get("/api/v1/sites/9999", "") }},
		{name: "site departments", okCode: 200, scope: ScopeRead,
			ok: func(w *world) request { return get(idPath("/api/v1/sites/%d/departments", w.cmsSite), "") },
			bad: func(w *world) request {
				return get(idPath("/api/v1/sites/%d/departments?dept_binding=maybe", w.cmsSite), "")
			},
			notFond: func(w *world) request { return get("/api/v1/sites/9999/departments", "") }},
		{name: "department tree", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/departments?q=%E5%8F%91%E6%94%B9", "") },
			bad: func(w *world) request { return get("/api/v1/departments?q=", "") }},
		{name: "department import", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return request{method: http.MethodPost, target: "/api/v1/departments/import", body: []byte(deptCSV), contentType: "text/csv"}
			},
			bad: func(w *world) request {
				return request{method: http.MethodPost, target: "/api/v1/departments/import", body: []byte("dept_id,dept_name\nabc,没有编号\n"), contentType: "text/csv"}
			}},
		{name: "department get", okCode: 200, scope: ScopeRead,
			ok:      func(w *world) request { return get("/api/v1/departments/37", "") },
			bad:     func(w *world) request { return get("/api/v1/departments/-3", "") },
			notFond: func(w *world) request { return get("/api/v1/departments/4242", "") }},
		{name: "target list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get(idPath("/api/v1/targets?enabled=true&site_id=%d", w.cmsSite), "") },
			bad: func(w *world) request { return get("/api/v1/targets?enabled=yes", "") }},
		{name: "target stale", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/targets/stale", "") },
			bad: func(w *world) request { return get("/api/v1/targets/stale?days=3", "") }},
		{name: "target get", okCode: 200, scope: ScopeRead,
			ok:      func(w *world) request { return get(idPath("/api/v1/targets/%d", w.tgtFGW), "") },
			bad:     func(w *world) request { return get("/api/v1/targets/0", "") },
			notFond: func(w *world) request { return get("/api/v1/targets/9999", "") }},
		{name: "target create", okCode: 201, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				w.made++ // each success makes a new target: a code is taken once
				return postJSON("/api/v1/targets", "", fmt.Sprintf(`{"site_id": %d, "target_code": "gd_new_%d", "target_name": "省政府新栏目",
					"entry_url": "https://www.gd.gov.test/xlm/", "dept_binding": "external_ref"}`, w.provSite, w.made))
			},
			bad: func(w *world) request {
				return postJSON("/api/v1/targets", "", fmt.Sprintf(`{"site_id": %d, "target_name": "省政府新栏目",
					"entry_url": "https://elsewhere.test/xlm/", "dept_binding": "external_ref"}`, w.provSite))
			}},
		{name: "target create dry-run", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON("/api/v1/targets/dry-run", "", fmt.Sprintf(`{"site_id": %d, "target_code": "gd_preview", "target_name": "省政府新栏目",
					"entry_url": "https://www.gd.gov.test/xlm/", "dept_binding": "mapped", "local_dept_id": 37}`, w.provSite))
			},
			bad: func(w *world) request {
				return postJSON("/api/v1/targets/dry-run", "", fmt.Sprintf(`{"site_id": %d, "target_code": "gd_preview", "target_name": "省政府新栏目",
					"entry_url": "https://www.gd.gov.test/xlm/", "dept_binding": "pending"}`, w.provSite))
			}},
		{name: "target update", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return patchJSON(idPath("/api/v1/targets/%d", w.tgtNation), "", `{"expected_cadence_days": 5, "channel_name": "国务院政策文件"}`)
			},
			bad: func(w *world) request {
				return patchJSON(idPath("/api/v1/targets/%d", w.tgtNation), "", `{"expected_cadence_days": 0}`)
			},
			notFond: func(w *world) request { return patchJSON("/api/v1/targets/9999", "", `{"expected_cadence_days": 5}`) }},
		{name: "target dry-run", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/dry-run", w.tgtNation), "", `{"content_category": "政策文件"}`)
			},
			bad: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/dry-run", w.tgtNation), "", `{"schedule": "*/5 * * * *"}`)
			},
			notFond: func(w *world) request { return postJSON("/api/v1/targets/9999/dry-run", "", "") }},
		{name: "target enable", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/enable", w.tgtOff), "", `{"reason": "栏目恢复更新"}`)
			},
			bad: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/enable", w.tgtOff), "", `{"why": "x"}`)
			},
			notFond: func(w *world) request { return postJSON("/api/v1/targets/9999/enable", "", "") }},
		{name: "target disable", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request { return postJSON(idPath("/api/v1/targets/%d/disable", w.tgtCity), "", "") },
			bad: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/disable", w.tgtCity), "", `{"reason": "`+strings.Repeat("长", 501)+`"}`)
			},
			notFond: func(w *world) request { return postJSON("/api/v1/targets/9999/disable", "", "") }},
		{name: "target revert", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				// Each revert needs an override to take back: switch the
				// YAML target off first.
				svc := &target.Service{Store: w.st}
				if _, err := svc.SetEnabled(context.Background(), "gd_zcwj", false, "", "user:setup"); err != nil {
					panic(err)
				}
				return postJSON(idPath("/api/v1/targets/%d/revert", w.tgtProv), "", `{"field": "enabled"}`)
			},
			bad: func(w *world) request {
				return postJSON(idPath("/api/v1/targets/%d/revert", w.tgtProv), "", `{"field": "site_id"}`)
			},
			notFond: func(w *world) request { return postJSON("/api/v1/targets/9999/revert", "", `{"field": "enabled"}`) }},
		{name: "target provenance", okCode: 200, scope: ScopeRead,
			ok: func(w *world) request { return get(idPath("/api/v1/targets/%d/provenance", w.tgtProv), "") },
			bad: func(w *world) request {
				return get(idPath("/api/v1/targets/%d/provenance?field=enabled", w.tgtProv), "")
			},
			notFond: func(w *world) request { return get("/api/v1/targets/9999/provenance", "") }},
		{name: "target crawl now", okCode: 202, write: true, scope: ScopeWrite,
			ok:      func(w *world) request { return postJSON(idPath("/api/v1/targets/%d/crawl", w.tgtFGW), "", "") },
			bad:     func(w *world) request { return postJSON("/api/v1/targets/x1/crawl", "", "") },
			notFond: func(w *world) request { return postJSON("/api/v1/targets/9999/crawl", "", "") }},
		{name: "article list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/articles?dept_id=37&status=ready&limit=10", "") },
			bad: func(w *world) request { return get("/api/v1/articles?date_from=2026-13-01", "") }},
		{name: "article unexported", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/articles/unexported?limit=2", "") },
			bad: func(w *world) request { return get("/api/v1/articles/unexported?limit=501", "") }},
		{name: "article get", okCode: 200, scope: ScopeRead,
			ok: func(w *world) request {
				return get(idPath("/api/v1/articles/%d", w.articles["发改局规范性文件"]), "")
			},
			bad:     func(w *world) request { return get("/api/v1/articles/1.5", "") },
			notFond: func(w *world) request { return get("/api/v1/articles/99999", "") }},
		{name: "crawl log list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/crawl-logs?host=www.gd.gov.test&status=success", "") },
			bad: func(w *world) request { return get("/api/v1/crawl-logs?from=yesterday", "") }},
		{name: "column list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/columns?admin_level=city&subscribed=false", "") },
			bad: func(w *world) request { return get("/api/v1/columns?admin_level=province", "") }},
		{name: "column subscribe", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON("/api/v1/columns/subscribe", "", fmt.Sprintf(`{"ids": [%d], "defaults": {"schedule": "weekly"}}`, w.colSubscribed))
			},
			bad: func(w *world) request { return postJSON("/api/v1/columns/subscribe", "", `{"ids": []}`) }},
		{name: "column unsubscribe", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON("/api/v1/columns/unsubscribe", "", fmt.Sprintf(`{"ids": [%d]}`, w.colFree))
			},
			bad: func(w *world) request { return postJSON("/api/v1/columns/unsubscribe", "", `{"ids": [0]}`) }},
		{name: "column preview", okCode: 200, write: true, scope: ScopeWrite,
			ok:      func(w *world) request { return postJSON(idPath("/api/v1/columns/%d/preview", w.colFree), "", "") },
			bad:     func(w *world) request { return postJSON("/api/v1/columns/x/preview", "", "") },
			notFond: func(w *world) request { return postJSON("/api/v1/columns/9999/preview", "", "") }},
		{name: "export", okCode: 200, write: true, scope: ScopeExport,
			ok:  func(w *world) request { return postJSON("/api/v1/export", "", `{"limit": 2}`) },
			bad: func(w *world) request { return postJSON("/api/v1/export", "", `{"limit": 0}`) }},
		{name: "card list", okCode: 200, scope: ScopeRead,
			ok: func(w *world) request {
				return get(idPath("/api/v1/cards?grade=yellow&public=true&limit=5&site_id=%d", w.provSite), "")
			},
			bad: func(w *world) request { return get("/api/v1/cards?grade=purple", "") }},
		{name: "card get", okCode: 200, scope: ScopeRead,
			ok:      func(w *world) request { return get(idPath("/api/v1/cards/%d", w.cardYellow), "") },
			bad:     func(w *world) request { return get("/api/v1/cards/abc", "") },
			notFond: func(w *world) request { return get("/api/v1/cards/99999", "") }},
		{name: "card rewrite", okCode: 200, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON(idPath("/api/v1/cards/%d/rewrite", w.cardGreen), "", `{"summary": "2026年3月5日印发粤府〔2026〕5号。"}`)
			},
			bad: func(w *world) request {
				return postJSON(idPath("/api/v1/cards/%d/rewrite", w.cardGreen), "", `{"text": "x"}`)
			},
			notFond: func(w *world) request { return postJSON("/api/v1/cards/99999/rewrite", "", `{"summary": "x"}`) }},
		{name: "takedown list", okCode: 200, scope: ScopeRead,
			ok:  func(w *world) request { return get("/api/v1/takedowns?open=true", "") },
			bad: func(w *world) request { return get("/api/v1/takedowns?open=yes", "") }},
		{name: "takedown record", okCode: 201, write: true, scope: ScopeWrite,
			ok: func(w *world) request {
				return postJSON("/api/v1/takedowns", "", fmt.Sprintf(`{"site_id": %d, "scope": "urls",
					"urls": ["https://www.gd.gov.test/zcwj/none.html"], "requester": "广东省人民政府办公厅"}`, w.provSite))
			},
			bad: func(w *world) request {
				return postJSON("/api/v1/takedowns", "", fmt.Sprintf(`{"site_id": %d, "scope": "urls",
					"urls": ["https://elsewhere.test/a.html"], "requester": "广东省人民政府办公厅"}`, w.provSite))
			}},
		{name: "takedown get", okCode: 200, scope: ScopeRead,
			ok:      func(w *world) request { return get(idPath("/api/v1/takedowns/%d", w.openTakedown(w.provSite)), "") },
			bad:     func(w *world) request { return get("/api/v1/takedowns/0", "") },
			notFond: func(w *world) request { return get("/api/v1/takedowns/9999", "") }},
		{name: "takedown freeze", okCode: 200, write: true, scope: ScopeWrite,
			// Each success carries out a request of its own: one is carried out once.
			ok: func(w *world) request {
				return postJSON(idPath("/api/v1/takedowns/%d/freeze", w.openTakedown(w.nateSite)), "", "")
			},
			bad:     func(w *world) request { return postJSON("/api/v1/takedowns/x1/freeze", "", "") },
			notFond: func(w *world) request { return postJSON("/api/v1/takedowns/9999/freeze", "", "") }},
	}
}

func with(rq request, token string) request { rq.token = token; return rq }

// TestEndpoints runs, for every operation: a success, a validation error,
// no credentials, a role too low, API keys with and without the scope, and
// an absent id.
func TestEndpoints(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	seedCards(t, w)
	a := newAPITest(t, st, fixedNow)
	cases := endpointCases()
	// The corpus's routes have their cases in corpus_endpoints_test.go,
	// over a populated corpus.
	if n := len(cases) + len(corpusEndpointCases()); n != len((&handler{}).routes()) {
		t.Fatalf("%d endpoint cases for %d routes: every route needs its case", n, len((&handler{}).routes()))
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			a.t = t
			good, low := tokViewer, tokNoRole
			if c.write {
				good, low = tokOperator, tokViewer
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
			for _, key := range []string{tokKeyRead, tokKeyWrite, tokKeyExport} {
				want := http.StatusForbidden
				if testPrincipals[key].Scopes[0] == c.scope {
					want = c.okCode
				}
				a.expect(with(c.ok(w), key), want)
			}
			a.expect(with(c.ok(w), tokKeyAll), c.okCode)
			if c.notFond != nil {
				if e := a.expect(with(c.notFond(w), good), http.StatusNotFound).errorBody(t); e.Error != "not_found" {
					t.Errorf("absent id: error %q, want not_found", e.Error)
				}
				// An absent id is refused before it is looked up.
				a.expect(with(c.notFond(w), ""), http.StatusUnauthorized)
				a.expect(with(c.notFond(w), low), http.StatusForbidden)
			}
		})
	}
}

// TestEveryRouteRefusesStrayQuery: a query parameter a route does not take
// is refused by every route (a misspelt filter never silently matches
// everything), and a control character in a text filter is refused rather
// than cutting the filter short.
func TestEveryRouteRefusesStrayQuery(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	seedCards(t, w)
	a := newAPITest(t, st, fixedNow)
	for _, c := range endpointCases() {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			a.t = t
			rq := c.ok(w)
			sep := "?"
			if strings.Contains(rq.target, "?") {
				sep = "&"
			}
			rq.target += sep + "colour=blue"
			good := tokViewer
			if c.write {
				good = tokOperator
			}
			if e := a.expect(with(rq, good), http.StatusBadRequest).errorBody(t); e.Error != "invalid_request" || !strings.Contains(e.Detail, "colour") {
				t.Errorf("unknown parameter: %+v, want invalid_request naming it", e)
			}
		})
	}
	a.t = t
	for _, path := range []string{"/api/v1/cards?q=%00zzzz", "/api/v1/departments?q=%00zzzz", "/api/v1/articles?publisher=%1b%5b31m",
		"/api/v1/crawl-logs?host=a%c2%85b", "/api/v1/cards?q=%ff"} {
		if e := a.expect(get(path, tokViewer), http.StatusBadRequest).errorBody(t); e.Error != "invalid_request" || !strings.Contains(e.Detail, "control character") {
			t.Errorf("GET %s: %+v, want invalid_request about a control character", path, e)
		}
	}
}
