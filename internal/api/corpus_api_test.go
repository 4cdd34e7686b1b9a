package api

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/cite/citetest"
	"zhizhi/internal/corpus/warc"
	"zhizhi/internal/npmtest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// decodeAs serves rq, expects status and decodes the JSON answer.
func decodeAs[T any](a *apiTest, rq request, status int) T {
	a.t.Helper()
	var v T
	a.expect(rq, status).decode(a.t, &v)
	return v
}

// TestCorpusAPI drives the corpus through the API on both dialects:
// works, trace, text, quarantine, duplicates, search, citations,
// exports, /cdx, and last (it changes what is active) the release
// lifecycle.
func TestCorpusAPI(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newCorpusWorld(t, st)
		a := newCorpusAPITest(t, st, w.c.Service)
		run := func(name string, fn func(t *testing.T)) {
			t.Run(name, func(t *testing.T) { a.t = t; fn(t) })
		}
		run("works", func(t *testing.T) { testWorks(t, a, w) })
		run("search", func(t *testing.T) { testSearch(t, a, w) })
		run("citations", func(t *testing.T) { testCitations(t, a, w) })
		run("export", func(t *testing.T) { testExport(t, a, w) })
		run("wacz", func(t *testing.T) { testWACZ(t, a, w) })
		run("cdx", func(t *testing.T) { testCDX(t, a, w) })
		run("candidates", func(t *testing.T) { testCandidates(t, a, w) })
		run("releases", func(t *testing.T) { testReleases(t, a, w) })
	})
}

func testWorks(t *testing.T, a *apiTest, w *corpusWorld) {
	ctx := context.Background()
	var all []string
	if err := w.st.EachCorpusWork(ctx, func(r *store.CorpusWorkRow) error { all = append(all, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != w.c.Intake.NewWorks {
		t.Fatalf("the corpus has %d works, intake made %d", len(all), w.c.Intake.NewWorks)
	}
	// Pages of 2 visit every work once, in id order.
	var seen []string
	path := "/api/v1/works?limit=2"
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("paging does not end")
		}
		p := decodeAs[page[workView]](a, get(path, tokViewer), http.StatusOK)
		for _, it := range p.Items {
			seen = append(seen, it.ID)
		}
		if p.NextCursor == nil {
			break
		}
		path = "/api/v1/works?limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if !slices.Equal(seen, all) {
		t.Fatalf("paging saw %d works %v, the corpus holds %d %v", len(seen), seen, len(all), all)
	}
	a.expect(get("/api/v1/works?cursor=abc", tokViewer), http.StatusBadRequest)
	if e := a.expect(get("/api/v1/works?site=nowhere", tokViewer), http.StatusBadRequest).errorBody(t); !strings.Contains(e.Detail, "nowhere") {
		t.Errorf("unknown site: %+v", e)
	}

	// The reference site's works are held back for their rights, and say so.
	ref := decodeAs[page[workView]](a, get("/api/v1/works?site=gov_ref&limit=500", tokViewer), http.StatusOK)
	if len(ref.Items) == 0 {
		t.Fatal("no works of gov_ref")
	}
	for _, it := range ref.Items {
		if it.SiteCode != "gov_ref" || !strings.Contains(strings.Join(it.HeldBack, "；"), "权利") {
			t.Errorf("gov_ref work %s: site %s, held back %v; want held for its rights", it.ID, it.SiteCode, it.HeldBack)
		}
	}

	// One work: its revision, aliases and the active release's revision.
	d := decodeAs[workDetailView](a, get("/api/v1/works/"+w.released, tokViewer), http.StatusOK)
	if d.ActiveRelease == nil || d.ActiveRelease.Release != w.c.Release || d.ActiveRelease.Rev != 1 || len(d.HeldBack) != 0 {
		t.Fatalf("released work: in %+v, held %v; want revision 1 in %s, not held", d.ActiveRelease, d.HeldBack, w.c.Release)
	}
	if !slices.Contains(d.Aliases, fmt.Sprintf("article:%d", w.article)) || d.Revision.Rev != 1 || d.Revision.QA != "pass" {
		t.Fatalf("released work: aliases %v, revision %+v", d.Aliases, d.Revision)
	}
	if q := decodeAs[page[workView]](a, get("/api/v1/works?q="+url.QueryEscape(d.Title), tokViewer), http.StatusOK); !slices.ContainsFunc(q.Items, func(v workView) bool { return v.ID == w.released }) {
		t.Errorf("q=%s does not find %s", d.Title, w.released)
	}
	h := decodeAs[workDetailView](a, get("/api/v1/works/"+w.held, tokViewer), http.StatusOK)
	if h.ActiveRelease != nil || len(h.HeldBack) == 0 {
		t.Fatalf("held work: in %+v, held %v", h.ActiveRelease, h.HeldBack)
	}

	// The trace: every step, in order, each with its evidence.
	tr := decodeAs[traceView](a, get("/api/v1/works/"+w.released+"/trace", tokViewer), http.StatusOK)
	var steps []string
	ev := map[string][]corpus.Evidence{}
	for _, s := range tr.Steps {
		steps = append(steps, s.Step)
		ev[s.Step] = s.Evidence
		if s.State != "ok" {
			t.Errorf("released work: step %s is %s (%s)", s.Step, s.State, s.Detail)
		}
	}
	if want := []string{"source", "crawl", "adapter", "snapshot", "rights", "qa", "review", "release"}; !slices.Equal(steps, want) {
		t.Fatalf("trace steps %v, want %v", steps, want)
	}
	snap, err := w.st.CorpusSnapshot(ctx, d.Revision.SnapshotID)
	if err != nil || snap.CrawlLogID == nil {
		t.Fatalf("snapshot %s: %v, crawl log %v", d.Revision.SnapshotID, err, snap)
	}
	has := func(step, kind, ref string) bool {
		return slices.ContainsFunc(ev[step], func(e corpus.Evidence) bool { return e.Kind == kind && (ref == "" || e.Ref == ref) })
	}
	if !has("crawl", "crawl_log", fmt.Sprint(*snap.CrawlLogID)) || !has("crawl", "ledger_day", "") ||
		!has("snapshot", "warc_record", "") || !has("snapshot", "blob", snap.WARCPath) || !has("release", "release", w.c.Release) {
		t.Fatalf("trace evidence %+v", ev)
	}
	if len(tr.Events) == 0 || tr.Events[0].Kind != "intake" {
		t.Fatalf("provenance %+v, want the intake first", tr.Events)
	}
	htr := decodeAs[traceView](a, get("/api/v1/works/"+w.held+"/trace", tokViewer), http.StatusOK)
	for _, s := range htr.Steps {
		if s.Step == "rights" && s.State != "held" {
			t.Errorf("held work's rights step is %s", s.State)
		}
	}

	// The text comes from the active release; a held work is not in it.
	rel, err := w.c.Service.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := rel.Work(w.released)
	want, err := rel.Text(e)
	if err != nil {
		t.Fatal(err)
	}
	txt := decodeAs[workTextView](a, get("/api/v1/works/"+w.released+"/text", tokViewer), http.StatusOK)
	if txt.Text != want || txt.Release != w.c.Release || txt.Chars != utf8.RuneCountInString(want) || txt.Rev != 1 {
		t.Fatalf("text: release %s rev %d, %d chars; want the release's %d chars", txt.Release, txt.Rev, txt.Chars, utf8.RuneCountInString(want))
	}
	nf := a.expect(get("/api/v1/works/"+w.held+"/text", tokViewer), http.StatusNotFound).errorBody(t)
	if !strings.Contains(nf.Detail, "not in release "+w.c.Release) || !strings.Contains(nf.Detail, "权利") {
		t.Fatalf("held work's text: %+v, want a 404 that says it is not in the release and why", nf)
	}
	a.expect(get("/api/v1/works/"+w.released+"/text?release=19990101-1", tokViewer), http.StatusNotFound)

	// Quarantine: needs a reason, is recorded, and keeps the work out of the
	// next release — the active one still holds it (releases never change).
	a.expect(postJSON("/api/v1/works/"+w.released+"/status", tokOperator, `{"status": "quarantined", "reason": "  "}`), http.StatusBadRequest)
	q := decodeAs[workDetailView](a, postJSON("/api/v1/works/"+w.released+"/status", tokOperator,
		`{"status": "quarantined", "reason": "来源页面内容待核实"}`), http.StatusOK)
	if q.Status != "quarantined" || !strings.Contains(strings.Join(q.HeldBack, "；"), "来源页面内容待核实") {
		t.Fatalf("quarantined: %s, held %v", q.Status, q.HeldBack)
	}
	a.expect(postJSON("/api/v1/works/"+w.released+"/status", tokOperator, `{"status": "quarantined", "reason": "再次"}`), http.StatusConflict)
	a.expect(get("/api/v1/works/"+w.released+"/text", tokViewer), http.StatusOK)
	audit, err := w.st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_work", ObjectID: w.released})
	if err != nil || len(audit) == 0 || audit[0].Actor != "user:li" || audit[0].Detail != "来源页面内容待核实" {
		t.Fatalf("audit of the quarantine: %+v %v", audit, err)
	}
	back := decodeAs[workDetailView](a, postJSON("/api/v1/works/"+w.released+"/status", tokOperator, `{"status": "active"}`), http.StatusOK)
	if back.Status != "active" || len(back.HeldBack) != 0 {
		t.Fatalf("let back in: %s, held %v", back.Status, back.HeldBack)
	}

	// Intake through the API: a missing article is listed, a bad target refused.
	sum := decodeAs[intakeSummaryView](a, postJSON("/api/v1/corpus/intake", tokOperator,
		fmt.Sprintf(`{"article_ids": [%d, 999999]}`, w.article)), http.StatusOK)
	if sum.Looked != 2 || sum.Unchanged != 1 || len(sum.Failures) != 1 || sum.Failures[0].ArticleID != 999999 {
		t.Fatalf("intake of a known and a missing article: %+v", sum)
	}
	if e := a.expect(postJSON("/api/v1/corpus/intake", tokOperator, `{"target_codes": ["no_such_target"]}`), http.StatusBadRequest).errorBody(t); !strings.Contains(e.Detail, "no_such_target") {
		t.Fatalf("unknown target: %+v", e)
	}
	if audit, err := w.st.ListAudit(ctx, store.AuditFilter{Actor: "user:li", Limit: 5}); err != nil || !slices.ContainsFunc(audit, func(e store.AuditEntry) bool { return e.Action == "corpus.intake" }) {
		t.Fatalf("the intake is not in the audit trail: %+v %v", audit, err)
	}
	rule := decodeAs[intakeRuleView](a, postJSON("/api/v1/corpus/rules", tokOperator, `{"name": "连州全部", "target_codes": []}`), http.StatusCreated)
	rules := decodeAs[list[intakeRuleView]](a, get("/api/v1/corpus/rules", tokViewer), http.StatusOK)
	if !rule.Enabled || rule.CreatedBy != "user:li" || !slices.ContainsFunc(rules.Items, func(r intakeRuleView) bool { return r.ID == rule.ID }) {
		t.Fatalf("rule %+v not listed in %+v", rule, rules)
	}
}

// testSearch: one- and two-character queries find exactly what a
// substring scan of the active release finds; hostile queries are 400s
// with the Chinese message, never a failure of the server.
func testSearch(t *testing.T, a *apiTest, w *corpusWorld) {
	rel, err := w.c.Service.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type doc struct{ title, text, docNo string }
	docs := map[string]doc{}
	for i := range rel.Entries {
		e := &rel.Entries[i]
		txt, err := rel.Text(e)
		if err != nil {
			t.Fatal(err)
		}
		docs[e.ID] = doc{e.Title, txt, e.DocNo}
	}
	searchAll := func(q string) (map[string]bool, int) {
		got := map[string]bool{}
		total := -1
		for off := 0; ; off += 100 {
			res := decodeAs[searchResultView](a, get(fmt.Sprintf("/api/v1/search?q=%s&limit=100&offset=%d", url.QueryEscape(q), off), tokViewer), http.StatusOK)
			if res.Release != rel.Version {
				t.Fatalf("search answered from %s, the active release is %s", res.Release, rel.Version)
			}
			total = res.Total
			for _, h := range res.Hits {
				got[h.ID] = true
				for _, sp := range h.Highlights {
					if s := string([]rune(h.Snippet)[sp[0]:sp[1]]); s != q {
						t.Errorf("search %q: hit %s highlights %q in its snippet", q, h.ID, s)
					}
				}
				for _, sp := range h.TitleHighlights {
					if s := string([]rune(h.Title)[sp[0]:sp[1]]); s != q {
						t.Errorf("search %q: hit %s highlights %q in its title", q, h.ID, s)
					}
				}
			}
			if len(res.Hits) < 100 {
				return got, total
			}
		}
	}
	found := map[int]int{} // hits by query length
	for _, q := range []string{"政", "市", "水", "年", "通知", "发展", "医保", "管理", "工作"} {
		want := map[string]bool{}
		for id, d := range docs {
			if strings.Contains(d.title, q) || strings.Contains(d.text, q) || strings.Contains(d.docNo, q) {
				want[id] = true
			}
		}
		got, total := searchAll(q)
		if !maps.Equal(got, want) || total != len(want) {
			t.Errorf("search %q: %d hits (total %d), a substring scan of release %s finds %d", q, len(got), total, rel.Version, len(want))
		}
		found[utf8.RuneCountInString(q)] += len(want)
	}
	if found[1] == 0 || found[2] == 0 {
		t.Fatalf("the release matches no one-character (%d) or no two-character (%d) query: the comparison shows nothing", found[1], found[2])
	}

	// Hostile queries: refused with the index's Chinese message, or
	// answered like any query, never a server failure.
	for _, c := range []struct{ query, detail string }{
		{"q=%E9%80%9A%00%E7%9F%A5", "控制字符"},
		{"q=" + strings.Repeat("%E6%B0%B4", 201), "过长"},
		{"from=2024-13-01", "格式不对"},
		{"from=2025-01-01&to=2024-01-01", "晚于"},
		{"docno=%E3%80%94%E3%80%95", "不含文字或数字"},
		{"q=%ff%fe", "UTF-8"},
		{"limit=0", "每页条数"},
		{"limit=1e3", "每页条数"},
		{"offset=-1", "起始位置"},
	} {
		e := a.expect(get("/api/v1/search?"+c.query, tokViewer), http.StatusBadRequest).errorBody(t)
		if e.Error != "invalid_request" || !strings.Contains(e.Detail, c.detail) {
			t.Errorf("search ?%s: %+v, want a 400 saying %q", c.query, e, c.detail)
		}
	}
	for _, q := range []string{`"通知" OR *`, `NEAR(通知 发展)`, `'; DROP TABLE doc; --`, `通知^2 {tu} : "政"`, `%_\`} {
		res := decodeAs[searchResultView](a, get("/api/v1/search?q="+url.QueryEscape(q), tokViewer), http.StatusOK)
		for _, h := range res.Hits {
			if !docsHaveAllTerms(docs[h.ID].title+"\n"+docs[h.ID].text+"\n"+docs[h.ID].docNo, q) {
				t.Errorf("search %q: hit %s does not hold every term", q, h.ID)
			}
		}
	}
	if got, _ := searchAll("通知"); len(got) == 0 {
		t.Fatal("after the hostile queries, 通知 finds nothing")
	}
}

// docsHaveAllTerms: every letter-or-digit run of q's terms occurs in s,
// case folded (the index's documented matching).
func docsHaveAllTerms(s, q string) bool {
	norm := func(x string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(x) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	ns := norm(s)
	for _, term := range strings.Fields(q) {
		if t := norm(term); t != "" && !strings.Contains(ns, t) {
			return false
		}
	}
	return true
}

// testCitations: the three formats, their media types, each naming the
// release; the CSL-JSON valid against the official schema.
func testCitations(t *testing.T, a *apiTest, w *corpusWorld) {
	base := "/api/v1/works/" + w.released + "/citation"
	csl := a.expect(get(base, tokViewer), http.StatusOK)
	if ct := csl.header.Get("Content-Type"); ct != "application/vnd.citationstyles.csl+json" {
		t.Fatalf("csl-json content type %q", ct)
	}
	var items []struct {
		ID     string         `json:"id"`
		Type   string         `json:"type"`
		Title  string         `json:"title"`
		URL    string         `json:"URL"`
		Custom map[string]any `json:"custom"`
	}
	csl.decode(t, &items)
	if len(items) != 1 || items[0].Custom["zhizhi_release"] != w.c.Release || !strings.Contains(items[0].ID, w.c.Release) ||
		items[0].Custom["zhizhi_work_id"] != w.released || items[0].URL != w.url {
		t.Fatalf("CSL-JSON %s does not name work %s of release %s at %s", csl.body, w.released, w.c.Release, w.url)
	}
	if r := citetest.Validate(t, csl.body)[0]; !r.Valid {
		t.Fatalf("the API's CSL-JSON is not valid against csl-data.json: %+v\n%s", r.Errors, csl.body)
	}

	gb := a.expect(get(base+"?format=gbt7714", tokViewer), http.StatusOK)
	if ct := gb.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || gb.header.Get("X-Zhizhi-Release") != w.c.Release {
		t.Fatalf("gbt7714: content type %q, release header %q", ct, gb.header.Get("X-Zhizhi-Release"))
	}
	if s := string(gb.body); !strings.Contains(s, items[0].Title) || !strings.Contains(s, w.url) || !strings.Contains(s, "/OL]") {
		t.Fatalf("GB/T 7714 reference %q lacks the title, URL or [·/OL]", s)
	}
	bib := a.expect(get(base+"?format=bibtex", tokViewer), http.StatusOK)
	if ct := bib.header.Get("Content-Type"); ct != "application/x-bibtex; charset=utf-8" {
		t.Fatalf("bibtex content type %q", ct)
	}
	if s := string(bib.body); !strings.Contains(s, "zhizhi_release = {"+w.c.Release+"}") || !strings.HasPrefix(s, "@") {
		t.Fatalf("BibTeX %q does not name release %s", s, w.c.Release)
	}
	if e := a.expect(get("/api/v1/works/"+w.held+"/citation", tokViewer), http.StatusNotFound).errorBody(t); !strings.Contains(e.Detail, "not in release") {
		t.Fatalf("citation of a held work: %+v", e)
	}
}

type exportedWork struct {
	ID          string          `json:"id"`
	Rev         int             `json:"rev"`
	Title       string          `json:"title"`
	URL         string          `json:"url"`
	Site        string          `json:"site"`
	SiteName    string          `json:"site_name"`
	DocNo       string          `json:"doc_no"`
	Publisher   string          `json:"publisher"`
	PublishDate string          `json:"publish_date"`
	Attributes  json.RawMessage `json:"attributes"`
	Text        string          `json:"text"`
	TextSHA256  string          `json:"text_sha256"`
	Chars       int             `json:"chars"`
	Citation    struct {
		CSL     map[string]any `json:"csl"`
		GBT7714 string         `json:"gbt7714"`
	} `json:"citation"`
	Provenance struct {
		Release    string `json:"release"`
		IntakeAt   string `json:"intake_at"`
		FetchedAt  string `json:"fetched_at"`
		SnapshotID string `json:"snapshot_id"`
		CrawlLogID *int64 `json:"crawl_log_id"`
		Access     string `json:"access"`
		Rights     string `json:"rights"`
	} `json:"provenance"`
}

type exportedPassage struct {
	ID       string `json:"id"`
	Work     string `json:"work"`
	Rev      int    `json:"rev"`
	Release  string `json:"release"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Text     string `json:"text"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Citation string `json:"citation"`
}

func jsonLines[T any](t *testing.T, body []byte) []T {
	t.Helper()
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("export line %d %.300s: %v", len(out)+1, sc.Text(), err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testExport: the works and passages JSON Lines round trip.
func testExport(t *testing.T, a *apiTest, w *corpusWorld) {
	ctx := context.Background()
	rel, err := w.c.Service.Open(ctx, w.c.Release)
	if err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/releases/" + w.c.Release + "/export"
	res := a.expect(get(base, tokKeyExport), http.StatusOK)
	if ct := res.header.Get("Content-Type"); ct != "application/x-ndjson" || !strings.Contains(res.header.Get("Content-Disposition"), w.c.Release) {
		t.Fatalf("works export: content type %q, disposition %q", ct, res.header.Get("Content-Disposition"))
	}
	works := jsonLines[exportedWork](t, res.body)
	if len(works) != len(rel.Entries) || len(works) == 0 {
		t.Fatalf("works export has %d lines, release %s %d works", len(works), w.c.Release, len(rel.Entries))
	}
	texts := map[string]string{}
	for i, x := range works {
		e := &rel.Entries[i]
		want, err := rel.Text(e)
		if err != nil {
			t.Fatal(err)
		}
		texts[x.ID] = want
		snap, err := w.st.CorpusSnapshot(ctx, e.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(x.Text))
		switch {
		case x.ID != e.ID || x.Rev != e.Rev || x.Text != want || hex.EncodeToString(sum[:]) != x.TextSHA256 || x.Chars != utf8.RuneCountInString(want):
			t.Fatalf("export line %d: %s rev %d, %d chars; the release has %s rev %d", i, x.ID, x.Rev, x.Chars, e.ID, e.Rev)
		case x.Citation.CSL["id"] == nil || !strings.Contains(x.Citation.CSL["id"].(string), w.c.Release) || x.Citation.GBT7714 == "":
			t.Fatalf("export line %d: citation %+v does not name release %s", i, x.Citation, w.c.Release)
		case x.Provenance.Release != w.c.Release || x.Provenance.SnapshotID != e.Snapshot || x.Provenance.IntakeAt == "" ||
			x.Provenance.CrawlLogID == nil || snap.CrawlLogID == nil || *x.Provenance.CrawlLogID != *snap.CrawlLogID:
			t.Fatalf("export line %d: provenance %+v, snapshot %s crawl log %v", i, x.Provenance, e.Snapshot, snap.CrawlLogID)
		case x.Site != e.Site || x.DocNo != e.DocNo || x.Provenance.Access != "full" || x.Provenance.Rights != "public_info":
			t.Fatalf("export line %d: site %s, 文号 %q, access %s, rights %s", i, x.Site, x.DocNo, x.Provenance.Access, x.Provenance.Rights)
		case !json.Valid(x.Attributes) || x.Attributes[0] != '{':
			t.Fatalf("export line %d: attributes %s", i, x.Attributes)
		}
	}

	// Passages: their offsets slice the canonical text exactly, every
	// character of the text that is not white space is in one, none is
	// longer than 500 characters, and the ids are the same in a second
	// export.
	p1 := a.expect(get(base+"?format=passages", tokOperator), http.StatusOK)
	p2 := a.expect(get(base+"?format=passages", tokKeyExport), http.StatusOK)
	if !bytes.Equal(p1.body, p2.body) {
		t.Fatal("two exports of the same release's passages differ")
	}
	ps := jsonLines[exportedPassage](t, p1.body)
	covered := map[string][]bool{}
	ids := map[string]bool{}
	for _, p := range ps {
		txt, ok := texts[p.Work]
		if !ok {
			t.Fatalf("passage %s of a work not in the release", p.ID)
		}
		rs := []rune(txt)
		if p.Start < 0 || p.End > len(rs) || p.Start >= p.End || p.End-p.Start > 500 {
			t.Fatalf("passage %s: [%d, %d) of %d characters", p.ID, p.Start, p.End, len(rs))
		}
		if string(rs[p.Start:p.End]) != p.Text {
			t.Fatalf("passage %s: its text is not characters %d–%d of the work's text", p.ID, p.Start, p.End)
		}
		if want := fmt.Sprintf("%s:%d:%d-%d", p.Work, p.Rev, p.Start, p.End); p.ID != want || ids[p.ID] {
			t.Fatalf("passage id %q, want %q once", p.ID, want)
		}
		ids[p.ID] = true
		if p.Release != w.c.Release || !strings.Contains(p.Citation, "/OL]") {
			t.Fatalf("passage %s: release %s, citation %q", p.ID, p.Release, p.Citation)
		}
		if covered[p.Work] == nil {
			covered[p.Work] = make([]bool, len(rs))
		}
		for i := p.Start; i < p.End; i++ {
			if covered[p.Work][i] {
				t.Fatalf("passage %s overlaps another at character %d", p.ID, i)
			}
			covered[p.Work][i] = true
		}
	}
	for id, txt := range texts {
		for i, r := range []rune(txt) {
			if !unicode.IsSpace(r) && (covered[id] == nil || !covered[id][i]) {
				t.Fatalf("work %s: character %d (%q) is in no passage", id, i, r)
			}
		}
	}
	a.expect(get("/api/v1/releases/"+w.c.Release+"/export?format=works", tokKeyRead), http.StatusForbidden)
}

// testWACZ: the release's snapshots as a WACZ whose datapackage pins every
// file, whose WARCs verify and are read by warcio.js.
func testWACZ(t *testing.T, a *apiTest, w *corpusWorld) {
	rel, err := w.c.Service.Open(context.Background(), w.c.Release)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/releases/" + w.c.Release + "/export?format=wacz"
	res := a.expect(get(path, tokKeyExport), http.StatusOK)
	if ct := res.header.Get("Content-Type"); ct != "application/zip" || !strings.HasSuffix(res.header.Get("Content-Disposition"), `.wacz"`) {
		t.Fatalf("wacz: content type %q, disposition %q", ct, res.header.Get("Content-Disposition"))
	}
	if again := a.expect(get(path, tokOperator), http.StatusOK); !bytes.Equal(res.body, again.body) {
		t.Fatal("two WACZ exports of one release differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(res.body), int64(len(res.body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = b
	}
	var pkg struct {
		Profile   string `json:"profile"`
		Resources []struct {
			Path  string `json:"path"`
			Hash  string `json:"hash"`
			Bytes int64  `json:"bytes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(files["datapackage.json"], &pkg); err != nil || pkg.Profile != "data-package" {
		t.Fatalf("datapackage.json: %v %s", err, files["datapackage.json"])
	}
	shaOf := func(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }
	var digest struct{ Path, Hash string }
	if err := json.Unmarshal(files["datapackage-digest.json"], &digest); err != nil || digest.Hash != shaOf(files["datapackage.json"]) {
		t.Fatalf("datapackage-digest.json %+v does not pin datapackage.json (%s): %v", digest, shaOf(files["datapackage.json"]), err)
	}
	dir := t.TempDir()
	var warcs []string
	listed := map[string]bool{}
	for _, r := range pkg.Resources {
		b, ok := files[r.Path]
		if !ok || shaOf(b) != r.Hash || int64(len(b)) != r.Bytes {
			t.Fatalf("datapackage resource %s (%s, %d bytes) does not match the file in the WACZ (present %v)", r.Path, r.Hash, r.Bytes, ok)
		}
		listed[r.Path] = true
		if strings.HasPrefix(r.Path, "archive/") {
			if _, err := warc.Verify(bytes.NewReader(b)); err != nil {
				t.Fatalf("%s: %v", r.Path, err)
			}
			p := filepath.Join(dir, filepath.Base(r.Path))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			warcs = append(warcs, p)
		}
	}
	snaps := map[string]bool{}
	for _, e := range rel.Entries {
		snaps[e.Snapshot] = true
	}
	if len(warcs) != len(snaps) || !listed["indexes/index.cdxj"] || !listed["pages/pages.jsonl"] {
		t.Fatalf("the WACZ lists %d WARCs for %d snapshots, resources %v", len(warcs), len(snaps), listed)
	}
	pages := strings.Split(strings.TrimSpace(string(files["pages/pages.jsonl"])), "\n")
	if len(pages) != len(rel.Entries)+1 {
		t.Fatalf("pages.jsonl has %d lines, want a header and one per work (%d)", len(pages), len(rel.Entries))
	}
	urls := map[string]bool{}
	for _, c := range warcioRead(t, warcs...) {
		if c.Error != "" || len(c.Problems) > 0 || c.Records == 0 {
			t.Fatalf("warcio.js read a WARC of the WACZ: %d records, problems %v, error %s", c.Records, c.Problems, c.Error)
		}
		for i, typ := range c.Types {
			if typ == "response" {
				urls[c.Targets[i]] = true
			}
		}
	}
	for _, e := range rel.Entries {
		if !urls[e.URL] {
			t.Fatalf("warcio.js found no response record of work %s (%s)", e.ID, e.URL)
		}
	}
}

// warcioVersion is the npm warcio (warcio.js) the WACZ's WARCs are read
// with, test-only: an independent reader that recomputes payload digests.
const warcioVersion = "2.4.11"

type warcioResult struct {
	Records  int      `json:"records"`
	Types    []string `json:"types"`
	Targets  []string `json:"targets"`
	Problems []string `json:"problems"`
	Error    string   `json:"error"`
}

// warcioRead runs testdata/warcio_read.mjs over WARC files with warcio.js
// installed once into the user's cache (the house pattern). Without node
// and npm the test is skipped, except under CI=true.
func warcioRead(t *testing.T, paths ...string) []warcioResult {
	t.Helper()
	prefix := npmtest.Install(t, "warcio@"+warcioVersion)
	entry := npmtest.FileURL(npmtest.Path(t, prefix, "warcio", "dist", "index.js"))
	out := npmtest.Node(t, npmtest.Script{Path: filepath.Join("testdata", "warcio_read.mjs"), Args: append([]string{entry}, paths...)})
	var res []warcioResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(paths) {
		t.Fatalf("warcio_read.mjs answered %s: %v", out, err)
	}
	return res
}

// testCDX: exact and prefix queries over the active release's snapshots
// answer the captures they should, in the Wayback CDX server's form.
func testCDX(t *testing.T, a *apiTest, w *corpusWorld) {
	ctx := context.Background()
	rel, err := w.c.Service.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(w.url)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := w.st.CorpusSnapshot(ctx, rel.Entries[0].Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	// Exact: the work's page, captured once.
	var rows [][]string
	a.expect(get("/cdx?output=json&fl=original,statuscode,filename&url="+url.QueryEscape(w.url), tokKeyRead), http.StatusOK).decode(t, &rows)
	if len(rows) != 2 || !slices.Equal(rows[0], []string{"original", "statuscode", "filename"}) ||
		!slices.Equal(rows[1], []string{w.url, "200", snap.WARCPath}) {
		t.Fatalf("exact query of %s: %v, want one capture in %s", w.url, rows, snap.WARCPath)
	}
	// Prefix: every work of the release on that host, one line each.
	onHost := map[string]bool{}
	for _, e := range rel.Entries {
		if eu, err := url.Parse(e.URL); err == nil && eu.Host == u.Host {
			onHost[e.Snapshot] = true
		}
	}
	if len(onHost) < 2 {
		t.Fatalf("only %d works of the release on %s: a prefix query shows little", len(onHost), u.Host)
	}
	plain := a.expect(get("/cdx?matchType=prefix&url="+url.QueryEscape(u.Host+"/"), tokViewer), http.StatusOK)
	lines := strings.Split(strings.TrimSpace(string(plain.body)), "\n")
	if ct := plain.header.Get("Content-Type"); len(lines) != len(onHost) || ct != "text/plain; charset=utf-8" {
		t.Fatalf("prefix query of %s/: %d lines (%s), the release has %d snapshots there", u.Host, len(lines), ct, len(onHost))
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 7 || len(f[1]) != 14 || f[4] != "200" {
			t.Fatalf("CDX line %q is not the seven default fields", l)
		}
	}
	star := a.expect(get("/cdx?url="+url.QueryEscape(u.Host+"/*"), tokViewer), http.StatusOK)
	if !bytes.Equal(star.body, plain.body) {
		t.Fatal("url=host/* does not answer as matchType=prefix")
	}
	one := a.expect(get("/cdx?matchType=prefix&limit=1&url="+url.QueryEscape(u.Host+"/"), tokViewer), http.StatusOK)
	if n := len(strings.Split(strings.TrimSpace(string(one.body)), "\n")); n != 1 {
		t.Fatalf("limit=1 answered %d lines", n)
	}
	a.expect(get("/cdx?url="+url.QueryEscape("http://"+u.Host+"/no/such/page.html"), tokViewer), http.StatusOK)
	if e := a.expect(get("/cdx?matchType=prefix", tokViewer), http.StatusBadRequest).errorBody(t); !strings.Contains(e.Detail, "url") {
		t.Fatalf("no url: %+v", e)
	}
	// A held work's page is not in the index: only the release's snapshots are.
	held, err := w.st.CorpusWorkRow(ctx, w.held)
	if err != nil {
		t.Fatal(err)
	}
	var none [][]string
	a.expect(get("/cdx?output=json&url="+url.QueryEscape(held.SourceURL), tokViewer), http.StatusOK).decode(t, &none)
	if len(none) != 0 {
		t.Fatalf("a held work's page is in the CDX index: %v", none)
	}
}

// testCandidates: a duplicate waits for a person; same merges, once.
func testCandidates(t *testing.T, a *apiTest, w *corpusWorld) {
	copyID := w.c.Duplicate(t, w.article)
	open := decodeAs[page[candidateView]](a, get("/api/v1/corpus/candidates", tokViewer), http.StatusOK)
	i := slices.IndexFunc(open.Items, func(k candidateView) bool { return k.WorkB == copyID || k.WorkA == copyID })
	if i < 0 || open.Items[i].Kind != "exact" || open.Items[i].Status != "open" {
		t.Fatalf("open candidates %+v lack the exact duplicate %s", open.Items, copyID)
	}
	k := open.Items[i]
	if d := decodeAs[workDetailView](a, get("/api/v1/works/"+copyID, tokViewer), http.StatusOK); d.Review != "pending" || len(d.HeldBack) == 0 {
		t.Fatalf("the copy waits for no decision: review %s, held %v", d.Review, d.HeldBack)
	}
	got := decodeAs[candidateView](a, postJSON(idPath("/api/v1/corpus/candidates/%d/decision", k.ID), tokOperator, `{"decision": "same"}`), http.StatusOK)
	if got.Status != "same" || got.DecidedBy == nil || *got.DecidedBy != "user:li" {
		t.Fatalf("decided: %+v", got)
	}
	if b := decodeAs[workDetailView](a, get("/api/v1/works/"+k.WorkB, tokViewer), http.StatusOK); b.Status != "merged" || b.MergedInto == nil || *b.MergedInto != k.WorkA {
		t.Fatalf("work %s after same: %s into %v", k.WorkB, b.Status, b.MergedInto)
	}
	a.expect(postJSON(idPath("/api/v1/corpus/candidates/%d/decision", k.ID), tokOperator, `{"decision": "different"}`), http.StatusConflict)
	a.expect(postJSON("/api/v1/works/"+k.WorkB+"/status", tokOperator, `{"status": "active"}`), http.StatusConflict)
	decided := decodeAs[page[candidateView]](a, get("/api/v1/corpus/candidates?status=same", tokViewer), http.StatusOK)
	if !slices.ContainsFunc(decided.Items, func(c candidateView) bool { return c.ID == k.ID }) {
		t.Fatalf("status=same does not list candidate %d", k.ID)
	}
}

// testReleases: built, verified and activated through the API; a newer
// one activated and rolled back, search and text following the active
// release each time; a tampered release fails verification and cannot be
// activated; activation is the admin's.
func testReleases(t *testing.T, a *apiTest, w *corpusWorld) {
	ctx := context.Background()
	old := w.c.Release
	// A new revision of the released work.
	art, err := w.st.ArticleByID(ctx, w.article)
	if err != nil {
		t.Fatal(err)
	}
	art.ContentText = "第二版正文：本办法自发布之日起施行，原文件同时废止。" + strings.Repeat("内容更新。", 20)
	if _, _, err := w.st.SaveArticle(ctx, art, nil, 0, store.FrontierMark{}); err != nil {
		t.Fatal(err)
	}
	sum := decodeAs[intakeSummaryView](a, postJSON("/api/v1/corpus/intake", tokKeyWrite, fmt.Sprintf(`{"article_ids": [%d]}`, w.article)), http.StatusOK)
	if sum.NewRevisions != 1 {
		t.Fatalf("intake of the changed article: %+v", sum)
	}

	built := decodeAs[releaseBuilt](a, postJSON("/api/v1/releases", tokOperator, ""), http.StatusCreated)
	if built.State != store.ReleaseBuilt || built.Active || built.Works == 0 || built.BuiltBy != "user:li" {
		t.Fatalf("built: %+v", built)
	}
	nv := built.Version
	act := "/api/v1/releases/" + nv + "/activate"
	a.expect(postJSON(act, tokAdmin, ""), http.StatusConflict) // not verified yet
	a.expect(postJSON("/api/v1/releases/"+nv+"/verify", tokViewer, ""), http.StatusForbidden)
	if v := decodeAs[releaseView](a, postJSON("/api/v1/releases/"+nv+"/verify", tokOperator, ""), http.StatusOK); v.State != store.ReleaseVerified {
		t.Fatalf("verified: %+v", v)
	}
	a.expect(postJSON(act, tokOperator, ""), http.StatusForbidden)
	a.expect(postJSON(act, tokKeyAll, ""), http.StatusForbidden)
	on := decodeAs[activationView](a, postJSON(act, tokAdmin, ""), http.StatusOK)
	if on.Active.Version != nv || !on.Active.Active || on.Previous == nil || *on.Previous != old {
		t.Fatalf("activated: %+v", on)
	}
	a.expect(postJSON(act, tokAdmin, ""), http.StatusConflict) // active already
	cur := decodeAs[activeReleaseView](a, get("/api/v1/releases/active", tokViewer), http.StatusOK)
	if cur.Version != nv || cur.Previous == nil || *cur.Previous != old || cur.ActivatedBy != "user:zhao" {
		t.Fatalf("active: %+v", cur)
	}
	if audit, err := w.st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_release", ObjectID: nv}); err != nil ||
		!slices.ContainsFunc(audit, func(e store.AuditEntry) bool {
			return e.Action == "corpus.release.activate" && e.Actor == "user:zhao"
		}) {
		t.Fatalf("the activation is not in the audit trail: %+v %v", audit, err)
	}
	find := func(q string) searchResultView {
		return decodeAs[searchResultView](a, get("/api/v1/search?q="+url.QueryEscape(q), tokViewer), http.StatusOK)
	}
	if r := find("原文件同时废止"); r.Release != nv || r.Total != 1 || r.Hits[0].ID != w.released || r.Hits[0].Rev != 2 {
		t.Fatalf("search in %s for the new revision: %+v", nv, r)
	}
	text := decodeAs[workTextView](a, get("/api/v1/works/"+w.released+"/text", tokViewer), http.StatusOK)
	oldText := decodeAs[workTextView](a, get("/api/v1/works/"+w.released+"/text?release="+old, tokViewer), http.StatusOK)
	if text.Rev != 2 || !strings.Contains(text.Text, "原文件同时废止") || oldText.Rev != 1 || oldText.Release != old ||
		strings.Contains(oldText.Text, "原文件同时废止") {
		t.Fatalf("text now rev %d %.40q; in %s rev %d %.40q", text.Rev, text.Text, oldText.Release, oldText.Rev, oldText.Text)
	}
	cOld := a.expect(get("/api/v1/works/"+w.released+"/citation?format=bibtex&release="+old, tokViewer), http.StatusOK)
	if !strings.Contains(string(cOld.body), "zhizhi_release = {"+old+"}") {
		t.Fatalf("a citation from release %s names another: %s", old, cOld.body)
	}

	// Rollback: one step back; search and text follow.
	a.expect(postJSON("/api/v1/releases/rollback", tokOperator, ""), http.StatusForbidden)
	rb := decodeAs[activationView](a, postJSON("/api/v1/releases/rollback", tokAdminKeyWrite, ""), http.StatusOK)
	if rb.Active.Version != old || rb.Previous == nil || *rb.Previous != nv {
		t.Fatalf("rollback: %+v", rb)
	}
	if r := find("原文件同时废止"); r.Release != old || r.Total != 0 {
		t.Fatalf("after rollback search answers from %s with %d hits of the newer text", r.Release, r.Total)
	}
	if tx := decodeAs[workTextView](a, get("/api/v1/works/"+w.released+"/text", tokViewer), http.StatusOK); tx.Rev != 1 || tx.Release != old {
		t.Fatalf("after rollback the text is revision %d of %s", tx.Rev, tx.Release)
	}
	if audit, err := w.st.ListAudit(ctx, store.AuditFilter{ObjectType: "corpus_release", ObjectID: old}); err != nil ||
		!slices.ContainsFunc(audit, func(e store.AuditEntry) bool { return e.Action == "corpus.release.rollback" }) {
		t.Fatalf("the rollback is not in the audit trail: %+v %v", audit, err)
	}

	// A tampered shard: verification names it (422), the release is failed
	// and can no longer be activated.
	shard := filepath.Join(w.c.Service.ReleasesDir(), nv, "text", "0000.jsonl")
	b, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shard, bytes.Replace(b, []byte("施行"), []byte("废止"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var refusal verifyRefusal
	a.expect(postJSON("/api/v1/releases/"+nv+"/verify", tokOperator, `{"quick": true}`), http.StatusUnprocessableEntity).decode(t, &refusal)
	if refusal.Error != "verify_failed" || !slices.ContainsFunc(refusal.Problems, func(p verifyProblemView) bool { return p.Where == "text/0000.jsonl" }) {
		t.Fatalf("verify of a tampered shard: %+v", refusal)
	}
	rels := decodeAs[list[releaseView]](a, get("/api/v1/releases", tokViewer), http.StatusOK)
	if i := slices.IndexFunc(rels.Items, func(r releaseView) bool { return r.Version == nv }); i < 0 || rels.Items[i].State != store.ReleaseFailed {
		t.Fatalf("releases after the tamper: %+v", rels.Items)
	}
	a.expect(postJSON(act, tokAdmin, ""), http.StatusConflict)
	a.expect(postJSON("/api/v1/releases/"+nv+"/verify", tokOperator, ""), http.StatusConflict)
	a.expect(get("/api/v1/works/"+w.released+"/text?release="+nv, tokViewer), http.StatusConflict)
	if r := decodeAs[activeReleaseView](a, get("/api/v1/releases/active", tokViewer), http.StatusOK); r.Version != old {
		t.Fatalf("the active release moved to %s", r.Version)
	}
}
