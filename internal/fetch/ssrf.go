package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ResolveMap pins host names to addresses, like curl --resolve: a request
// for a listed host connects to the given ip:port whatever the URL's port,
// with the original Host header. It is the only way to reach loopback; the
// simulated web and every test use it. Keys are lower-case host names.
type ResolveMap map[string]string

// ParseResolveMap reads "host=ip:port,host2=ip:port" (ZHIZHI_RESOLVE,
// --resolve). Spaces around entries are ignored; an empty string is an
// empty map.
func ParseResolveMap(s string) (ResolveMap, error) {
	m := ResolveMap{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		host, addr, ok := strings.Cut(entry, "=")
		host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
		addr = strings.TrimSpace(addr)
		if !ok || host == "" || addr == "" {
			return nil, fmt.Errorf("parse resolve map: entry %q: want host=ip:port", entry)
		}
		if strings.ContainsAny(host, "/:@ ") {
			return nil, fmt.Errorf("parse resolve map: entry %q: %q is not a host name", entry, host)
		}
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return nil, fmt.Errorf("parse resolve map: entry %q: %q is not ip:port", entry, addr)
		}
		if ap.Port() == 0 {
			return nil, fmt.Errorf("parse resolve map: entry %q: port 0", entry)
		}
		if prev, dup := m[host]; dup && prev != ap.String() {
			return nil, fmt.Errorf("parse resolve map: entry %q: %s is already mapped to %s", entry, host, prev)
		}
		m[host] = ap.String()
	}
	return m, nil
}

// String renders the map in the form ParseResolveMap reads, sorted by host.
func (m ResolveMap) String() string {
	hosts := make([]string, 0, len(m))
	for h := range m {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = h + "=" + m[h]
	}
	return strings.Join(parts, ",")
}

// lookup returns the pinned address for host, if any.
func (m ResolveMap) lookup(host string) (string, bool) {
	addr, ok := m[normalizeHostName(host)]
	return addr, ok
}

// Loopback reports whether the map pins host to a loopback address: a
// host running on this machine, the only kind that may be owned.
func (m ResolveMap) Loopback(host string) bool {
	addr, ok := m.lookup(host)
	if !ok {
		return false
	}
	ap, err := netip.ParseAddrPort(addr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

func normalizeHostName(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// RefusedError is a request the SSRF guard would not make. Its message says
// why in words a user can act on, e.g. "refused: www.x.gov.test resolves to
// private address 10.1.2.3".
type RefusedError struct {
	Host   string // the host as the URL or dial named it
	IP     string // the address judged, if the refusal is about one
	Reason string // e.g. "private address", "scheme ftp"
}

func (e *RefusedError) Error() string {
	switch {
	case e.IP == "":
		return "refused: " + e.Host + ": " + e.Reason
	case e.IP == e.Host:
		return "refused: " + e.Host + " is a " + e.Reason
	default:
		return "refused: " + e.Host + " resolves to " + e.Reason + " " + e.IP
	}
}

// DefaultAllowedPorts are the ports any host may be reached on.
var DefaultAllowedPorts = []int{80, 443}

// Guard decides which connections zhizhi may open. Its DialContext checks
// the resolved address of every connection, so redirects and DNS rebinding
// cannot sneak past a check made earlier on the URL.
type Guard struct {
	// Resolve pins hosts to addresses; only these may be loopback.
	Resolve ResolveMap
	// AllowedPorts are the ports of hosts outside Resolve; the ports in
	// Resolve are allowed as well. Empty means DefaultAllowedPorts.
	AllowedPorts []int
	// LookupIP resolves a host name; nil uses the system resolver. Tests
	// inject one so that no real DNS is asked.
	LookupIP func(ctx context.Context, host string) ([]net.IP, error)
	// Dial opens the connection to an address the guard has approved; nil
	// uses a net.Dialer. Tests wrap it to prove only loopback is reached.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewGuard returns a Guard with the system resolver and dialer.
func NewGuard(resolve ResolveMap) *Guard {
	return &Guard{Resolve: resolve}
}

func (g *Guard) portAllowed(port int) bool {
	ports := g.AllowedPorts
	if len(ports) == 0 {
		ports = DefaultAllowedPorts
	}
	if slices.Contains(ports, port) {
		return true
	}
	for _, addr := range g.Resolve {
		if ap, err := netip.ParseAddrPort(addr); err == nil && int(ap.Port()) == port {
			return true
		}
	}
	return false
}

// CheckURL refuses what can be refused from the URL alone: schemes other
// than http and https, userinfo, ports not allowed, and host literals that
// name a forbidden address in any of the forms browsers accept (decimal
// 2130706433, octal 0177.0.0.1, hex 0x7f.1, short 127.1, IPv6). Host names
// are judged at dial time, after resolution.
func (g *Guard) CheckURL(u *url.URL) error {
	if u == nil {
		return &RefusedError{Reason: "no URL"}
	}
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if scheme != "http" && scheme != "https" {
		return &RefusedError{Host: u.Host, Reason: "scheme " + strconv.Quote(u.Scheme) + " is not http or https"}
	}
	if u.User != nil {
		return &RefusedError{Host: u.Host, Reason: "URLs with user information are not fetched"}
	}
	if host == "" {
		return &RefusedError{Host: u.String(), Reason: "no host"}
	}
	if _, ok := g.Resolve.lookup(host); ok {
		return nil
	}
	port := 80
	if scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return &RefusedError{Host: u.Host, Reason: "bad port " + strconv.Quote(p)}
		}
		port = n
	}
	if !g.portAllowed(port) {
		return &RefusedError{Host: u.Host, Reason: fmt.Sprintf("port %d is not allowed", port)}
	}
	return checkHostLiteral(host)
}

// CheckRedirect refuses a redirect from a host outside the resolve map to a
// host in it: pinned hosts are the only way to loopback, so only a pinned
// host (one of ours) may send zhizhi to one. Any other site could
// otherwise point it at whatever the map reaches.
func (g *Guard) CheckRedirect(from, to *url.URL) error {
	if from == nil || to == nil {
		return nil
	}
	if _, ok := g.Resolve.lookup(to.Hostname()); !ok {
		return nil
	}
	if _, ok := g.Resolve.lookup(from.Hostname()); ok {
		return nil
	}
	return &RefusedError{Host: to.Host, Reason: "redirected here by " + from.Hostname() +
		", which the resolve map (ZHIZHI_RESOLVE) does not name: only a host in the map may redirect to one"}
}

// checkHostLiteral judges a host that is an address literal, or a name that
// can only mean loopback; other names pass (they are judged after DNS).
func checkHostLiteral(host string) error {
	h := normalizeHostName(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return &RefusedError{Host: host, Reason: "loopback name"}
	}
	addr, isLiteral, err := parseHostAddr(host)
	if err != nil {
		return &RefusedError{Host: host, Reason: err.Error()}
	}
	if !isLiteral {
		return nil
	}
	if reason := AddrRefusal(addr); reason != "" {
		return &RefusedError{Host: host, IP: addr.String(), Reason: reason}
	}
	return nil
}

// parseHostAddr reports whether host is an IP literal, in IPv6 form or in
// any IPv4 form a browser accepts, and parses it.
func parseHostAddr(host string) (netip.Addr, bool, error) {
	h := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false, fmt.Errorf("bad IPv6 address %q", host)
		}
		if a.Zone() != "" {
			return netip.Addr{}, false, fmt.Errorf("IPv6 zone in %q", host)
		}
		return a, true, nil
	}
	return parseLooseIPv4(h)
}

// parseLooseIPv4 parses the IPv4 forms of the WHATWG URL standard: one to
// four dot-separated parts, each decimal, octal (leading 0) or hex (0x);
// the last part fills the remaining bytes. A host whose last part is not
// numeric is a name; one whose last part is numeric but that does not parse
// is an error, as in browsers.
func parseLooseIPv4(h string) (netip.Addr, bool, error) {
	parts := strings.Split(h, ".")
	last := parts[len(parts)-1]
	if !looksNumeric(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, false, fmt.Errorf("bad IPv4 address %q", h)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false, fmt.Errorf("bad IPv4 address %q", h)
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false, fmt.Errorf("bad IPv4 address %q: part %d exceeds 255", h, i+1)
		}
		v = v<<8 | n
	}
	rest := uint(8 * (5 - len(nums)))
	if nums[len(nums)-1] >= 1<<rest {
		return netip.Addr{}, false, fmt.Errorf("bad IPv4 address %q: out of range", h)
	}
	v = v<<rest | nums[len(nums)-1]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

func looksNumeric(p string) bool {
	if p == "" {
		return false
	}
	if strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X") {
		for _, c := range p[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseIPv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 1<<32 {
		return 0, false
	}
	return n, true
}

type refusedPrefix struct {
	prefix netip.Prefix
	reason string
}

// refusedV4 and refusedV6 list what is never fetched. More
// specific prefixes come first so the reason names the narrowest range.
var refusedV4 = []refusedPrefix{
	{netip.MustParsePrefix("169.254.169.254/32"), "metadata address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},
}

var refusedV6 = []refusedPrefix{
	{netip.MustParsePrefix("fd00:ec2::254/128"), "metadata address"},
	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address"},
	{netip.MustParsePrefix("fc00::/7"), "unique local address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "documentation address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64 address"},
	// IPv4-translated (RFC 2765 SIIT): a translator would turn it into
	// the IPv4 address it embeds, whatever that is; nothing public uses it.
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated address"},
	{netip.MustParsePrefix("100::/64"), "discard address"},
	{netip.MustParsePrefix("2001::/32"), "Teredo address"},
	{netip.MustParsePrefix("2001:10::/28"), "reserved address"},
	{netip.MustParsePrefix("2001:20::/28"), "reserved address"},
}

var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")
	compatPrefix = netip.MustParsePrefix("::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
)

// AddrRefusal says why a connection to a may not be made, or "" when it
// may. IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64,
// 6to4) are judged by the address they embed.
func AddrRefusal(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid address"
	}
	if a.Zone() != "" {
		return "scoped address"
	}
	if a.Is4In6() {
		if r := AddrRefusal(a.Unmap()); r != "" {
			return r + " (IPv4-mapped)"
		}
		return ""
	}
	if a.Is4() {
		for _, p := range refusedV4 {
			if p.prefix.Contains(a) {
				return p.reason
			}
		}
		return ""
	}
	for _, p := range refusedV6 {
		if p.prefix.Contains(a) {
			return p.reason
		}
	}
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a):
		if r := AddrRefusal(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
			return r + " (NAT64)"
		}
	case compatPrefix.Contains(a):
		if r := AddrRefusal(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
			return r + " (IPv4-compatible)"
		}
		return "IPv4-compatible address"
	case sixToFour.Contains(a):
		if r := AddrRefusal(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
			return r + " (6to4)"
		}
	}
	if !a.IsGlobalUnicast() {
		return "non-global address"
	}
	return ""
}

// DialContext is an http.Transport dialer that enforces the guard on every
// connection: pinned hosts go to their pinned address; any other host is
// resolved and every address it resolves to is judged before the first one
// allowed is dialled. The address dialled is the one judged, so a second
// DNS answer cannot swap it.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &RefusedError{Host: addr, Reason: "network " + network + " is not tcp"}
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("guard dial %s: %w", addr, err)
	}
	dial := g.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	if pinned, ok := g.Resolve.lookup(host); ok {
		return dial(ctx, network, pinned)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || !g.portAllowed(port) {
		return nil, &RefusedError{Host: host, Reason: "port " + portStr + " is not allowed"}
	}
	if err := checkHostLiteral(host); err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, isLiteral, _ := parseHostAddr(host); isLiteral {
		addrs = []netip.Addr{a}
	} else {
		lookup := g.LookupIP
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]net.IP, error) {
				return net.DefaultResolver.LookupIP(ctx, "ip", host)
			}
		}
		ips, err := lookup(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("guard resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("guard resolve %s: no addresses", host)
		}
		for _, ip := range ips {
			a, ok := netip.AddrFromSlice(ip)
			if !ok {
				return nil, &RefusedError{Host: host, IP: ip.String(), Reason: "invalid address"}
			}
			// net.IP holds IPv4 in its 16-byte mapped form; judge and dial
			// it as IPv4.
			addrs = append(addrs, a.Unmap())
		}
	}
	// One bad answer refuses the host: a name that can point inside is not
	// fetched at all, whichever answer we would have picked.
	for _, a := range addrs {
		if reason := AddrRefusal(a); reason != "" {
			return nil, &RefusedError{Host: host, IP: a.String(), Reason: reason}
		}
	}
	var errs []error
	for _, a := range addrs {
		if network == "tcp4" && !a.Unmap().Is4() || network == "tcp6" && a.Is4() {
			continue
		}
		conn, err := dial(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("guard dial %s: no %s address", host, network)
	}
	return nil, fmt.Errorf("guard dial %s: %w", host, errors.Join(errs...))
}

// CheckName resolves host the way DialContext would and refuses it when
// any answer is a forbidden address. It is for clients that resolve names
// themselves (the browser tier), where the guard cannot sit in the dialer;
// pinned hosts and address literals are judged without asking DNS.
func (g *Guard) CheckName(ctx context.Context, host string) error {
	if _, ok := g.Resolve.lookup(host); ok {
		return nil
	}
	if err := checkHostLiteral(host); err != nil {
		return err
	}
	if _, isLiteral, _ := parseHostAddr(host); isLiteral {
		return nil
	}
	lookup := g.LookupIP
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]net.IP, error) {
			return net.DefaultResolver.LookupIP(ctx, "ip", host)
		}
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return fmt.Errorf("guard resolve %s: %w", host, err)
	}
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return &RefusedError{Host: host, IP: ip.String(), Reason: "invalid address"}
		}
		if reason := AddrRefusal(a.Unmap()); reason != "" {
			return &RefusedError{Host: host, IP: a.Unmap().String(), Reason: reason}
		}
	}
	return nil
}
