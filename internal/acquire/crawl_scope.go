package acquire

import (
	"net/url"
	"regexp"
	"strings"

	"zhizhi/internal/extract"
)

// scope is what a crawl job may ask for: its start host (or, with
// allowSubdomains, the host without its "www." and every name under it),
// the start page's directory and below unless crawlEntireDomain, the
// paths includePaths and excludePaths let through, and maxDiscoveryDepth.
type scope struct {
	host       string // the start URL's host, lower-case, with its port
	base       string // the start host's name without "www.", for subdomains
	subdomains bool
	prefix     string // "" with crawlEntireDomain
	include    []*regexp.Regexp
	exclude    []*regexp.Regexp
	fullURL    bool
	maxDepth   int // -1: no limit
}

func newScope(o *crawlOptions) (*scope, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, err
	}
	s := &scope{host: strings.ToLower(u.Host), base: strings.TrimPrefix(strings.ToLower(u.Hostname()), "www."),
		subdomains: o.AllowSubdomains, fullURL: o.RegexOnFullURL, maxDepth: -1}
	if !o.CrawlEntireDomain {
		p := u.EscapedPath()
		if i := strings.LastIndex(p, "/"); i >= 0 {
			s.prefix = p[:i+1]
		}
		if s.prefix == "/" {
			s.prefix = ""
		}
	}
	for _, p := range o.IncludePaths {
		s.include = append(s.include, regexp.MustCompile(p))
	}
	for _, p := range o.ExcludePaths {
		s.exclude = append(s.exclude, regexp.MustCompile(p))
	}
	if o.MaxDepth != nil {
		s.maxDepth = *o.MaxDepth
	}
	return s, nil
}

// hostIn reports whether u's host is the job's.
func (s *scope) hostIn(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if strings.ToLower(u.Host) == s.host {
		return true
	}
	if !s.subdomains {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == s.base || strings.HasSuffix(h, "."+s.base)
}

// admit returns the normalized form of link, found at depth, and whether
// the job may ask for it.
func (s *scope) admit(link string, depth int) (string, bool) {
	if s.maxDepth >= 0 && depth > s.maxDepth {
		return "", false
	}
	if raw, err := url.Parse(link); err != nil || raw.User != nil {
		// Normalizing would drop the user information the guard
		// refuses: such a link is not followed at all.
		return "", false
	}
	n, err := extract.NormalizeURL(link)
	if err != nil {
		return "", false
	}
	u, err := url.Parse(n)
	if err != nil || !s.hostIn(u) {
		return "", false
	}
	if s.prefix != "" && !strings.HasPrefix(u.EscapedPath(), s.prefix) {
		return "", false
	}
	subject := u.EscapedPath()
	if s.fullURL {
		subject = n
	}
	if len(s.include) > 0 {
		ok := false
		for _, re := range s.include {
			if re.MatchString(subject) {
				ok = true
				break
			}
		}
		if !ok {
			return "", false
		}
	}
	for _, re := range s.exclude {
		if re.MatchString(subject) {
			return "", false
		}
	}
	return n, true
}
