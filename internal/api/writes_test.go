package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"zhizhi/internal/export"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func audits(t *testing.T, st *store.Store, objectType string) []store.AuditEntry {
	t.Helper()
	es, err := st.ListAudit(context.Background(), store.AuditFilter{ObjectType: objectType})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestDepartmentImport: the CSV `zhizhi dept import` reads imports here
// too, with the importer recorded; a file with a bad line imports nothing.
func TestDepartmentImport(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		_ = w
		a := newAPITest(t, st, fixedNow)
		csvReq := func(body, token string) request {
			return request{method: http.MethodPost, target: "/api/v1/departments/import", token: token,
				body: []byte(body), contentType: "text/csv; charset=utf-8"}
		}
		var res importResult
		a.expect(csvReq(deptCSV, tokOperator), 200).decode(t, &res)
		// 1 is unchanged; 37 loses its short name and order (the file does
		// not carry them); 40 is new.
		if res != (importResult{Read: 3, Created: 1, Updated: 1, Unchanged: 1}) {
			t.Errorf("import result %+v", res)
		}
		d, err := st.DepartmentByID(context.Background(), 40)
		if err != nil || d.DeptName != "清远市财政局" || d.ParentDeptID == nil || *d.ParentDeptID != 1 {
			t.Fatalf("department 40 after import: %+v %v", d, err)
		}
		es := audits(t, st, "department")
		if len(es) != 1 || es[0].Actor != "user:li" || es[0].Action != "department.import" || !strings.Contains(es[0].Detail, "新建 1 个") {
			t.Fatalf("audit %+v, want one department.import by user:li", es)
		}

		// One bad line among good ones: nothing is written, every bad line
		// is named.
		bad := "dept_id,dept_name\n41,清远市审计局\nx42,坏编号\n43,\n"
		e := a.expect(csvReq(bad, tokOperator), 400).errorBody(t)
		if !strings.Contains(e.Detail, "upload:3") || !strings.Contains(e.Detail, "upload:4") || !strings.Contains(e.Detail, "nothing imported") {
			t.Errorf("bad file detail %q, want both bad lines and that nothing was imported", e.Detail)
		}
		if _, err := st.DepartmentByID(context.Background(), 41); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("department 41 of a refused file: %v, want not found", err)
		}
		if n := len(audits(t, st, "department")); n != 1 {
			t.Errorf("%d audit entries after a refused import, want still 1", n)
		}
		a.expect(request{method: http.MethodPost, target: "/api/v1/departments/import", token: tokOperator,
			body: []byte(`{"dept_id": 1}`), contentType: "application/json"}, http.StatusUnsupportedMediaType)
		a.expect(csvReq("dept_id,dept_name\n", tokOperator), 400)
	})
}

// TestBodyLimits: a CSV over 10 MiB and JSON over 1 MiB are refused with
// 413 before anything is written.
func TestBodyLimits(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	row := "50,清远市某某局\n"
	big := "dept_id,dept_name\n" + strings.Repeat(row, 10*1024*1024/len(row)+1)
	if len(big) <= 10*1024*1024 {
		t.Fatalf("test body is %d bytes, not over 10 MiB", len(big))
	}
	e := a.expect(request{method: http.MethodPost, target: "/api/v1/departments/import", token: tokOperator,
		body: []byte(big), contentType: "text/csv"}, http.StatusRequestEntityTooLarge).errorBody(t)
	if e.Error != "body_too_large" {
		t.Errorf("error %q, want body_too_large", e.Error)
	}
	// Just under the limit is read (and refused only for its duplicate ids).
	under := "dept_id,dept_name\n" + strings.Repeat(row, (10*1024*1024-20)/len(row))
	a.expect(request{method: http.MethodPost, target: "/api/v1/departments/import", token: tokOperator,
		body: []byte(under), contentType: "text/csv"}, http.StatusBadRequest)

	bigJSON := `{"category": "` + strings.Repeat("x", 1<<20) + `"}`
	a.expect(postJSON("/api/v1/export", tokOperator, bigJSON), http.StatusRequestEntityTooLarge)
	if n := len(audits(t, st, "")); n != 0 {
		t.Errorf("%d audit entries after refused bodies, want 0", n)
	}
}

// TestCrawlNow: an operator queues a crawl (202) and the request is
// recorded; a disabled target is refused with 409; a queue failure is a 500
// that does not show its cause.
func TestCrawlNow(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var acc crawlAccepted
	a.expect(postJSON(idPath("/api/v1/targets/%d/crawl", w.tgtFGW), tokKeyWrite, ""), 202).decode(t, &acc)
	if acc.TargetCode != "qyfgw_2849" || acc.Status != "queued" {
		t.Errorf("accepted %+v", acc)
	}
	if got := a.crawledIDs(); !slices.Equal(got, []int64{w.tgtFGW}) {
		t.Errorf("crawls queued %v, want [%d]", got, w.tgtFGW)
	}
	es := audits(t, st, "target")
	if len(es) != 1 || es[0].Actor != "apikey:8(li)" || es[0].Action != "target.crawl_now" || es[0].ObjectID != strconv.FormatInt(w.tgtFGW, 10) {
		t.Errorf("audit %+v", es)
	}

	e := a.expect(postJSON(idPath("/api/v1/targets/%d/crawl", w.tgtOff), tokOperator, ""), http.StatusConflict).errorBody(t)
	if e.Error != "conflict" || !strings.Contains(e.Detail, "qyfgw_off") {
		t.Errorf("disabled target: %+v", e)
	}
	a.expect(postJSON(idPath("/api/v1/targets/%d/crawl?now=1", w.tgtFGW), tokOperator, ""), 400)

	a.crawlFail = errors.New("river: insert job: pq: relation river_job does not exist")
	e = a.expect(postJSON(idPath("/api/v1/targets/%d/crawl", w.tgtFGW), tokOperator, ""), 500).errorBody(t)
	if e.Error != "internal" || strings.Contains(e.Detail, "river") {
		t.Errorf("500 body %+v leaks the cause", e)
	}
	if !strings.Contains(a.logs.String(), "river_job does not exist") {
		t.Errorf("the cause is not in the log: %s", a.logs.String())
	}
	if got := a.crawledIDs(); len(got) != 1 {
		t.Errorf("crawls queued %v after refusals, want still one", got)
	}
	if n := len(audits(t, st, "target")); n != 1 {
		t.Errorf("%d audit entries, want 1: refused requests are not recorded as done", n)
	}
}

// TestExport: the API hands out the same lines, in the same order, with
// the same cursor as `zhizhi export`, and marks what it hands out.
func TestExport(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		ctx := context.Background()

		// What `zhizhi export --no-mark` writes, line by line.
		var buf bytes.Buffer
		if _, _, err := export.Write(ctx, st, export.Options{Now: fixedNow}, &buf); err != nil {
			t.Fatal(err)
		}
		var cli []string
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			cli = append(cli, sc.Text())
		}
		if len(cli) != 4 {
			t.Fatalf("cli export has %d ready articles, want 4", len(cli))
		}

		type page struct {
			Articles   []json.RawMessage `json:"articles"`
			Count      int               `json:"count"`
			NextCursor string            `json:"next_cursor"`
			More       bool              `json:"more"`
		}
		var got []string
		since := ""
		for i := 0; ; i++ {
			body := `{"limit": 3}`
			if since != "" {
				body = `{"limit": 3, "since": "` + since + `"}`
			}
			var p page
			a.expect(postJSON("/api/v1/export", tokKeyExport, body), 200).decode(t, &p)
			for _, l := range p.Articles {
				got = append(got, string(l))
			}
			if p.Count != len(p.Articles) {
				t.Errorf("count %d for %d articles", p.Count, len(p.Articles))
			}
			since = p.NextCursor
			if !p.More {
				break
			}
			if i > 5 {
				t.Fatal("export does not end")
			}
		}
		if !slices.Equal(got, cli) {
			t.Errorf("API export lines differ from zhizhi export:\n%q\n%q", got, cli)
		}
		// Everything handed out is marked, and the export was recorded.
		var unexported articlePage
		a.expect(get("/api/v1/articles/unexported?status=ready", tokViewer), 200).decode(t, &unexported)
		if len(unexported.Items) != 0 {
			t.Errorf("ready articles still unexported after the export: %q", unexported.titles())
		}
		es := audits(t, st, "article")
		if len(es) != 2 || es[0].Actor != "apikey:9(li)" || es[0].Action != "article.export" {
			t.Errorf("audit %+v, want one article.export per page that handed out articles", es)
		}
		// Caught up: the same cursor gives nothing and keeps the cursor.
		var p page
		a.expect(postJSON("/api/v1/export", tokOperator, `{"since": "`+since+`"}`), 200).decode(t, &p)
		if p.Count != 0 || p.NextCursor != since || p.More {
			t.Errorf("caught-up page %+v, want empty with the same cursor", p)
		}
		// A cursor from the store (what `zhizhi export` prints) is accepted.
		_, cliCursor, err := st.ExportArticles(ctx, store.ExportFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		a.expect(postJSON("/api/v1/export", tokOperator, `{"since": "`+cliCursor+`", "mark": false}`), 200).decode(t, &p)
		if p.Count != 3 {
			t.Errorf("export after the first article: %d lines, want 3", p.Count)
		}
		if n := len(audits(t, st, "article")); n != 2 {
			t.Errorf("an export with mark=false was recorded as a change (%d entries)", n)
		}
		_ = w

		for _, bad := range []string{`{"since": "djF8"}`, `{"status": "done"}`, `{"site_role": "city"}`, `{"dept_id": 0}`,
			`{"limit": 501}`, `{"mark": "yes"}`, `{"unknown": 1}`, `[1]`, `{"limit": 1} {"limit": 2}`, `{`} {
			if e := a.expect(postJSON("/api/v1/export", tokOperator, bad), 400).errorBody(t); e.Error != "invalid_request" {
				t.Errorf("%s: %+v", bad, e)
			}
		}
	})
}

// TestExportNeedsJSON: a body that is not declared JSON is refused, so a
// form posted from another site cannot drive the export.
func TestExportNeedsJSON(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	rq := request{method: http.MethodPost, target: "/api/v1/export", token: tokOperator,
		body: []byte(`{"limit": 1}`), contentType: "text/plain"}
	a.expect(rq, http.StatusUnsupportedMediaType)
	rq.contentType = "application/x-www-form-urlencoded"
	rq.body = []byte("limit=1")
	a.expect(rq, http.StatusUnsupportedMediaType)
	if n := len(audits(t, st, "article")); n != 0 {
		t.Errorf("%d export entries after refused requests", n)
	}
}
