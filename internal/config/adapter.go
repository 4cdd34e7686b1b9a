package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Adapter is a CMS adapter contract, config/cms/<adapter_id>.yaml
// : what every site of one CMS shares.
type Adapter struct {
	Path            string
	AdapterID       string
	Version         string
	Detect          AdapterDetect
	DefaultStrategy string // direct | browser
	Request         AdapterRequest
	Index           AdapterIndex
	List            AdapterList
	Detail          AdapterDetail
	Dedupe          AdapterDedupe
	Resilience      AdapterResilience
	SiteTemplate    AdapterSiteTemplate
	Pos             Positions
}

// AdapterDetect holds the fingerprints that identify the CMS.
type AdapterDetect struct {
	URLSignatures  []string
	BodySignatures []string
}

// AdapterRequest is how requests to the CMS are made.
type AdapterRequest struct {
	Accept     string
	KeepScheme bool
}

// AdapterIndex is the page listing a dept's column tree.
type AdapterIndex struct {
	URL       string // template with {base_url}, {dept_path}
	ConfigVar string
}

// AdapterList is the list API: URL template, paging and field mapping.
type AdapterList struct {
	URL          string // template with {base_url}, {dept_path}, {column_id}, {page} and adapter params
	FirstPage    int
	ItemsPath    string
	TotalPath    string
	ClassifyPath string
	Fields       map[string]string // article field → JSON key in one item
}

// AdapterDetail reads an article page; selectors as in DetailTemplate.
type AdapterDetail struct {
	URLPattern string
	DetailTemplate
}

// AdapterDedupe names the dedupe keys.
type AdapterDedupe struct {
	Keys     []string
	Fallback string
}

// AdapterResilience says when to escalate to the browser tier.
type AdapterResilience struct {
	EscalateStatus         []int
	EscalateBodySignatures []string
	CookieTTLSeconds       int
}

// AdapterSiteTemplate is the skeleton of a site file for this CMS.
type AdapterSiteTemplate struct {
	RequiredParams []string
	Skeleton       string
}

var (
	adapterKeys = []string{"adapter_id", "version", "detect", "default_strategy", "request", "index",
		"list", "detail", "dedupe", "resilience", "site_template"}
	adapterRequired = []string{"adapter_id", "detect", "list", "detail", "site_template"}
	detectKeys      = []string{"url_signatures", "body_signatures"}
	requestKeys     = []string{"accept", "keep_scheme"}
	indexKeys       = []string{"url", "config_var"}
	adapterListKeys = []string{"url", "first_page", "items_path", "total_path", "classify_path", "fields"}
	// listFieldKeys are the article fields a list item may map.
	listFieldKeys = []string{"native_post_id", "title", "url", "doc_no", "index_no", "publisher", "topic_words",
		"publish_time", "publish_date", "effective_date", "open_category", "abstract", "attachments", "abolished", "source"}
	adapterDetailKeys = append([]string{"url_pattern"}, detailKeys...)
	dedupeKeys        = []string{"keys", "fallback"}
	resilienceKeys    = []string{"escalate_to_browser_on", "cookie_ttl_seconds"}
	resilienceAliases = map[string]string{"escalate_to_playwright_on": "escalate_to_browser_on"}
	escalateKeys      = []string{"status", "body_signatures"}
	siteTemplateKeys  = []string{"required_params", "skeleton"}
)

// readAdapter decodes one adapter file; name is the file's stem, which must
// equal adapter_id because sites point at the file by that name.
func (r *reporter) readAdapter(path, name string, root *yaml.Node) *Adapter {
	m := r.readMapping(path, root, "adapter "+name, adapterKeys, nil)
	a := &Adapter{Path: path, Pos: m.positions()}
	for _, key := range adapterRequired {
		if !m.has(key) && key != "adapter_id" {
			m.missing(key, "… (see docs/config.md, CMS adapter files)")
		}
	}
	a.AdapterID = m.str("adapter_id", true, name)
	if a.AdapterID != "" && a.AdapterID != name {
		r.errorf(m.valPos("adapter_id"), fmt.Sprintf("rename the file to %s.yaml or set adapter_id: %s", a.AdapterID, name),
			"adapter_id %q does not match the file name %s.yaml", a.AdapterID, name)
	}
	a.Version = m.str("version", false, "1.0.0")
	a.DefaultStrategy = m.str("default_strategy", false, "direct")
	if m.oneOf("default_strategy", a.DefaultStrategy, strategyValues) {
		a.DefaultStrategy = normalizeStrategy(a.DefaultStrategy)
	}

	if m.has("detect") {
		dm := r.readMapping(path, m.vals["detect"], "detect", detectKeys, nil)
		a.Detect.URLSignatures = dm.strList("url_signatures")
		a.Detect.BodySignatures = dm.strList("body_signatures")
		if len(a.Detect.URLSignatures)+len(a.Detect.BodySignatures) == 0 {
			r.errorf(dm.start(), "add url_signatures or body_signatures", "detect has no signatures")
		}
	}
	if m.has("request") {
		rm := r.readMapping(path, m.vals["request"], "request", requestKeys, nil)
		a.Request.Accept = rm.str("accept", false, "")
		a.Request.KeepScheme = rm.boolean("keep_scheme", false)
	}
	if m.has("index") {
		im := r.readMapping(path, m.vals["index"], "index", indexKeys, nil)
		a.Index.URL = im.str("url", true, `"{base_url}/{dept_path}/gkmlpt/index"`)
		a.Index.ConfigVar = im.str("config_var", false, "")
		r.checkURLTemplate(im, "url", a.Index.URL, []string{"{base_url}"})
	}
	if m.has("list") {
		lm := r.readMapping(path, m.vals["list"], "list", adapterListKeys, nil)
		a.List.URL = lm.str("url", true, `"{base_url}/{dept_path}/…/{column_id}?page={page}"`)
		r.checkURLTemplate(lm, "url", a.List.URL, []string{"{column_id}", "{page}"})
		a.List.FirstPage = 1
		if v, ok := lm.integer("first_page"); ok {
			if v < 0 {
				r.errorf(lm.valPos("first_page"), "use 0 or 1", "first_page %d is negative", v)
			} else {
				a.List.FirstPage = int(v)
			}
		}
		a.List.ItemsPath = lm.str("items_path", true, "articles")
		a.List.TotalPath = lm.str("total_path", false, "total")
		a.List.ClassifyPath = lm.str("classify_path", false, "classify")
		if lm.has("fields") {
			fm := r.readMapping(path, lm.vals["fields"], "list fields", listFieldKeys, nil)
			a.List.Fields = map[string]string{}
			for _, k := range listFieldKeys {
				if v := fm.str(k, false, ""); v != "" {
					a.List.Fields[k] = v
				}
			}
			for _, k := range []string{"title", "url"} {
				if _, ok := a.List.Fields[k]; !ok && !fm.has(k) {
					fm.missing(k, k)
				}
			}
		} else {
			lm.missing("fields", "{native_post_id: id, title: title, url: url}")
		}
	}
	if m.has("detail") {
		dm := r.readMapping(path, m.vals["detail"], "detail", adapterDetailKeys, nil)
		a.Detail.URLPattern = dm.str("url_pattern", false, "")
		a.Detail.DetailTemplate = r.detailFrom(dm, false)
	}
	if m.has("dedupe") {
		dd := r.readMapping(path, m.vals["dedupe"], "dedupe", dedupeKeys, nil)
		a.Dedupe.Keys = dd.strList("keys")
		a.Dedupe.Fallback = dd.str("fallback", false, "url_hash")
	}
	if m.has("resilience") {
		rm := r.readMapping(path, m.vals["resilience"], "resilience", resilienceKeys, resilienceAliases)
		if rm.has("escalate_to_browser_on") {
			em := r.readMapping(path, rm.vals["escalate_to_browser_on"], rm.name("escalate_to_browser_on"), escalateKeys, nil)
			for _, n := range em.seq("status") {
				code, err := strconv.Atoi(n.Value)
				if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || err != nil || code < 100 || code > 599 {
					r.errorf(em.pos(n), "write HTTP status codes such as 412", "status %q is not an HTTP status code", n.Value)
					continue
				}
				a.Resilience.EscalateStatus = append(a.Resilience.EscalateStatus, code)
			}
			a.Resilience.EscalateBodySignatures = em.strList("body_signatures")
		}
		if v, ok := rm.integer("cookie_ttl_seconds"); ok {
			if v < 1 {
				r.errorf(rm.valPos("cookie_ttl_seconds"), "use a positive number of seconds", "cookie_ttl_seconds %d must be positive", v)
			} else {
				a.Resilience.CookieTTLSeconds = int(v)
			}
		}
	}
	if m.has("site_template") {
		sm := r.readMapping(path, m.vals["site_template"], "site_template", siteTemplateKeys, nil)
		a.SiteTemplate.RequiredParams = sm.strList("required_params")
		a.SiteTemplate.Skeleton = sm.str("skeleton", false, "")
	}
	return a
}

// checkURLTemplate requires the placeholders a URL template must contain and
// refuses unbalanced braces.
func (r *reporter) checkURLTemplate(m *mapping, key, tmpl string, need []string) {
	if tmpl == "" {
		return
	}
	if strings.Count(tmpl, "{") != strings.Count(tmpl, "}") {
		r.errorf(m.valPos(key), "close every {placeholder}", "%s template %q has unbalanced braces", key, tmpl)
		return
	}
	var missing []string
	for _, p := range need {
		if !strings.Contains(tmpl, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		r.errorf(m.valPos(key), "add "+strings.Join(missing, " and ")+" where the value goes",
			"%s %s template %q lacks %s", m.what, key, tmpl, strings.Join(missing, ", "))
	}
}
