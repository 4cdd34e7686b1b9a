package acquire

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Bounds of a crawl job's request.
const (
	// DefaultCrawlLimit is a job's limit when the request names none.
	DefaultCrawlLimit = 100
	// MaxCrawlLimit is the largest limit a job may ask for.
	MaxCrawlLimit  = 10000
	maxPathRegexes = 50
	maxRegexLength = 300
	maxHookHeaders = 20
	maxHookMeta    = 4 << 10
)

// Values of a crawl job's sitemap option (Firecrawl's).
const (
	SitemapInclude = "include" // the site's sitemap.xml and the links found
	SitemapSkip    = "skip"    // the links found only
	SitemapOnly    = "only"    // the sitemap's URLs only (and the start page)
)

// Webhook events.
const (
	EventStarted   = "started"
	EventPage      = "page"
	EventCompleted = "completed"
	EventFailed    = "failed"
)

var hookEvents = []string{EventStarted, EventPage, EventCompleted, EventFailed}

// crawlFields are the fields of POST /v1/crawl; anything else is refused
// by name. allowExternalLinks is read only to refuse true: a job never
// leaves the site it was started on.
var crawlFields = []string{"url", "limit", "maxDiscoveryDepth", "includePaths", "excludePaths", "regexOnFullURL",
	"allowSubdomains", "crawlEntireDomain", "allowExternalLinks", "sitemap", "webhook", "scrapeOptions", "origin", "integration"}

// crawlOptions is a checked crawl request, as the job keeps it.
type crawlOptions struct {
	URL               string          `json:"url"`
	Limit             int             `json:"limit"`
	MaxDepth          *int            `json:"maxDiscoveryDepth,omitempty"`
	IncludePaths      []string        `json:"includePaths,omitempty"`
	ExcludePaths      []string        `json:"excludePaths,omitempty"`
	RegexOnFullURL    bool            `json:"regexOnFullURL,omitempty"`
	AllowSubdomains   bool            `json:"allowSubdomains"`
	CrawlEntireDomain bool            `json:"crawlEntireDomain"`
	Sitemap           string          `json:"sitemap"`
	Webhook           *webhook        `json:"webhook,omitempty"`
	ScrapeOptions     json.RawMessage `json:"scrapeOptions,omitempty"`
}

// webhook is where a job's events are posted.
type webhook struct {
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers,omitempty"`
	Metadata json.RawMessage   `json:"metadata,omitempty"`
	Events   []string          `json:"events"`
}

func (h *webhook) wants(event string) bool { return h != nil && slices.Contains(h.Events, event) }

// parseCrawl reads and checks a crawl request; its errors are a *failure
// with code invalid_request naming the field.
func (a *API) parseCrawl(w http.ResponseWriter, r *http.Request) (*crawlOptions, *fetchRequest, error) {
	raw, err := readObject(w, r)
	if err != nil {
		return nil, nil, err
	}
	for k := range raw {
		if !slices.Contains(crawlFields, k) {
			return nil, nil, invalid("%s: unknown field; the fields are %s", k, strings.Join(crawlFields, ", "))
		}
	}
	o := &crawlOptions{Limit: DefaultCrawlLimit, Sitemap: SitemapInclude}
	if err := field(raw, "url", &o.URL); err != nil {
		return nil, nil, err
	}
	if err := checkURL("url", o.URL); err != nil {
		return nil, nil, err
	}
	if _, ok := raw["limit"]; ok {
		n, err := millis(raw, "limit", 1)
		if err != nil {
			return nil, nil, err
		}
		if n > MaxCrawlLimit {
			return nil, nil, invalid("limit: at most %d pages per job", MaxCrawlLimit)
		}
		o.Limit = int(n)
	}
	if f, ok := raw["maxDiscoveryDepth"]; ok && string(f) != "null" {
		n, err := millis(raw, "maxDiscoveryDepth", 0)
		if err != nil {
			return nil, nil, err
		}
		d := int(min(n, 1000))
		o.MaxDepth = &d
	}
	for _, name := range []string{"includePaths", "excludePaths"} {
		var list []string
		if err := field(raw, name, &list); err != nil {
			return nil, nil, err
		}
		if len(list) > maxPathRegexes {
			return nil, nil, invalid("%s: at most %d patterns", name, maxPathRegexes)
		}
		for i, p := range list {
			if len(p) > maxRegexLength {
				return nil, nil, invalid("%s[%d]: longer than %d bytes", name, i, maxRegexLength)
			}
			if _, err := regexp.Compile(p); err != nil {
				return nil, nil, invalid("%s[%d]: %q is not a regular expression: %v", name, i, p, err)
			}
		}
		if name == "includePaths" {
			o.IncludePaths = list
		} else {
			o.ExcludePaths = list
		}
	}
	for name, dst := range map[string]*bool{"regexOnFullURL": &o.RegexOnFullURL, "allowSubdomains": &o.AllowSubdomains,
		"crawlEntireDomain": &o.CrawlEntireDomain} {
		if err := field(raw, name, dst); err != nil {
			return nil, nil, err
		}
	}
	var external bool
	if err := field(raw, "allowExternalLinks", &external); err != nil {
		return nil, nil, err
	}
	if external {
		return nil, nil, invalid("allowExternalLinks: zhizhi's crawl jobs stay on the site they start on (and its subdomains with allowSubdomains); start a job per site")
	}
	if err := field(raw, "sitemap", &o.Sitemap); err != nil {
		return nil, nil, err
	}
	if !slices.Contains([]string{SitemapInclude, SitemapSkip, SitemapOnly}, o.Sitemap) {
		return nil, nil, invalid("sitemap: %q is not one of include, skip, only", o.Sitemap)
	}
	if f, ok := raw["webhook"]; ok && string(f) != "null" {
		h, err := a.parseWebhook(r.Context(), f)
		if err != nil {
			return nil, nil, err
		}
		o.Webhook = h
	}
	var scrape map[string]json.RawMessage
	if f, ok := raw["scrapeOptions"]; ok && string(f) != "null" {
		if err := json.Unmarshal(f, &scrape); err != nil || scrape == nil {
			return nil, nil, invalid("scrapeOptions: an object expected, such as {\"formats\": [\"markdown\"]}")
		}
		o.ScrapeOptions = f
	}
	freq, err := a.checkFetch(scrape, false)
	if err != nil {
		if f, ok := err.(*failure); ok {
			f.msg = "scrapeOptions." + f.msg
		}
		return nil, nil, err
	}
	for _, name := range []string{"origin", "integration"} {
		var s string
		if err := field(raw, name, &s); err != nil {
			return nil, nil, err
		}
	}
	return o, freq, nil
}

// parseWebhook reads a webhook given as its URL or as an object {url,
// headers, metadata, events}.
func (a *API) parseWebhook(ctx context.Context, f json.RawMessage) (*webhook, error) {
	h := &webhook{}
	if err := json.Unmarshal(f, &h.URL); err != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(f, &obj); err != nil || obj == nil {
			return nil, invalid("webhook: a URL or an object {url, headers, metadata, events} expected")
		}
		for k := range obj {
			if !slices.Contains([]string{"url", "headers", "metadata", "events"}, k) {
				return nil, invalid("webhook.%s: unknown field; the fields are url, headers, metadata, events", k)
			}
		}
		if err := field(obj, "url", &h.URL); err != nil {
			return nil, invalid("webhook.url: a string expected")
		}
		if err := json.Unmarshal(orNull(obj["headers"]), &h.Headers); err != nil {
			return nil, invalid("webhook.headers: an object of header names and string values expected")
		}
		if len(h.Headers) > maxHookHeaders {
			return nil, invalid("webhook.headers: at most %d headers", maxHookHeaders)
		}
		for k, v := range h.Headers {
			if !validHeader(k, v) {
				return nil, invalid("webhook.headers: %q is not a header zhizhi sends", k)
			}
		}
		if m, ok := obj["metadata"]; ok && string(m) != "null" {
			var meta map[string]any
			if err := json.Unmarshal(m, &meta); err != nil || len(m) > maxHookMeta {
				return nil, invalid("webhook.metadata: an object of at most %d bytes expected", maxHookMeta)
			}
			h.Metadata = m
		}
		if e, ok := obj["events"]; ok && string(e) != "null" {
			if err := json.Unmarshal(e, &h.Events); err != nil {
				return nil, invalid("webhook.events: a list of event names expected")
			}
			for i, ev := range h.Events {
				if !slices.Contains(hookEvents, ev) {
					return nil, invalid("webhook.events[%d]: %q is not one of %s", i, ev, strings.Join(hookEvents, ", "))
				}
			}
		}
	}
	if len(h.Events) == 0 {
		h.Events = hookEvents
	}
	if err := checkURL("webhook.url", h.URL); err != nil {
		return nil, err
	}
	u, _ := url.Parse(h.URL)
	guard := a.d.Client.Guard()
	err := guard.CheckURL(u)
	if err == nil {
		err = guard.CheckName(ctx, u.Hostname())
	}
	if err != nil {
		return nil, invalid("webhook.url: %v; a webhook is posted only where zhizhi may fetch", err)
	}
	return h, nil
}

func orNull(m json.RawMessage) json.RawMessage {
	if m == nil {
		return json.RawMessage("null")
	}
	return m
}

// validHeader refuses header names that are not tokens, values with line
// breaks, and the headers the request's own framing owns.
func validHeader(k, v string) bool {
	if k == "" || strings.ContainsAny(v, "\r\n\x00") || len(v) > 1000 {
		return false
	}
	for _, c := range k {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	switch http.CanonicalHeaderKey(k) {
	case "Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "User-Agent":
		return false
	}
	return true
}
