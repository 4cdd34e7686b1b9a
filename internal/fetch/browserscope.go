package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"

	"zhizhi/internal/browser"
)

// ErrOffSite is the browser gate's refusal of a request a rendered page
// makes to a host other than its own. The browser tier is polite by
// construction: a visit holds its host's in-flight slot for the whole
// page load, so only that host's requests are covered by the limiter's
// caps; a third party's script, font or tracker is never fetched.
var ErrOffSite = errors.New("zhizhi's browser tier loads only the site's own resources")

// visit is one page load by the browser tier: the hosts its requests may
// reach and the limiter holds it keeps on them. Every request of the page
// passes Client.allow, which finds the visit in its context.
type visit struct {
	c    *Client
	host string // the page's host, held by viaBrowser for the whole visit

	mu    sync.Mutex
	hosts map[string]bool // hosts the visit may reach: host, and where its redirects went
	holds []func()        // limiter holds on the hosts the redirect chain reached
	ended bool
}

type visitKey struct{}

// liveHosts counts the visits in progress that may reach each host: the
// browser proxy admits no other host.
type liveHosts struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *liveHosts) add(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[host]++
}

func (l *liveHosts) remove(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[host]--; l.n[host] <= 0 {
		delete(l.n, host)
	}
}

// admit is the browser proxy's Admit.
func (l *liveHosts) admit(host string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[host] > 0 {
		return nil
	}
	return &RefusedError{Host: host, Reason: ErrOffSite.Error() + " (no page of this host is being rendered)"}
}

// startVisit returns ctx carrying a new visit of host (already held by the
// caller). End it with end, after the render.
func (c *Client) startVisit(ctx context.Context, host string) (context.Context, *visit) {
	v := &visit{c: c, host: host, hosts: map[string]bool{host: true}}
	c.browser.live.add(host)
	return context.WithValue(ctx, visitKey{}, v), v
}

func visitFrom(ctx context.Context) *visit {
	v, _ := ctx.Value(visitKey{}).(*visit)
	return v
}

// reaches tells whether host belongs to the visit: the page's host or one
// its main document was redirected to.
func (v *visit) reaches(host string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.hosts[host]
}

// reached lists the hosts the visit has reached so far.
func (v *visit) reached() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	hosts := make([]string, 0, len(v.hosts))
	for h := range v.hosts {
		hosts = append(hosts, h)
	}
	return hosts
}

// scope decides whether u may be loaded by the visit. A host outside the
// visit is admitted only as a hop of the main document's redirect chain
// on the page's own site (www.x.gov.cn → x.gov.cn); then fresh reports
// that its slot must still be held (see hold) before the request goes.
func (v *visit) scope(ctx context.Context, u *url.URL) (fresh bool, err error) {
	host := hostOf(u)
	if v.reaches(host) {
		return false, nil
	}
	info, _ := browser.RequestInfoFrom(ctx)
	if info.Navigation && info.Redirect && sameSite(v.host, host) {
		return true, nil
	}
	return false, fmt.Errorf("%w: %s is not %s", ErrOffSite, host, v.host)
}

// hold takes host's in-flight slot for the rest of the visit, so the
// requests there keep the same caps as the page's own host, and adds host
// to the visit.
func (v *visit) hold(ctx context.Context, host string) error {
	release, err := v.c.limiter.Hold(ctx, host)
	if err != nil {
		return fmt.Errorf("hold %s for the redirected page: %w", host, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended || v.hosts[host] {
		// The visit is over, or a concurrent hop got there first.
		release()
		if v.ended {
			return fmt.Errorf("hold %s: the visit has ended", host)
		}
		return nil
	}
	v.hosts[host] = true
	v.holds = append(v.holds, release)
	v.c.browser.live.add(host)
	return nil
}

// end takes the visit's hosts off the proxy's list and releases the holds
// it took; the page's own host's hold is the caller's to release.
func (v *visit) end() {
	v.mu.Lock()
	holds := v.holds
	hosts := make([]string, 0, len(v.hosts))
	for host := range v.hosts {
		hosts = append(hosts, host)
	}
	v.holds, v.ended = nil, true
	v.mu.Unlock()
	for _, host := range hosts {
		v.c.browser.live.remove(host)
	}
	for _, release := range holds {
		release()
	}
}

// sameSite tells whether two hosts belong to one site: the same registrable
// domain by the public suffix list (www.qingyuan.gov.cn and
// qingyuan.gov.cn). Under a suffix the list does not know (the simulated
// web's .test), only a name and its "www." twin count as one site, and an
// address literal is a site of its own.
func sameSite(a, b string) bool {
	a, b = normalizeHostName(a), normalizeHostName(b)
	if a == b {
		return true
	}
	sa, sb := siteOf(a), siteOf(b)
	return sa != "" && sa == sb
}

func siteOf(host string) string {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return host
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	if !icann && !strings.Contains(suffix, ".") {
		// Not on the list: the default rule would make every name
		// under the top-level label one site.
		return strings.TrimPrefix(host, "www.")
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return "" // the host is a public suffix itself: a site of nobody
	}
	return site
}
