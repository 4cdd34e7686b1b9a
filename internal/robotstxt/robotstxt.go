// Package robotstxt owns zhizhi's reading of robots.txt (RFC 9309, our own
// matcher): parsing a file, selecting the group for an agent and deciding a
// path, naming the line that decided it. It does no I/O; fetching the file,
// caching it and what a failed fetch means belong to fetch.
package robotstxt

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/urlpath"
)

// ParseLimit is how much of a robots.txt is parsed. RFC 9309 §2.5 asks
// for at least 500 KiB; the rest of a larger file is ignored.
const ParseLimit = 512 << 10

// Decision is the answer of Robots.Decide: whether a path may be fetched and
// which rule (verbatim, without comment) on which line decided it. A decision
// made without a rule (no rule matched, status-based allow or deny, the
// robots.txt path itself) has Line 0 and says why in Reason.
type Decision struct {
	Allowed bool
	Rule    string
	Line    int
	Reason  string
}

// String renders the decision for people debugging rules, e.g.
// `blocked by robots.txt line 7 "Disallow: /zwgk/"`.
func (d Decision) String() string {
	verb := "allowed"
	if !d.Allowed {
		verb = "blocked"
	}
	if d.Line > 0 {
		return fmt.Sprintf("%s by robots.txt line %d %q", verb, d.Line, d.Rule)
	}
	return verb + " (" + d.Reason + ")"
}

// Rule is one allow or disallow line that applies to our agent.
type Rule struct {
	Allow   bool
	Pattern string // normalised: canonical percent-encoding, leading '/'
	Text    string // the line as written, comment and surrounding space removed
	Line    int

	// The pattern split at '*' with its '$' anchor, prepared once so that
	// matching allocates nothing.
	segs     []string
	anchored bool
}

func newRule(allow bool, pattern, text string, line int) Rule {
	r := Rule{Allow: allow, Pattern: pattern, Text: text, Line: line}
	p := pattern
	if strings.HasSuffix(p, "$") {
		p, r.anchored = p[:len(p)-1], true
	}
	r.segs = strings.Split(p, "*")
	return r
}

// Robots holds the rules of one robots.txt that apply to one agent. The zero
// value allows everything.
type Robots struct {
	// Agent is the product token the rules were selected for.
	Agent string
	// Group says which group was used: the agent's own token, "*" or ""
	// when no group applies.
	Group string
	Rules []Rule
	// Sitemaps lists every sitemap line of the file, in order.
	Sitemaps []string
	// crawlDelay is the strictest Crawl-delay among the selected groups.
	crawlDelay    time.Duration
	hasCrawlDelay bool
	// fixed, when set, decides every path except /robots.txt.
	fixed *Decision
}

// CrawlDelay returns the Crawl-delay of the selected group(s), if any. It is
// not part of RFC 9309; zhizhi honours it when stricter than its own spacing.
func (r *Robots) CrawlDelay() (time.Duration, bool) { return r.crawlDelay, r.hasCrawlDelay }

// AllowAll returns Robots that allow every path, saying why.
func AllowAll(reason string) *Robots {
	return &Robots{fixed: &Decision{Allowed: true, Reason: reason}}
}

// DisallowAll returns Robots that refuse every path except /robots.txt.
func DisallowAll(reason string) *Robots {
	return &Robots{fixed: &Decision{Allowed: false, Reason: reason}}
}

// group is one group of the file while parsing.
type group struct {
	agents        []string // lower-cased product tokens, or "*"
	rules         []Rule
	crawlDelay    time.Duration
	hasCrawlDelay bool
}

// AgentToken extracts the product token from a user-agent value the way
// RFC 9309 §2.2.1 defines it: the leading run of [a-zA-Z_-], lower-cased.
// "zhizhi/0.1 (+https://…)" gives "zhizhi"; "*" gives "*".
func AgentToken(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	n := 0
	for n < len(v) {
		c := v[n]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			n++
			continue
		}
		break
	}
	return strings.ToLower(v[:n])
}

// Parse parses a robots.txt body and selects the rules for agent (a
// product token, or a full User-Agent from which the token is taken). It
// never fails: lines it cannot understand are skipped, and only the first
// ParseLimit bytes are read.
func Parse(body []byte, agent string) *Robots {
	token := AgentToken(agent)
	if len(body) > ParseLimit {
		body = body[:ParseLimit]
		// Drop the cut line: half a rule could mean something else.
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i+1]
		} else {
			body = nil
		}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))

	var (
		groups   []*group
		cur      *group
		inAgents bool // the previous group line was a user-agent line
		sitemaps []string
	)
	lineNo := 0
	for len(body) > 0 {
		lineNo++
		var line []byte
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			line, body = body, nil
		} else {
			line = body[:i]
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				body = body[i+2:]
			} else {
				body = body[i+1:]
			}
		}
		if j := bytes.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		text := strings.TrimSpace(string(line))
		key, value, ok := strings.Cut(text, ":")
		if !ok {
			continue // not a key: value line; skipped, never fatal
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent", "useragent", "user agent":
			if cur == nil || !inAgents {
				cur = &group{}
				groups = append(groups, cur)
			}
			inAgents = true
			if t := AgentToken(value); t != "" {
				cur.agents = append(cur.agents, t)
			}
		case "allow", "disallow", "dissallow", "dissalow", "disalow", "disallaw":
			inAgents = false
			if cur == nil || value == "" {
				continue // outside any group, or an empty rule: no rule (RFC 9309 §2.2.2)
			}
			p := value
			if p[0] != '/' && p[0] != '*' {
				// The RFC requires a leading '/'; honouring the rule with
				// one added is the polite reading of a sloppy file.
				p = "/" + p
			}
			cur.rules = append(cur.rules, newRule(key == "allow", normalizePath(p), text, lineNo))
		case "crawl-delay", "crawldelay", "crawl delay":
			inAgents = false
			if cur == nil {
				continue
			}
			secs, err := strconv.ParseFloat(value, 64)
			if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
				continue
			}
			// Cap absurd values so the duration cannot overflow; a day
			// between requests already means "do not crawl".
			secs = math.Min(secs, 86400)
			d := time.Duration(secs * float64(time.Second))
			if !cur.hasCrawlDelay || d > cur.crawlDelay {
				cur.crawlDelay, cur.hasCrawlDelay = d, true
			}
		case "sitemap", "site-map":
			// Sitemaps belong to the file, not to a group (RFC 9309 §2.2.4).
			if value != "" {
				sitemaps = append(sitemaps, value)
			}
		default:
			// Unknown keys neither start nor end a group.
		}
	}

	r := &Robots{Agent: token, Sitemaps: sitemaps}
	pick := func(want string) bool {
		found := false
		for _, g := range groups {
			for _, a := range g.agents {
				if a == want {
					found = true
					r.Rules = append(r.Rules, g.rules...)
					if g.hasCrawlDelay && (!r.hasCrawlDelay || g.crawlDelay > r.crawlDelay) {
						r.crawlDelay, r.hasCrawlDelay = g.crawlDelay, true
					}
					break
				}
			}
		}
		return found
	}
	switch {
	case token != "" && token != "*" && pick(token):
		r.Group = token
	case pick("*"):
		r.Group = "*"
	}
	return r
}

// Decide says whether path (the URL's path and query, as sent on the wire)
// may be fetched. The longest matching pattern wins; allow wins a tie;
// /robots.txt is always allowed.
func (r *Robots) Decide(path string) Decision {
	if path == "" {
		path = "/"
	}
	norm := normalizePath(path)
	// A server resolves "." and ".." segments before it serves a path, so
	// the rules judge the path it will serve: /a/../zwgk/rsrm/ is /zwgk/rsrm/.
	if p, q, hasQuery := strings.Cut(norm, "?"); strings.Contains(p, ".") {
		norm = urlpath.RemoveDotSegments(p)
		if hasQuery {
			norm += "?" + q
		}
	}
	if p, _, _ := strings.Cut(norm, "?"); p == "/robots.txt" {
		return Decision{Allowed: true, Reason: "robots.txt itself is always allowed"}
	}
	if r == nil {
		return Decision{Allowed: true, Reason: "no rule matched"}
	}
	if r.fixed != nil {
		return *r.fixed
	}
	best := -1
	for i := range r.Rules {
		if !r.Rules[i].matches(norm) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		rule, b := r.Rules[i], r.Rules[best]
		if len(rule.Pattern) > len(b.Pattern) || len(rule.Pattern) == len(b.Pattern) && rule.Allow && !b.Allow {
			best = i
		}
	}
	if best < 0 {
		return Decision{Allowed: true, Reason: "no rule matched"}
	}
	b := r.Rules[best]
	return Decision{Allowed: b.Allow, Rule: b.Text, Line: b.Line}
}

// DecideURL decides for a whole URL, using its escaped path and query.
func (r *Robots) DecideURL(u *url.URL) Decision {
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return r.Decide(p)
}

// matches reports whether the rule's pattern (normalised, with '*' wildcards and an
// optional trailing '$' anchor) matches a prefix of path (or all of it when
// anchored). Leftmost greedy placement of each literal segment is enough:
// placing a segment earlier never prevents a later one from matching.
func (r Rule) matches(path string) bool {
	segs, anchored := r.segs, r.anchored
	if segs == nil {
		// A rule built by hand rather than parsed; Robots may be shared
		// between goroutines, so prepare a copy instead of caching.
		tmp := newRule(r.Allow, r.Pattern, r.Text, r.Line)
		segs, anchored = tmp.segs, tmp.anchored
	}
	if !strings.HasPrefix(path, segs[0]) {
		return false
	}
	pos := len(segs[0])
	if len(segs) == 1 {
		return !anchored || pos == len(path)
	}
	last := len(segs) - 1
	for _, s := range segs[1:last] {
		i := strings.Index(path[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	tail := segs[last]
	if anchored {
		return len(path)-len(tail) >= pos && strings.HasSuffix(path, tail)
	}
	return strings.Contains(path[pos:], tail)
}

// normalizePath brings a URL path into the canonical form rules are compared
// in: %XX of unreserved characters decoded, the hex of other escapes upper-
// cased, and raw bytes that cannot stand in a URL (non-ASCII, controls,
// space, …) percent-encoded as UTF-8 octets.
// '*' and '$' are legal URL characters and pass through, so the same function
// serves rule patterns, where they are operators.
func normalizePath(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[v>>4])
				b.WriteByte(hex[v&15])
			}
			continue
		}
		if c == '%' || c >= 0x80 || c <= 0x20 || c == 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
