package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"zhizhi/internal/corpus"
	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// leakAllowed are the Latin words a Chinese-speaking member of staff
// reads on the console as they are: product and format names that have
// no Chinese name in use (zhizhi, RSS, CSV, API, YAML, JSON, HTTP, CMS,
// gkmlpt — the name the provincial platform's pages carry in their
// addresses), units (KB, MB, ms, s) and the letters of a version or an
// ID. Everything else in visible text outside <code>, <pre>, <kbd> and
// <samp> is English that should have been said in Chinese.
var leakAllowed = map[string]bool{
	"zhizhi": true, "RSS": true, "CSV": true, "API": true, "YAML": true, "JSON": true, "HTTP": true,
	"HTTPS": true, "CMS": true, "gkmlpt": true, "URL": true, "ID": true, "IP": true, "SQLite": true,
	"PostgreSQL": true, "River": true, "robots": true, "txt": true, "UTC": true, "CST": true,
	"KB": true, "MB": true, "GB": true, "B": true, "ms": true, "s": true, "h": true, "px": true,
	"PDF": true, "pdf": true, "doc": true, "docx": true, "xls": true, "xlsx": true, "zip": true,
	"Asia": true, "Shanghai": true, "UTF": true, "GBK": true, "OA": true, "Cookie": true,
	// A vendor's name for the shield in front of a city portal, as the
	// bundled configuration's operators wrote it.
	"ctct": true,
	// Standards named by their own names: the web archive format (WARC),
	// the citation formats (CSL-JSON, BibTeX) and Unicode's normal form
	// (NFC).
	"WARC": true, "CSL": true, "BibTeX": true, "NFC": true,
	// People's user names, as they signed in: a name, not a code.
	"admin": true, "operator": true, "wangfang": true, "alice": true, "root": true,
}

// quietClasses mark text set small and grey beside the words it follows:
// a code may stand there after the name it belongs to.
var quietClasses = []string{"muted", "small", "code"}

// visibleWords walks a page's body and returns the Latin words a person
// reads, each with whether it sits in quiet (small, grey) text. Text in
// <code>, <pre>, <kbd>, <samp>, <textarea>, scripts and styles is code or
// data shown as it is and is skipped; placeholders and button captions are
// read.
func visibleWords(t *testing.T, body string) (loud, quiet []string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node, q bool)
	add := func(s string, q bool) {
		for _, w := range latinWords(s) {
			if q {
				quiet = append(quiet, w)
			} else {
				loud = append(loud, w)
			}
		}
	}
	walk = func(n *html.Node, q bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "code", "pre", "kbd", "samp", "textarea", "script", "style", "head":
				return
			case "small":
				q = true
			}
			for _, a := range n.Attr {
				switch a.Key {
				case "class":
					for _, c := range quietClasses {
						if strings.Contains(" "+a.Val+" ", " "+c+" ") {
							q = true
						}
					}
				case "placeholder":
					// Browsers show a placeholder grey, as an example.
					add(a.Val, true)
				case "value":
					if n.Data == "input" && (attr(n, "type") == "submit" || attr(n, "type") == "button") {
						add(a.Val, q)
					}
				}
			}
		}
		if n.Type == html.TextNode {
			add(n.Data, q)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, q)
		}
	}
	for _, n := range doc.Find("body").Nodes {
		walk(n, false)
	}
	return loud, quiet
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

var asciiRun = regexp.MustCompile(`[!-~]+`)

// latinWords are the words of s made of Latin letters only. A run that
// holds a digit or one of / . : @ _ = ? & # is an address, a host, a file
// name, a time, a number or a code, shown as it is.
func latinWords(s string) []string {
	var out []string
	for _, run := range asciiRun.FindAllString(s, -1) {
		if strings.ContainsAny(run, "/.:@_=?&#0123456789") {
			continue
		}
		for _, w := range strings.FieldsFunc(run, func(r rune) bool { return !unicode.IsLetter(r) }) {
			out = append(out, w)
		}
	}
	return out
}

// leakWorld is the console's world with everything a page can show: the
// bundled configuration's sites and targets, host states, crawl logs,
// articles, cards, a takedown, catalog columns, audit entries of every
// kind of actor and a finished onboarding run.
func leakWorld(t *testing.T, st *store.Store) (*wizardWorld, map[string]string) {
	t.Helper()
	ctx := context.Background()
	ww := newWizardWorld(t, st)
	w := ww.world
	arts := seedArticles(t, w)
	cards := seedCards(t, w)
	seedCatalog(t, st)
	qy, err := st.SiteByCode(ctx, "qingyuan")
	if err != nil {
		t.Fatal(err)
	}
	k := &model.Takedown{SiteID: qy.ID, Scope: model.TakedownURLs, URLs: []string{"http://www.qingyuan.gov.test/card/0.html"},
		Requester: "清远市教育局办公室", Reason: "招生通知已撤回", RecordedBy: "user:operator"}
	if err := st.RecordTakedown(ctx, k); err != nil {
		t.Fatal(err)
	}
	for _, actor := range []string{"user:wangfang", "apikey:7(alice)", "system"} {
		if err := st.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "target.disable", ObjectType: "target",
			ObjectID: "lianzhou_tzgg", Detail: "临时停用"}); err != nil {
			t.Fatal(err)
		}
	}
	// Runs as the crawl command and a serve worker record them: one that
	// read its column, one that failed on the way.
	tg, err := st.TargetByCode(ctx, "qingyuan_qyfgw_14011")
	if err != nil {
		t.Fatal(err)
	}
	started := w.now.Add(-2 * time.Hour)
	for i, r := range []crawl.Result{
		{Started: started, Finished: started.Add(time.Minute), Created: 3, Pages: 1},
		{Started: started.Add(time.Hour), Finished: started.Add(time.Hour + time.Minute), Pages: 1, Failed: 2, Retrying: 1,
			Err:      fmt.Errorf("list page: %w", errors.New("dial tcp 10.0.0.1:80: connect: connection refused")),
			Problems: []string{"http://www.qingyuan.gov.test/a/1.html: HTTP 503"}},
	} {
		if err := crawl.RecordRun(ctx, st, *tg, r, []string{"cli", "serve zz-host-1234"}[i]); err != nil {
			t.Fatal(err)
		}
	}
	op := w.login(t, "operator")
	run := ww.startRun(t, op, "http://"+deadHost)
	ww.waitRun(t, op, run)
	depts, err := st.ListDepartments(ctx)
	if err != nil || len(depts) == 0 {
		t.Fatalf("departments: %v (%d)", err, len(depts))
	}
	work, version := seedLeakCorpus(t, w, arts)
	return ww, map[string]string{
		"corpus/works/{id}":                   work,
		"corpus/works/" + work + "/citation?": "format=csl-json",
		"corpus/releases/{id}":                version,
		"corpus/search?":                      "q=" + url.QueryEscape("发展"),
		"sites/{code}":                        "qingyuan",
		"targets/{code}":                      "qingyuan_qyfgw_14011",
		"adapters/{id}":                       "gkmlpt",
		"articles/{id}":                       fmt.Sprint(arts[artFGW]),
		"cards/{id}":                          fmt.Sprint(cards[cardYellow]),
		"takedowns/{id}":                      fmt.Sprint(k.ID),
		"departments/{id}":                    "37",
		"onboard/{id}":                        strings.TrimPrefix(run, Prefix+"/onboard/"),
		// Without an acquisition API a crawl job's page says the Studio is off.
		"studio/crawl/{id}":    "none",
		"onboard/departments?": "field=dept-0-0-local&q=" + url.QueryEscape("发展"),
	}
}

// TestNoEnglishLeaksIntoPages renders every page the console serves to a
// GET (read from its source, so a page added later is checked too) in a
// world with data on every page, signed in as an administrator, and fails
// on any English word a person reads outside code: the console speaks
// Chinese to its users. A site's or a user's code may follow its name only
// in small grey text.
func TestNoEnglishLeaksIntoPages(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ww, values := leakWorld(t, st)
		w := ww.world
		// An operator sees every page (none is an administrator's alone)
		// and the onboarding run, which is the operator's own.
		op := w.login(t, "operator")
		admin := w.login(t, "admin")
		ctx := context.Background()
		// Codes of the world's own things: a name must stand where a
		// person reads them, the code only quietly after it.
		codes := map[string]bool{}
		sites, err := st.ListSites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sites {
			codes[s.SiteCode] = true
			depts, err := st.ListSiteDepartments(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range depts {
				codes[d.DeptPath] = true
			}
		}
		wildcard := regexp.MustCompile(`\{[a-z]+\}`)
		pages := 0
		for _, pattern := range consoleRoutes(t) {
			method, path, _ := strings.Cut(pattern, " ")
			if method != http.MethodGet {
				continue
			}
			switch {
			case strings.HasPrefix(path, Prefix+"/static/"), strings.HasSuffix(path, ".zip"):
				continue // files, not pages
			}
			path = strings.TrimSuffix(path, "{$}")
			if wildcard.MatchString(path) {
				// The value of the route's own key, or of the page it is
				// part of: onboard/{id}/progress takes onboard/{id}'s.
				key := strings.TrimPrefix(path, Prefix+"/")
				v, ok := values[key]
				for !ok && strings.Contains(key, "/") {
					key = key[:strings.LastIndex(key, "/")]
					v, ok = values[key]
				}
				if !ok {
					t.Fatalf("%s: no value for its wildcard in this test", pattern)
				}
				path = wildcard.ReplaceAllString(path, v)
			}
			if q, ok := values[strings.TrimPrefix(path, Prefix+"/")+"?"]; ok {
				path += "?" + q
			}
			// The operator, and the administrator, who is offered more
			// (clearing a host …) but not the operator's onboarding run.
			for _, c := range []*http.Cookie{op, admin} {
				if path == Prefix+"/login" {
					if c == admin {
						continue
					}
					c = nil
				}
				if c == admin && strings.HasPrefix(path, Prefix+"/onboard/") {
					continue
				}
				path := path
				rec := w.get(t, path, c)
				if loc := rec.Header().Get("Location"); rec.Code == http.StatusSeeOther && strings.HasPrefix(loc, Prefix+"/") && c != nil {
					// A page that is over sends to the page that replaced it
					// (a finished run's progress to its results).
					path = loc
					rec = w.get(t, path, c)
				}
				if rec.Code != http.StatusOK {
					t.Errorf("GET %s: status %d, want a page to read", path, rec.Code)
					continue
				}
				if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
					continue // a file to download (a citation), not a page
				}
				pages++
				body := rec.Body.String()
				// Text the world planted to test escaping is data, not the
				// console's words.
				for _, planted := range []string{hostile, hostileAttr, "server said", "imported", artHostile, "hostile-card"} {
					body = strings.ReplaceAll(body, html.EscapeString(planted), "")
					body = strings.ReplaceAll(body, planted, "")
				}
				loud, quiet := visibleWords(t, body)
				bad := map[string]bool{}
				for _, wd := range loud {
					if !leakAllowed[wd] {
						bad[wd] = true
					}
				}
				for _, wd := range quiet {
					if !leakAllowed[wd] && !codes[wd] {
						bad[wd] = true
					}
				}
				if len(bad) > 0 {
					var list []string
					for wd := range bad {
						list = append(list, wd)
					}
					sort.Strings(list)
					t.Errorf("GET %s shows English: %s", path, strings.Join(list, " "))
				}
			}
		}
		t.Logf("checked %d pages", pages)
		if pages < 45 {
			t.Errorf("checked %d pages, want every GET page of the console (25 when this test was written, most twice)", pages)
		}
	})
}

// seedLeakCorpus fills the corpus with every kind of thing its pages show:
// works that pass and works held back (QA, a duplicate waiting, a
// quarantine), a decided and an open candidate, and an active release. It
// returns a work of the release and the release's version.
func seedLeakCorpus(t *testing.T, w *world, arts map[string]int64) (string, string) {
	t.Helper()
	ctx := context.Background()
	tg, err := w.st.TargetByCode(ctx, "qingyuan_qyfgw_14011")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("清远市发展和改革局就价格监测工作作出部署，要求各县区按月报送监测数据。", 3)
	save := func(n int, title, docNo, text string) int64 {
		a := &model.Article{SiteID: tg.SiteID, TargetID: tg.ID, URL: fmt.Sprintf("http://www.qingyuan.gov.test/corpus/%d.html", n),
			Title: title, ChannelName: tg.ChannelName, Publisher: "清远市发展和改革局", DocNo: docNo, Status: model.StatusReady,
			PublishDate: "2026-03-01", IndexNo: fmt.Sprintf("11441800MB2D9%03d/2026-00001", n), ContentText: text, FetchedAt: w.now.Add(-time.Hour)}
		if _, _, err := w.st.SaveArticle(ctx, a, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	ids := []int64{arts[artFGW], arts[artPrice], arts[artCity],
		save(1, "价格监测工作部署", "清发改〔2026〕1号", body),
		save(2, "转发价格监测通知", "", body+"二"),
		save(3, "转发价格监测通知（副本）", "", body+"二")}
	for _, id := range ids {
		if _, err := w.corpus.IntakeArticle(ctx, id, "user:operator"); err != nil {
			t.Fatal(err)
		}
	}
	work := func(id int64) string {
		wk, err := w.st.CorpusWorkByAlias(ctx, fmt.Sprintf("article:%d", id))
		if err != nil {
			t.Fatal(err)
		}
		return wk.ID
	}
	if err := w.st.SetCorpusWorkStatus(ctx, work(arts[artPrice]), store.WorkQuarantined, "", "待核实", "user:operator"); err != nil {
		t.Fatal(err)
	}
	ks, err := w.st.ListCorpusCandidates(ctx, store.CandidateOpen, 10)
	if err != nil || len(ks) != 2 {
		t.Fatalf("candidates %+v (%v), want the 文号 pair and the copied pair", ks, err)
	}
	for _, k := range ks {
		if k.Kind == "biblio" {
			if err := w.st.DecideCorpusCandidate(ctx, k.ID, store.CandidateDifferent, "user:operator"); err != nil {
				t.Fatal(err)
			}
		}
	}
	rel, err := w.corpus.Build(ctx, "user:admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.corpus.Verify(ctx, rel.Version, "user:admin", corpus.VerifyOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.corpus.Activate(ctx, rel.Version, "user:admin"); err != nil {
		t.Fatal(err)
	}
	if rel.Works == 0 || rel.Held == 0 {
		t.Fatalf("release %+v: want works both in it and held back", rel)
	}
	return work(ids[3]), rel.Version
}
