package adapter

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"zhizhi/internal/charset"
	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/sim"
)

// simWeb is the simulated web with the bundled config that describes it,
// read by a plain HTTP client. The parsers are under test here, not the
// fetcher: the client goes only through the world's resolve map (no test
// leaves loopback) and carries the city portal's clearance cookie the way
// a browser that passed the challenge would.
type simWeb struct {
	world  *sim.World
	bundle *config.Bundle
	client *http.Client
	cookie *http.Cookie
}

func startSimWeb(tb testing.TB) *simWeb {
	tb.Helper()
	w, err := sim.Start(context.Background(), sim.Options{Seed: 1, Scale: 1})
	if err != nil {
		tb.Fatalf("start sim: %v", err)
	}
	tb.Cleanup(w.Close)
	bundle, problems := config.Load("../../demo/config")
	for _, p := range problems {
		if !p.Warning {
			tb.Fatalf("bundled config: %s", p)
		}
	}
	c := w.HTTPClient()
	tb.Cleanup(c.CloseIdleConnections)
	return &simWeb{
		world:  w,
		bundle: bundle,
		client: c,
		// The sim clock stands still unless advanced, so one cookie lasts
		// the whole test.
		cookie: w.Clearance(),
	}
}

// get fetches rawURL; only the city portal looks at the cookie.
func (s *simWeb) get(rawURL string) (status int, body []byte, contentType string, err error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, "", err
	}
	req.AddCookie(s.cookie)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, "", fmt.Errorf("read %s: %w", rawURL, err)
	}
	return resp.StatusCode, body, resp.Header.Get("Content-Type"), nil
}

// page fetches rawURL, requires 200 and returns it as UTF-8: HTML through
// the charset chain the fetcher uses (BOM, header, meta), JSON as text.
func (s *simWeb) page(rawURL string, asHTML bool) ([]byte, error) {
	status, body, ctype, err := s.get(rawURL)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %d", rawURL, status)
	}
	var out []byte
	if asHTML {
		out, _, err = charset.DecodeHTML(body, ctype)
	} else {
		out, _, err = charset.DecodeText(body, ctype)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", rawURL, err)
	}
	return out, nil
}

func (s *simWeb) site(code string) *config.SiteFile {
	for _, sf := range s.bundle.Sites {
		if sf.SiteCode == code {
			return sf
		}
	}
	return nil
}

// detailTemplate is the parser the pipeline uses for an article of site
// sf: the CMS adapter's detail selectors, or the template site's own merged
// with the target's parser_override (no target: the site template).
func (s *simWeb) detailTemplate(sf *config.SiteFile, targetCode string) (config.DetailTemplate, error) {
	if sf.CMSAdapter != "" {
		a := s.bundle.CMS[sf.CMSAdapter]
		if a == nil {
			return config.DetailTemplate{}, fmt.Errorf("site %s: adapter %q not in the bundle", sf.SiteCode, sf.CMSAdapter)
		}
		return a.Detail.DetailTemplate, nil
	}
	var spec *config.TargetSpec
	for _, t := range sf.Targets() {
		if t.TargetCode == targetCode {
			spec = &t
			break
		}
	}
	tmpl := config.EffectiveTemplate(sf, spec)
	if tmpl == nil || tmpl.Detail.IsZero() {
		return config.DetailTemplate{}, fmt.Errorf("site %s has no detail template", sf.SiteCode)
	}
	return tmpl.Detail, nil
}

func mustParseURL(tb testing.TB, raw string) *url.URL {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("parse url %q: %v", raw, err)
	}
	return u
}

// The accuracy of the parsers against the simulated web's ground truth:
// every article of every full-access site is fetched, parsed with the
// parser the bundled config gives its site, turned into the values the
// pipeline stores, and compared field by field with what the sim says the
// page holds. The lists are paged through and compared as sets.

// minAccuracy is the share of articles per site and field that must come
// out right.
const minAccuracy = 0.99

// minBodySimilarity is the body similarity at which a body counts as right.
const minBodySimilarity = 0.95

// Fields in report order.
var truthFields = []string{
	"list", "title", extract.FieldIndexNo, extract.FieldDocNo, extract.FieldPublisher,
	extract.FieldPublishDate, extract.FieldEffectiveDate, extract.FieldTopicWords, extract.FieldOpenCategory,
	"publish_time", "time_fallback", "raw_attributes", "body", "attachments", "columns",
}

// scoreboard counts right and checked per site and field and keeps a few
// examples of what went wrong.
type scoreboard struct {
	right, checked map[string]map[string]int
	misses         map[string]map[string][]string
	bodySim        map[string][]float64
	// nonEmpty counts, per canonical field (and attachments), truth values
	// that were not empty: a field every site leaves empty would pass
	// without testing anything.
	nonEmpty map[string]int
}

func newScoreboard() *scoreboard {
	return &scoreboard{
		right: map[string]map[string]int{}, checked: map[string]map[string]int{},
		misses: map[string]map[string][]string{}, bodySim: map[string][]float64{}, nonEmpty: map[string]int{},
	}
}

func (sb *scoreboard) note(site, field string, ok bool, format string, args ...any) {
	if sb.checked[site] == nil {
		sb.checked[site], sb.right[site], sb.misses[site] = map[string]int{}, map[string]int{}, map[string][]string{}
	}
	sb.checked[site][field]++
	if ok {
		sb.right[site][field]++
		return
	}
	if len(sb.misses[site][field]) < 3 {
		sb.misses[site][field] = append(sb.misses[site][field], fmt.Sprintf(format, args...))
	}
}

// report logs one table row per site and fails every site and field below
// minAccuracy, with its examples.
func (sb *scoreboard) report(t *testing.T) {
	t.Helper()
	sites := make([]string, 0, len(sb.checked))
	for s := range sb.checked {
		sites = append(sites, s)
	}
	sort.Strings(sites)
	var b strings.Builder
	fmt.Fprintf(&b, "parse accuracy against the sim truth (seed 1, scale 1), right/checked per field:\n%-10s", "site")
	width := func(f string) int { return max(len(f), 7) }
	for _, f := range truthFields {
		fmt.Fprintf(&b, " %*s", width(f), f)
	}
	b.WriteString("  body_sim(min/mean)\n")
	for _, s := range sites {
		fmt.Fprintf(&b, "%-10s", s)
		for _, f := range truthFields {
			cell := "-"
			if n := sb.checked[s][f]; n > 0 {
				cell = fmt.Sprintf("%d/%d", sb.right[s][f], n)
			}
			fmt.Fprintf(&b, " %*s", width(f), cell)
		}
		if sims := sb.bodySim[s]; len(sims) > 0 {
			lo, sum := 1.0, 0.0
			for _, v := range sims {
				lo, sum = min(lo, v), sum+v
			}
			fmt.Fprintf(&b, "  %.4f/%.4f", lo, sum/float64(len(sims)))
		}
		b.WriteByte('\n')
	}
	t.Log(b.String())
	for _, f := range append(truthFields[2:9:9], "attachments") {
		if sb.nonEmpty[f] == 0 {
			t.Errorf("no truth article has a %s: the field was never really compared", f)
		}
	}
	for _, s := range sites {
		for _, f := range truthFields {
			n := sb.checked[s][f]
			if n == 0 {
				continue
			}
			if acc := float64(sb.right[s][f]) / float64(n); acc < minAccuracy {
				t.Errorf("%s %s: %d of %d right (%.1f%% < %.0f%%); e.g.\n  %s", s, f, sb.right[s][f], n,
					100*acc, 100*minAccuracy, strings.Join(sb.misses[s][f], "\n  "))
			}
		}
	}
}

func TestParseAccuracyAgainstTruth(t *testing.T) {
	web := startSimWeb(t)
	truth := web.world.Truth()
	sb := newScoreboard()

	// The list side first: it also yields the list items whose fields the
	// pipeline falls back on when a detail page says nothing.
	items := map[string]ListItem{} // normalized article URL → first list item seen
	for _, sf := range web.bundle.Sites {
		if sf.CMSAdapter != "" {
			checkGkmlptLists(t, web, sf, truth, sb, items)
		} else {
			checkTemplateLists(t, web, sf, truth, sb, items)
		}
	}

	checked := 0
	for _, ta := range truth {
		if ta.Access != "full" {
			continue
		}
		sf := web.site(ta.SiteCode)
		if sf == nil {
			t.Errorf("truth site %s has no site file", ta.SiteCode)
			continue
		}
		dt, err := web.detailTemplate(sf, ta.TargetCode)
		if err != nil {
			t.Error(err)
			continue
		}
		body, err := web.page(ta.URL, true)
		if err != nil {
			t.Errorf("%s: %v", ta.URL, err)
			continue
		}
		d, err := ParseDetail(body, mustParseURL(t, ta.URL), dt)
		if err != nil {
			t.Errorf("%s: %v", ta.URL, err)
			continue
		}
		norm, err := extract.NormalizeURL(ta.URL)
		if err != nil {
			t.Fatal(err)
		}
		item := items[norm]
		compareArticle(sb, ta, storedFrom(d, item))
		checked++

		// A page that prints no time of its own: the pipeline falls back on
		// the attribute block's 发布日期, then the list's date. Both carry
		// the day at least, so the day must still be right.
		noTime := *d
		noTime.PublishTimeRaw, noTime.PublishTime = "", nil
		fb := storedFrom(&noTime, item)
		day := func(tm time.Time) string { return tm.In(extract.Shanghai).Format("2006-01-02") }
		sb.note(ta.SiteCode, "time_fallback", fb.PublishTime != nil && day(*fb.PublishTime) == day(ta.PublishTime),
			"%s: without the page's time, publish_time %v, want the day %s", ta.URL, fb.PublishTime, day(ta.PublishTime))
	}
	if checked < 100 {
		t.Errorf("only %d full-access articles checked; the sim at scale 1 has well over 100", checked)
	}
	sb.report(t)
}

// stored is what the pipeline keeps of one article. It mirrors buildArticle
// in internal/crawl/item.go: the page's values first, the list item's where
// the page says nothing; date columns through extract.DateOnly;
// publish_time from the page's own time, else the attribute block's
// 发布日期, else the list's date, in UTC.
type stored struct {
	Title       string
	Canonical   map[string]string
	PublishTime *time.Time
	Raw         map[string]string
	Text        string
	Attachments map[string]bool // normalized URLs
}

func storedFrom(d *Detail, item ListItem) stored {
	st := stored{Title: d.Title, Canonical: map[string]string{}, Text: d.Text, Attachments: map[string]bool{}}
	if st.Title == "" {
		st.Title = item.Title
	}
	attr := d.Attributes
	if attr == nil {
		attr = extract.ParseAttributes(nil)
	}
	st.Raw = attr.Raw
	for _, f := range []string{extract.FieldIndexNo, extract.FieldDocNo, extract.FieldPublisher,
		extract.FieldPublishDate, extract.FieldEffectiveDate, extract.FieldTopicWords, extract.FieldOpenCategory} {
		v := attr.Canonical[f]
		if v == "" {
			v = item.Fields[f]
		}
		if v != "" && (f == extract.FieldPublishDate || f == extract.FieldEffectiveDate) {
			v, _ = extract.DateOnly(v) // a date that does not parse is not stored
		}
		st.Canonical[f] = v
	}
	for _, raw := range []string{d.PublishTimeRaw, attr.Canonical[extract.FieldPublishDate], item.Date, item.Fields["publish_time"]} {
		if raw == "" {
			continue
		}
		if tm, _, err := extract.ParseDate(raw); err == nil {
			tm = tm.UTC()
			st.PublishTime = &tm
			break
		}
	}
	if st.Canonical[extract.FieldPublishDate] == "" && st.PublishTime != nil {
		st.Canonical[extract.FieldPublishDate] = st.PublishTime.In(extract.Shanghai).Format("2006-01-02")
	}
	for _, ref := range append(append([]AttachmentRef{}, item.Attachments...), d.Attachments...) {
		if n, err := extract.NormalizeURL(ref.URL); err == nil {
			st.Attachments[n] = true
		}
	}
	return st
}

func compareArticle(sb *scoreboard, ta sim.TruthArticle, st stored) {
	site, u := ta.SiteCode, ta.URL
	sb.note(site, "title", st.Title == ta.Title, "%s: title %q, want %q", u, st.Title, ta.Title)
	want := map[string]string{
		extract.FieldIndexNo: ta.IndexNo, extract.FieldDocNo: ta.DocNo, extract.FieldPublisher: ta.Publisher,
		extract.FieldPublishDate: ta.PublishDate, extract.FieldEffectiveDate: ta.EffectiveDate,
		extract.FieldTopicWords: ta.TopicWords, extract.FieldOpenCategory: ta.OpenCategory,
	}
	for f, w := range want {
		if w != "" {
			sb.nonEmpty[f]++
		}
		got := st.Canonical[f]
		sb.note(site, f, got == w, "%s: %s %q, want %q", u, f, got, w)
	}
	ok := st.PublishTime != nil && st.PublishTime.Equal(ta.PublishTime)
	sb.note(site, "publish_time", ok, "%s: publish_time %v, want %v", u, st.PublishTime, ta.PublishTime.UTC())

	var wrong []string
	for label, w := range ta.RawAttributes {
		norm := extract.NormalizeLabel(label)
		got, found := st.Raw[norm]
		if !found || got != extract.CleanText(w) {
			wrong = append(wrong, fmt.Sprintf("%s=%q (want %q, found %v)", norm, got, w, found))
		}
	}
	sort.Strings(wrong)
	sb.note(site, "raw_attributes", len(wrong) == 0, "%s: %s", u, strings.Join(wrong, ", "))

	sim := bodySimilarity(st.Text, ta.BodyText)
	sb.bodySim[site] = append(sb.bodySim[site], sim)
	sb.note(site, "body", sim >= minBodySimilarity, "%s: body similarity %.4f\n    got:  %.120q\n    want: %.120q", u, sim, st.Text, ta.BodyText)

	if len(ta.Attachments) > 0 {
		sb.nonEmpty["attachments"]++
	}
	wantAtt := map[string]bool{}
	for _, a := range ta.Attachments {
		if n, err := extract.NormalizeURL(a.URL); err == nil {
			wantAtt[n] = true
		}
	}
	sb.note(site, "attachments", maps.Equal(wantAtt, st.Attachments), "%s: attachments %v, want %v", u, slices.Sorted(maps.Keys(st.Attachments)), slices.Sorted(maps.Keys(wantAtt)))
}

// bodySimilarity is the Dice coefficient of the two texts' character
// bigram multisets, white space removed: 2·|A∩B| / (|A|+|B|). It is 1 for
// equal texts, falls with every character dropped, added or changed
// (each touches up to two bigrams), and, unlike an edit distance, costs
// linear time on 20,000-character bodies. Texts shorter than two
// characters compare equal or not at all.
func bodySimilarity(a, b string) float64 {
	ra, rb := []rune(stripSpace(a)), []rune(stripSpace(b))
	if len(ra) < 2 || len(rb) < 2 {
		if string(ra) == string(rb) {
			return 1
		}
		return 0
	}
	counts := make(map[[2]rune]int, len(ra))
	for i := 0; i+1 < len(ra); i++ {
		counts[[2]rune{ra[i], ra[i+1]}]++
	}
	shared := 0
	for i := 0; i+1 < len(rb); i++ {
		k := [2]rune{rb[i], rb[i+1]}
		if counts[k] > 0 {
			counts[k]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(ra)-1+len(rb)-1)
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u3000' || r == '\u00a0' || r == '\u200b' {
			return -1
		}
		return r
	}, s)
}

func TestBodySimilarity(t *testing.T) {
	long := strings.Repeat("为进一步加强规划管理，现将有关事项通知如下。", 10)
	tests := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"equal", long, long, 1, 1},
		{"white space does not count", "第一段\n第二段 \t", "第一段第二段", 1, 1},
		{"both empty", "", "", 1, 1},
		{"one empty", long, "", 0, 0},
		{"disjoint", "甲乙丙丁", "子丑寅卯", 0, 0},
		{"one character changed in 220", long, strings.Replace(long, "规", "归", 1), 0.99, 0.999},
		{"half missing", long, long[:len(long)/2], 0.6, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodySimilarity(tt.a, tt.b); got < tt.min || got > tt.max {
				t.Errorf("bodySimilarity = %.4f, want in [%.3f, %.3f]", got, tt.min, tt.max)
			}
		})
	}
}

// checkTemplateLists pages through each target's list as the pipeline does
// (next link, else page_url pattern; a 404 past the first page ends it) and
// compares the item URLs with the truth's articles of that target.
// robots.txt is not consulted: this is a parser test, and the truth's
// robots_disallowed articles must be on the list all the same; the fetcher
// is what skips them.
func checkTemplateLists(t *testing.T, web *simWeb, sf *config.SiteFile, truth []sim.TruthArticle, sb *scoreboard, items map[string]ListItem) {
	for _, spec := range sf.Targets() {
		tmpl := config.EffectiveTemplate(sf, &spec)
		if tmpl == nil || tmpl.List.IsZero() {
			t.Errorf("%s: no list template", spec.TargetCode)
			continue
		}
		entry := mustParseURL(t, spec.EntryURL)
		found := map[string]bool{}
		pageURL, seen := entry.String(), map[string]bool{}
		for n := 0; pageURL != "" && !seen[pageURL] && n < config.MaxPagesLimit; n++ {
			seen[pageURL] = true
			status, _, _, err := web.get(pageURL)
			if err == nil && status == http.StatusNotFound && n > 0 {
				break // the pattern ran past the last page
			}
			body, err := web.page(pageURL, tmpl.List.Format != config.ListJSON)
			if err != nil {
				t.Errorf("%s list page %d: %v", spec.TargetCode, n, err)
				break
			}
			page, err := ParseList(body, mustParseURL(t, pageURL), tmpl.List)
			if err != nil {
				t.Errorf("%s list page %d: %v", spec.TargetCode, n, err)
				break
			}
			if len(page.Items) == 0 {
				break
			}
			for _, it := range page.Items {
				norm, err := extract.NormalizeURL(it.URL)
				if err != nil {
					t.Errorf("%s: list link %q: %v", spec.TargetCode, it.URL, err)
					continue
				}
				found[norm] = true
				if _, ok := items[norm]; !ok {
					items[norm] = it
				}
			}
			switch {
			case page.Next != "":
				pageURL = page.Next
			case tmpl.List.PageURL != "":
				pageURL, _ = PageURL(entry, tmpl.List, n+1)
			default:
				pageURL = ""
			}
		}
		want, flagged := map[string]bool{}, 0
		for _, ta := range truth {
			if ta.TargetCode != spec.TargetCode {
				continue
			}
			norm, _ := extract.NormalizeURL(ta.URL)
			want[norm] = true
			if ta.RobotsDisallowed {
				flagged++
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: the truth has no article of this target", spec.TargetCode)
		}
		scoreSets(sb, sf.SiteCode, spec.TargetCode, found, want, nil, nil)
		if flagged > 0 {
			t.Logf("%s: %d listed articles are robots-disallowed in the truth (the fetcher skips them)", spec.TargetCode, flagged)
		}
	}
}

// scoreSets scores a list: every truth article found (with the right
// native id when ids are given) is right, every truth article missed and
// every extra URL is wrong.
func scoreSets(sb *scoreboard, site, target string, found, want map[string]bool, foundIDs, wantIDs map[string]string) {
	for u := range want {
		switch {
		case !found[u]:
			sb.note(site, "list", false, "%s: %s not listed", target, u)
		case wantIDs != nil && foundIDs[u] != wantIDs[u]:
			sb.note(site, "list", false, "%s: %s listed with id %q, want %q", target, u, foundIDs[u], wantIDs[u])
		default:
			sb.note(site, "list", true, "")
		}
	}
	for u := range found {
		if !want[u] {
			sb.note(site, "list", false, "%s: %s listed but not an article of the target", target, u)
		}
	}
}

// checkGkmlptLists reads each dept's index (every configured column must
// be in its TREE, the SID must be the configured one) and pages through
// each configured column's list API; a group column lists the posts of its
// whole subtree.
func checkGkmlptLists(t *testing.T, web *simWeb, sf *config.SiteFile, truth []sim.TruthArticle, sb *scoreboard, items map[string]ListItem) {
	a := web.bundle.CMS[sf.CMSAdapter]
	if a == nil {
		t.Errorf("site %s: adapter %q not in the bundle", sf.SiteCode, sf.CMSAdapter)
		return
	}
	base := strings.TrimRight(sf.BaseURL, "/")
	for _, dept := range sf.Depts {
		indexURL := config.ExpandURL(a.Index.URL, map[string]string{"base_url": base, "dept_path": dept.DeptPath})
		body, err := web.page(indexURL, true)
		if err != nil {
			t.Errorf("%s index: %v", sf.SiteCode, err)
			continue
		}
		idx, err := ParseGkmlptIndex(body, a.Index.ConfigVar)
		if err != nil {
			t.Errorf("%s: %v", indexURL, err)
			continue
		}
		if want := fmt.Sprint(sf.AdapterParams["sid"]); idx.SID != want {
			t.Errorf("%s: SID %q, configured %q", indexURL, idx.SID, want)
		}
		parent := map[string]string{}
		for _, c := range idx.Columns {
			parent[c.ID] = c.ParentID
		}
		for _, col := range dept.Columns {
			target := config.DefaultTargetCode(sf.SiteCode, dept.DeptPath, col.ColumnID)
			_, inTree := parent[col.ColumnID]
			sb.note(sf.SiteCode, "columns", inTree, "%s: column %s not in the TREE", indexURL, col.ColumnID)
			if !inTree {
				continue
			}
			found, foundIDs := map[string]bool{}, map[string]string{}
			vars := map[string]string{"base_url": base, "dept_path": dept.DeptPath, "column_id": col.ColumnID, "sid": idx.SID}
			seenItems := 0
			for p := a.List.FirstPage; p < a.List.FirstPage+config.MaxPagesLimit; p++ {
				vars["page"] = strconv.Itoa(p)
				u := config.ExpandURL(a.List.URL, vars)
				body, err := web.page(u, false)
				if err != nil {
					t.Errorf("%s: %v", target, err)
					break
				}
				lp, cls, err := ParseGkmlptList(body, mustParseURL(t, u), a.List)
				if err != nil {
					t.Errorf("%s: %v", u, err)
					break
				}
				if cls.ID != col.ColumnID {
					t.Errorf("%s: classify id %q", u, cls.ID)
				}
				for _, it := range lp.Items {
					norm, err := extract.NormalizeURL(it.URL)
					if err != nil {
						t.Errorf("%s: item url %q: %v", u, it.URL, err)
						continue
					}
					found[norm], foundIDs[norm] = true, it.NativePostID
					if _, ok := items[norm]; !ok {
						items[norm] = it
					}
				}
				seenItems += len(lp.Items)
				if len(lp.Items) == 0 || (lp.Total > 0 && seenItems >= lp.Total) {
					break
				}
			}
			want, wantIDs := map[string]bool{}, map[string]string{}
			for _, ta := range truth {
				if ta.SiteCode != sf.SiteCode || ta.DeptPath != dept.DeptPath || !inSubtree(parent, ta.ColumnID, col.ColumnID) {
					continue
				}
				norm, _ := extract.NormalizeURL(ta.URL)
				want[norm], wantIDs[norm] = true, ta.NativePostID
			}
			if len(want) == 0 {
				t.Errorf("%s: the truth has no article in column %s", target, col.ColumnID)
			}
			scoreSets(sb, sf.SiteCode, target, found, want, foundIDs, wantIDs)
		}
	}
}

// inSubtree reports whether column id is root or below it.
func inSubtree(parent map[string]string, id, root string) bool {
	for depth := 0; id != "" && depth < 32; depth++ {
		if id == root {
			return true
		}
		id = parent[id]
	}
	return false
}

// TestGenericAccuracyAgainstTruth measures the generic extractor, what a
// page costs in quality when its site has no template, on the same pages.
// The title and the publish_time (from a <meta>, else a "发布时间：" line,
// else the attribute block's date) must be right as often as a template's;
// the main text may carry a headline, a "发布时间…来源…" line or an
// attribute table the templates leave out, so only its mean similarity per
// site is held to 0.90.
func TestGenericAccuracyAgainstTruth(t *testing.T) {
	web := startSimWeb(t)
	type tally struct {
		n, title, day, exact, body int
		simSum                     float64
	}
	bySite := map[string]*tally{}
	day := func(tm time.Time) string { return tm.In(extract.Shanghai).Format("2006-01-02") }
	for _, ta := range web.world.Truth() {
		if ta.Access != "full" {
			continue
		}
		body, err := web.page(ta.URL, true)
		if err != nil {
			t.Fatalf("%s: %v", ta.URL, err)
		}
		p, err := extract.Generic(body, mustParseURL(t, ta.URL), nil)
		if err != nil {
			t.Errorf("%s: %v", ta.URL, err)
			continue
		}
		s := bySite[ta.SiteCode]
		if s == nil {
			s = &tally{}
			bySite[ta.SiteCode] = s
		}
		s.n++
		if p.Title == ta.Title {
			s.title++
		} else if s.n-s.title == 1 {
			t.Logf("%s: generic title %q, want %q", ta.URL, p.Title, ta.Title)
		}
		if p.PublishTime != nil && day(*p.PublishTime) == day(ta.PublishTime) {
			s.day++
			if p.PublishTime.Equal(ta.PublishTime) {
				s.exact++
			}
		}
		if (p.PublishTime == nil || !p.PublishTime.Equal(ta.PublishTime)) && s.n-s.exact == 1 {
			t.Logf("%s: generic publish_time %v, want %v", ta.URL, p.PublishTime, ta.PublishTime)
		}
		sim := bodySimilarity(p.Text, ta.BodyText)
		s.simSum += sim
		if sim >= minBodySimilarity {
			s.body++
		}
	}
	sites := slices.Sorted(maps.Keys(bySite))
	var b strings.Builder
	fmt.Fprintf(&b, "generic extraction against the sim truth:\n%-10s %7s %7s %7s %9s %7s\n", "site", "title", "day", "exact", "body≥.95", "mean")
	for _, site := range sites {
		s := bySite[site]
		fmt.Fprintf(&b, "%-10s %7s %7s %7s %9s %7.4f\n", site, fmt.Sprintf("%d/%d", s.title, s.n), fmt.Sprintf("%d/%d", s.day, s.n),
			fmt.Sprintf("%d/%d", s.exact, s.n), fmt.Sprintf("%d/%d", s.body, s.n), s.simSum/float64(s.n))
	}
	t.Log(b.String())
	for _, site := range sites {
		s := bySite[site]
		if acc := float64(s.title) / float64(s.n); acc < minAccuracy {
			t.Errorf("%s: generic title right on %d of %d pages", site, s.title, s.n)
		}
		if acc := float64(s.exact) / float64(s.n); acc < minAccuracy {
			t.Errorf("%s: generic publish_time right on %d of %d pages (the day on %d)", site, s.exact, s.n, s.day)
		}
		if mean := s.simSum / float64(s.n); mean < 0.90 {
			t.Errorf("%s: generic body similarity %.4f on average, want ≥ 0.90", site, mean)
		}
	}
}
