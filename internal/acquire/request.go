package acquire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"

	"zhizhi/internal/pages"
)

// Formats a request may ask for.
const (
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
	FormatRawHTML  = "rawHtml"
	FormatText     = "text"
	FormatLinks    = "links"
	FormatMetadata = "metadata"
)

var formats = []string{FormatMarkdown, FormatHTML, FormatRawHTML, FormatText, FormatLinks, FormatMetadata}

// fetchRequest is a checked request.
type fetchRequest struct {
	URL             string
	Formats         map[string]bool
	OnlyMainContent bool
	Include         cascadia.Selector // nil: none given
	Exclude         cascadia.Selector
	Timeout         time.Duration
	MaxAge          time.Duration
	MaxBytes        int64

	// The caller's intent, for the provider router (router.go): whether
	// the browser may be used, whether an asynchronous answer would do,
	// and the most browser seconds to spend (nil: no cap of its own).
	AllowBrowser      bool
	AllowAsync        bool
	MaxBrowserSeconds *int64
	intent            []string // the intent fields given, by name
}

// fields are the body's fields; anything else is refused by name, so a
// misspelt option (or one zhizhi does not offer, such as a way past
// robots.txt) never passes unnoticed.
var fields = []string{"url", "formats", "onlyMainContent", "includeTags", "excludeTags", "timeout", "maxAge", "max_bytes", "origin",
	"allow_browser", "allow_async", "max_cost"}

// scrapeOptionFields are the fields of a crawl job's scrapeOptions: a
// fetch's, but for the URL.
var scrapeOptionFields = []string{"formats", "onlyMainContent", "includeTags", "excludeTags", "timeout", "maxAge", "max_bytes"}

// parseRequest reads and checks a request body. Its errors are a
// *failure with code invalid_request naming the field.
func (a *API) parseRequest(w http.ResponseWriter, r *http.Request) (*fetchRequest, error) {
	raw, err := readObject(w, r)
	if err != nil {
		return nil, err
	}
	return a.checkFetch(raw, true)
}

// readObject reads a request body that must be one JSON object of plain
// text, and returns its fields.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, invalid("request body: more than %d bytes", maxRequestBody)
		}
		return nil, invalid("request body: %v", err)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, invalid("send the body as JSON with Content-Type: application/json")
	}
	if place, bad := pages.BadJSONText(body, nil); bad {
		return nil, invalid("%s: holds a control character or invalid UTF-8; send plain text", pages.PrintablePlace(place))
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, invalid("request body: one JSON object expected, such as {\"url\": \"https://www.gov.cn/\"}")
	}
	if dec.More() {
		return nil, invalid("request body: one JSON object expected, more found")
	}
	return raw, nil
}

// checkFetch checks the fields of a fetch: a request's body (withURL), or
// a crawl job's scrapeOptions, which name no URL (the job gives each
// page's).
func (a *API) checkFetch(raw map[string]json.RawMessage, withURL bool) (*fetchRequest, error) {
	for k := range raw {
		if !slices.Contains(fields, k) || !withURL && !slices.Contains(scrapeOptionFields, k) {
			names := fields
			if !withURL {
				names = scrapeOptionFields
			}
			return nil, invalid("%s: unknown field; the fields are %s", k, strings.Join(names, ", "))
		}
	}
	req := &fetchRequest{Formats: map[string]bool{FormatMarkdown: true}, OnlyMainContent: true,
		Timeout: a.d.DefaultTimeout, MaxBytes: a.d.MaxBytes}

	if withURL {
		if err := field(raw, "url", &req.URL); err != nil {
			return nil, err
		}
		if err := checkURL("url", req.URL); err != nil {
			return nil, err
		}
	}
	if f, ok := raw["formats"]; ok {
		var list []json.RawMessage
		if err := json.Unmarshal(f, &list); err != nil {
			return nil, invalid("formats: a list of format names expected, such as [\"markdown\", \"links\"]")
		}
		req.Formats = map[string]bool{}
		for i, e := range list {
			name, err := formatName(e)
			if err != nil || !slices.Contains(formats, name) {
				return nil, invalid("formats[%d]: not a format zhizhi writes; the formats are %s", i, strings.Join(formats, ", "))
			}
			req.Formats[name] = true
		}
	}
	if err := field(raw, "onlyMainContent", &req.OnlyMainContent); err != nil {
		return nil, err
	}
	var err2 error
	if req.Include, err2 = selectors(raw, "includeTags"); err2 != nil {
		return nil, err2
	}
	if req.Exclude, err2 = selectors(raw, "excludeTags"); err2 != nil {
		return nil, err2
	}
	if _, ok := raw["timeout"]; ok {
		ms, err := millis(raw, "timeout", 1)
		if err != nil {
			return nil, err
		}
		req.Timeout = min(time.Duration(ms)*time.Millisecond, a.d.MaxTimeout)
	}
	if _, ok := raw["maxAge"]; ok {
		ms, err := millis(raw, "maxAge", 0)
		if err != nil {
			return nil, err
		}
		req.MaxAge = time.Duration(ms) * time.Millisecond
	}
	if _, ok := raw["max_bytes"]; ok {
		n, err := millis(raw, "max_bytes", 1)
		if err != nil {
			return nil, err
		}
		req.MaxBytes = min(n, a.d.MaxBytes)
	}
	var origin string
	if err := field(raw, "origin", &origin); err != nil {
		return nil, err
	}
	if withURL {
		if err := intent(raw, req); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// intent reads allow_browser, allow_async and max_cost ({"browser_seconds":
// n}, the only cost a page's provider changes).
func intent(raw map[string]json.RawMessage, req *fetchRequest) error {
	for _, name := range []string{"allow_browser", "allow_async", "max_cost"} {
		if _, ok := raw[name]; ok {
			req.intent = append(req.intent, name)
		}
	}
	if err := field(raw, "allow_browser", &req.AllowBrowser); err != nil {
		return err
	}
	if err := field(raw, "allow_async", &req.AllowAsync); err != nil {
		return err
	}
	mc, ok := raw["max_cost"]
	if !ok || string(mc) == "null" {
		return nil
	}
	var cost map[string]json.RawMessage
	if err := json.Unmarshal(mc, &cost); err != nil || cost == nil {
		return invalid("max_cost: an object expected, such as {\"browser_seconds\": 20}")
	}
	for k := range cost {
		if k != "browser_seconds" {
			return invalid("max_cost.%s: unknown; max_cost has browser_seconds (what a page may cost besides its one request and its bytes, which max_bytes bounds)", k)
		}
	}
	if _, ok := cost["browser_seconds"]; ok {
		n, err := millis(cost, "browser_seconds", 0)
		if err != nil {
			return invalid("max_cost.browser_seconds: a whole number from 0 expected")
		}
		req.MaxBrowserSeconds = &n
	}
	return nil
}

// requestURL is the body's url, required: what names what it is (for the
// message when it is missing).
func requestURL(raw map[string]json.RawMessage, what string) (string, error) {
	var s string
	if err := field(raw, "url", &s); err != nil {
		return "", err
	}
	if s == "" {
		return "", invalid("url: required, %s (http or https)", what)
	}
	return s, checkURL("url", s)
}

// onlyKnown refuses a body field that is not among known, by name.
func onlyKnown(raw map[string]json.RawMessage, known []string) error {
	for k := range raw {
		if !slices.Contains(known, k) {
			return invalid("%s: unknown field; the fields are %s", k, strings.Join(known, ", "))
		}
	}
	return nil
}

// checkURL refuses a URL that is missing, too long or not absolute; any
// other scheme than http(s) is the SSRF guard's to refuse, in its words.
func checkURL(name, u string) error {
	if u == "" {
		return invalid("%s: required, the page to fetch (http or https)", name)
	}
	if len(u) > maxURLLength {
		return invalid("%s: longer than %d bytes", name, maxURLLength)
	}
	if p, err := url.Parse(u); err != nil || p.Scheme == "" || (p.Scheme == "http" || p.Scheme == "https") && p.Host == "" {
		return invalid("%s: %q is not an absolute URL (give it as https://host/path)", name, u)
	}
	return nil
}

// formatName reads a format given as a name ("markdown") or, as newer
// Firecrawl clients send it, as an object naming its type ({"type":
// "markdown"}).
func formatName(e json.RawMessage) (string, error) {
	var name string
	if err := json.Unmarshal(e, &name); err == nil {
		return name, nil
	}
	var obj struct {
		Type string `json:"type"`
	}
	dec := json.NewDecoder(bytes.NewReader(e))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return "", err
	}
	return obj.Type, nil
}

// field decodes raw[name] into v when present, naming the field on error.
func field(raw map[string]json.RawMessage, name string, v any) error {
	f, ok := raw[name]
	if !ok || string(f) == "null" {
		return nil
	}
	if err := json.Unmarshal(f, v); err != nil {
		return invalid("%s: %s expected", name, kindOf(v))
	}
	return nil
}

func kindOf(v any) string {
	switch v.(type) {
	case *string:
		return "a string"
	case *bool:
		return "true or false"
	case *[]string:
		return "a list of strings"
	}
	return "a value of another kind"
}

// millis is a whole number of at least least (milliseconds, or bytes).
func millis(raw map[string]json.RawMessage, name string, least int64) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw[name], &n); err != nil || n < least {
		return 0, invalid("%s: a whole number from %d expected", name, least)
	}
	return n, nil
}

// selectors compiles a list of CSS selectors into one group (nil for
// none), each checked on its own so that a bad one is named.
func selectors(raw map[string]json.RawMessage, name string) (cascadia.Selector, error) {
	var list []string
	if err := field(raw, name, &list); err != nil {
		return nil, err
	}
	if len(list) > maxSelectors {
		return nil, invalid("%s: at most %d selectors", name, maxSelectors)
	}
	if len(list) == 0 {
		return nil, nil
	}
	for i, s := range list {
		if len(s) > maxSelectorLength {
			return nil, invalid("%s[%d]: longer than %d bytes", name, i, maxSelectorLength)
		}
		if _, err := cascadia.Compile(s); err != nil {
			return nil, invalid("%s[%d]: %q is not a CSS selector: %v", name, i, s, err)
		}
	}
	g, err := cascadia.Compile(strings.Join(list, ", "))
	if err != nil {
		return nil, invalid("%s: %v", name, err)
	}
	return g, nil
}
