package onboard

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"

	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// workers is how many sites are read at once; the fetcher keeps at most
// four requests in flight overall, so more would only queue.
const workers = 4

// maxDepts bounds the dept sub-sites taken from one home page: a city
// portal has forty or so, and a page listing thousands is not a portal.
const maxDepts = 300

// Wizard runs the steps that read the web. It holds no state between
// steps: each returns plain data the next one takes. It writes nothing
// itself; its fetcher records each request (crawl_log, host state, a
// challenge's cookies) as it does every request.
type Wizard struct {
	// Fetch is the polite fetcher (robots.txt, limiter, breaker, SSRF
	// guard); every request the wizard makes goes through it and lands
	// in crawl_log like any other.
	Fetch *fetch.Client
	// Bundle is the live configuration, read only: its CMS adapters
	// decide detection and scanning, its sites say which hosts are
	// configured already and which site codes are taken.
	Bundle *config.Bundle
	// Progress, when set, hears of the work as it is done: each site
	// detected, each dept scanned, each site scanned. A batch takes
	// minutes at the polite pace, and a page shows it advancing. It is
	// called from the wizard's workers, several at once, and must be
	// quick.
	Progress func(Event)
}

// Event is one piece of finished work, for Progress. Exactly one of
// Detection, Dept and Site is set.
type Event struct {
	// BaseURL is the site the work was for.
	BaseURL string
	// Detection is a site's detection, done.
	Detection *Detection
	// Dept is one dept row of the site, scanned.
	Dept *Dept
	// Site is the site, scanned with all its depts; its site_code is
	// given only when the whole batch is scanned.
	Site *Site
}

func (w *Wizard) report(e Event) {
	if w.Progress != nil {
		w.Progress(e)
	}
}

// Detection is step 1's answer for one pasted line.
type Detection struct {
	Line    int    `json:"line"`
	BaseURL string `json:"base_url"`
	// SiteName is the home page's <title>.
	SiteName string `json:"site_name,omitempty"`
	// AdapterID is the matched CMS adapter; empty when none matched (the
	// person then chooses a template site file or a new adapter).
	AdapterID string `json:"adapter_id,omitempty"`
	// Evidence says which fingerprint matched, where.
	Evidence string `json:"evidence,omitempty"`
	// DeptLinks are the dept sub-sites the home page links to, for a
	// matched adapter with a dept index page.
	DeptLinks []DeptLink `json:"dept_links,omitempty"`
	// Browser: the home page was only served through the browser tier
	// (a cookie challenge), so the draft asks for fetch_strategy browser.
	Browser bool `json:"browser,omitempty"`
	// ConfiguredAs is the site_code of the configured site with this
	// host, if there is one: it is onboarded already.
	ConfiguredAs string `json:"configured_as,omitempty"`
	// Problem says in words why the site could not be checked; the
	// other fields are then empty.
	Problem string `json:"problem,omitempty"`
}

// Matched reports whether an adapter matched.
func (d Detection) Matched() bool { return d.AdapterID != "" && d.Problem == "" }

// DeptLink is one dept sub-site link of a home page.
type DeptLink struct {
	DeptPath string `json:"dept_path"`
	Text     string `json:"text,omitempty"`
}

// Detect runs each line's detection: the site's home page, fetched
// politely, is checked against every CMS adapter's detect section
// (url_signatures in the page's links and its final URL,
// body_signatures in its HTML). Results come in the order of lines; a
// site that cannot be read gets a Problem, never an error for the batch.
func (w *Wizard) Detect(ctx context.Context, lines []Line) []Detection {
	out := make([]Detection, len(lines))
	parallel(len(lines), func(i int) {
		out[i] = w.detect(ctx, lines[i])
		d := out[i]
		w.report(Event{BaseURL: d.BaseURL, Detection: &d})
	})
	return out
}

// parallel runs fn(0..n-1) on at most workers goroutines.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func (w *Wizard) detect(ctx context.Context, l Line) Detection {
	d := Detection{Line: l.Line, BaseURL: l.BaseURL}
	base, problem := normalizeBaseURL(l.BaseURL)
	if problem != "" {
		d.Problem = problem
		return d
	}
	d.BaseURL = base
	d.ConfiguredAs = w.configuredAs(base)
	resp, err := w.get(ctx, base+"/", model.PurposeProbe)
	if err != nil {
		d.Problem = fetch.Explain("", err)
		return d
	}
	if resp.Status >= 400 {
		d.Problem = fetch.ExplainStatus("首页", resp.Status)
		return d
	}
	d.Browser = resp.Tier == fetch.TierBrowser
	html, _, err := resp.HTML()
	if err != nil {
		d.Problem = "首页无法解码：" + err.Error()
		return d
	}
	page, err := url.Parse(resp.URL)
	if err != nil {
		page, _ = url.Parse(base + "/")
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		d.Problem = "首页无法解析：" + err.Error()
		return d
	}
	d.SiteName = extract.CleanText(doc.Find("title").First().Text())
	links := pageLinks(doc, page)
	for _, a := range w.adapters() {
		evidence := matchDetect(a.Detect, page, links, html)
		if evidence == "" {
			continue
		}
		d.AdapterID, d.Evidence = a.AdapterID, evidence
		d.DeptLinks = deptLinks(a, page, links)
		break
	}
	return d
}

// adapters returns the loaded CMS adapters by id.
func (w *Wizard) adapters() []*config.Adapter {
	var out []*config.Adapter
	for _, a := range w.Bundle.CMS {
		if a != nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AdapterID < out[j].AdapterID })
	return out
}

// configuredAs is the site_code of the configured site on base's host.
func (w *Wizard) configuredAs(base string) string {
	host := hostOf(base)
	for _, s := range w.Bundle.Sites {
		if host != "" && hostOf(s.BaseURL) == host {
			return s.SiteCode
		}
	}
	return ""
}

func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Host), ".")
}

// link is one resolved link of a page with its text.
type link struct {
	u    *url.URL
	text string
}

// pageLinks returns the page's links, scripts, frames and forms resolved
// against it: the places a CMS's URLs show.
func pageLinks(doc *goquery.Document, page *url.URL) []link {
	var out []link
	doc.Find("a[href], link[href], script[src], iframe[src], frame[src], form[action]").Each(func(_ int, s *goquery.Selection) {
		raw := ""
		for _, attr := range []string{"href", "src", "action"} {
			if v, ok := s.Attr(attr); ok {
				raw = v
				break
			}
		}
		u, err := extract.Resolve(page, strings.TrimSpace(raw))
		if err != nil || u.Host == "" {
			return
		}
		out = append(out, link{u: u, text: extract.CleanText(s.Text())})
	})
	return out
}

// matchDetect returns what matched of det, or "".
func matchDetect(det config.AdapterDetect, page *url.URL, links []link, html []byte) string {
	for _, sig := range det.URLSignatures {
		if strings.Contains(page.RequestURI(), sig) {
			return fmt.Sprintf("网址含 %s", sig)
		}
		for _, l := range links {
			// A link to another host says nothing about this one.
			if strings.EqualFold(l.u.Host, page.Host) && strings.Contains(l.u.RequestURI(), sig) {
				return fmt.Sprintf("首页链接 %s 含 %s", l.u.RequestURI(), sig)
			}
		}
	}
	for _, sig := range det.BodySignatures {
		if bytes.Contains(html, []byte(sig)) {
			return fmt.Sprintf("首页含 %s", sig)
		}
	}
	return ""
}

// deptPathRe is what lint accepts as a dept_path.
var deptPathRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)

// indexPathRe turns the adapter's index URL template into a pattern of
// link paths with the dept path as its group, or nil when the template
// has no {dept_path} right after {base_url}.
func indexPathRe(a *config.Adapter) *regexp.Regexp {
	rest, ok := strings.CutPrefix(a.Index.URL, "{base_url}")
	if !ok || !strings.Contains(rest, "{dept_path}") {
		return nil
	}
	before, after, _ := strings.Cut(rest, "{dept_path}")
	if strings.ContainsAny(before+after, "{}?") {
		return nil
	}
	return regexp.MustCompile("^" + regexp.QuoteMeta(before) + `([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)` + regexp.QuoteMeta(after) + "/?$")
}

// deptLinks returns the dept sub-sites the page links to, in page order.
func deptLinks(a *config.Adapter, page *url.URL, links []link) []DeptLink {
	re := indexPathRe(a)
	if re == nil {
		return nil
	}
	var out []DeptLink
	for _, l := range links {
		if !strings.EqualFold(l.u.Host, page.Host) {
			continue
		}
		m := re.FindStringSubmatch(l.u.Path)
		if m == nil || !deptPathRe.MatchString(m[1]) || len(m[1]) > 100 {
			continue
		}
		if slices.ContainsFunc(out, func(d DeptLink) bool { return d.DeptPath == m[1] }) {
			continue
		}
		out = append(out, DeptLink{DeptPath: m[1], Text: l.text})
		if len(out) == maxDepts {
			break
		}
	}
	return out
}
