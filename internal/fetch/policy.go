package fetch

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"time"

	"zhizhi/internal/model"
)

// SitePolicy is what a site's configuration says about fetching from its
// host. The crawl layer fills it from crawl_site and the CMS adapter's
// resilience section (PolicyFor); a host without one gets DefaultSitePolicy.
// Every field can only make zhizhi stricter than the defaults, except for
// Owned hosts.
type SitePolicy struct {
	SiteID int64
	// RespectRobots false skips robots.txt, but only on Owned hosts: on any
	// other host robots.txt is always obeyed.
	RespectRobots bool
	// Owned hosts are ours (the simulated web in benchmarks): their
	// limiter may be looser than the defaults. The client believes it only
	// for a host the resolve map pins to loopback.
	Owned bool
	// Interval is the site's own spacing between requests; stricter than
	// the default 2 s, or anything when Owned.
	Interval time.Duration
	// Burst is an Owned host's bucket size; ignored otherwise.
	Burst int
	// Strategy is TierDirect or TierBrowser (model.StrategyDirect /
	// StrategyBrowser); "direct" and "browser" are accepted too.
	Strategy string
	// EscalateStatus and EscalateSignatures mark a direct answer as a
	// cookie challenge that the browser tier must pass (HTTP 412, a script
	// marker in the body).
	EscalateStatus     []int
	EscalateSignatures []string
	// ChallengeMarkers tell the browser the challenge is still in place;
	// empty means EscalateSignatures.
	ChallengeMarkers []string
	// CaptchaMarkers mark a CAPTCHA wall; nil means DefaultCaptchaMarkers.
	// A CAPTCHA is a stop, never a bypass.
	CaptchaMarkers []string
	// CookieTTL caps how long harvested cookies are reused; zero keeps the
	// expiry the site gave them.
	CookieTTL time.Duration
}

// DefaultCaptchaMarkers are phrases of a CAPTCHA wall. They are specific on
// purpose: a government notice may well mention "验证码" in its text, so
// the bare word is not enough.
var DefaultCaptchaMarkers = []string{`id="captcha"`, "请输入验证码", "人机验证", "滑动验证", "拖动滑块"}

// DefaultSitePolicy is the policy of a host no configuration names:
// robots.txt respected, direct tier, not owned, default limits.
func DefaultSitePolicy() SitePolicy {
	return SitePolicy{RespectRobots: true, Strategy: TierDirect}
}

// Resilience is the CMS adapter's resilience section: when a direct answer
// is a challenge for the browser tier.
type Resilience struct {
	EscalateStatus     []int
	EscalateSignatures []string
	CookieTTL          time.Duration
}

// PolicyFor builds the policy of site's host from its crawl_site row and
// its adapter's resilience rules (zero Resilience for template sites).
func PolicyFor(site model.Site, r Resilience) SitePolicy {
	return SitePolicy{
		SiteID:             site.ID,
		RespectRobots:      site.RespectRobots,
		Owned:              site.Owned,
		Strategy:           normalizeTier(site.DefaultFetchStrategy),
		EscalateStatus:     slices.Clone(r.EscalateStatus),
		EscalateSignatures: slices.Clone(r.EscalateSignatures),
		CookieTTL:          r.CookieTTL,
	}
}

// SiteHost returns the lower-case host of a site's base URL, the key of
// SetSitePolicy; "" when base_url has none.
func SiteHost(site model.Site) string {
	u, err := url.Parse(strings.TrimSpace(site.BaseURL))
	if err != nil {
		return ""
	}
	return normalizeHostName(u.Hostname())
}

func normalizeTier(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case TierBrowser, "browser":
		return TierBrowser
	default:
		return TierDirect
	}
}

// robotsApply reports whether robots.txt is checked under p: always, except
// on owned hosts whose configuration turns it off.
func (p SitePolicy) robotsApply() bool { return p.RespectRobots || !p.Owned }

func (p SitePolicy) hostPolicy(crawlDelay time.Duration) HostPolicy {
	return HostPolicy{Interval: p.Interval, CrawlDelay: crawlDelay, Owned: p.Owned, Burst: p.Burst}
}

func (p SitePolicy) challengeMarkers() []string {
	if len(p.ChallengeMarkers) > 0 {
		return p.ChallengeMarkers
	}
	return p.EscalateSignatures
}

func (p SitePolicy) captchaMarkers() []string {
	if p.CaptchaMarkers != nil {
		return p.CaptchaMarkers
	}
	return DefaultCaptchaMarkers
}

// escalates reports whether a direct answer is a challenge the browser
// tier must pass.
func (p SitePolicy) escalates(status int, body []byte) bool {
	if slices.Contains(p.EscalateStatus, status) {
		return true
	}
	for _, sig := range p.EscalateSignatures {
		if sig != "" && bytes.Contains(body, []byte(sig)) {
			return true
		}
	}
	return false
}

// isCaptcha reports whether an HTML body is a CAPTCHA wall.
func (p SitePolicy) isCaptcha(body []byte) bool {
	for _, m := range p.captchaMarkers() {
		if m != "" && bytes.Contains(body, []byte(m)) {
			return true
		}
	}
	return false
}
