// Package ssrftest holds the SSRF guard's table of refused targets, so
// that every layer that fetches on someone's behalf (the fetcher itself,
// the acquisition API, the browser tier) replays the same cases.
package ssrftest

// Case is one target the guard must refuse, and the words its refusal
// gives.
type Case struct {
	Name   string
	URL    string
	Reason string // contained in the refusal's reason
}

// DNS is the resolver's answers for the names in Cases: a test resolves
// from it and from nothing else.
var DNS = map[string][]string{
	"www.x.gov.test":   {"10.1.2.3"},
	"rebind.gov.test":  {"93.184.216.34", "192.168.1.1"},
	"meta.gov.test":    {"169.254.169.254"},
	"v6local.gov.test": {"fd12::1"},
	"mapped.gov.test":  {"::ffff:127.0.0.1"},
	"cgnat.gov.test":   {"100.64.0.7"},
	"public.gov.test":  {"93.184.216.34"},
	"nat64.gov.test":   {"64:ff9b::a00:1"},
	"loop.gov.test":    {"127.0.0.1"},
	"siit.gov.test":    {"::ffff:0:7f00:1"},
}

// Cases are every kind of target the guard refuses: private, loopback,
// link-local, metadata and other special addresses in every spelling,
// names resolving to them, and schemes, user information and ports.
var Cases = []Case{
	{"RFC 1918 10/8", "http://10.0.0.1/", "private address"},
	{"RFC 1918 172.16/12", "http://172.20.1.1/", "private address"},
	{"RFC 1918 192.168/16", "http://192.168.0.1/", "private address"},
	{"loopback", "http://127.0.0.1/", "loopback address"},
	{"loopback elsewhere in 127/8", "http://127.8.9.10/", "loopback address"},
	{"unspecified 0.0.0.0", "http://0.0.0.0/", "unspecified address"},
	{"decimal IPv4", "http://2130706433/", "loopback address"},
	{"octal IPv4", "http://0177.0.0.1/", "loopback address"},
	{"hex IPv4", "http://0x7f.1/", "loopback address"},
	{"hex whole IPv4", "http://0x7f000001/", "loopback address"},
	{"short IPv4", "http://127.1/", "loopback address"},
	{"octal private", "http://012.0.0.1/", "private address"},
	{"trailing dot", "http://10.0.0.1./", "private address"},
	{"IPv6 loopback", "http://[::1]/", "loopback address"},
	{"IPv6 unspecified", "http://[::]/", "unspecified address"},
	{"IPv6 ULA", "http://[fd00::1]/", "unique local address"},
	{"IPv6 link-local", "http://[fe80::1]/", "link-local address"},
	{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/", "loopback address (IPv4-mapped)"},
	{"IPv4-mapped private in hex", "http://[::ffff:a00:1]/", "private address (IPv4-mapped)"},
	{"NAT64 of a private address", "http://[64:ff9b::192.168.0.1]/", "private address (NAT64)"},
	{"IPv4-translated loopback", "http://[::ffff:0:127.0.0.1]/", "IPv4-translated address"},
	{"IPv4-translated public", "http://[::ffff:0:93.184.216.34]/", "IPv4-translated address"},
	{"IPv4-translated in hex", "http://[::ffff:0:a00:1]/", "IPv4-translated address"},
	{"metadata", "http://169.254.169.254/latest/meta-data/", "metadata address"},
	{"metadata IPv6", "http://[fd00:ec2::254]/", "metadata address"},
	{"link-local", "http://169.254.10.10/", "link-local address"},
	{"CGNAT", "http://100.64.1.1/", "carrier-grade NAT address"},
	{"multicast", "http://224.0.0.1/", "multicast address"},
	{"broadcast", "http://255.255.255.255/", "broadcast address"},
	{"reserved 240/4", "http://240.0.0.1/", "reserved address"},
	{"documentation", "http://192.0.2.1/", "documentation address"},
	{"localhost name", "http://localhost/", "loopback name"},
	{"name resolving to a private address", "http://www.x.gov.test/", "private address"},
	{"name with one private answer among public ones", "http://rebind.gov.test/", "private address"},
	{"name resolving to metadata", "http://meta.gov.test/", "metadata address"},
	{"name resolving to ULA", "http://v6local.gov.test/", "unique local address"},
	{"name resolving to mapped loopback", "http://mapped.gov.test/", "loopback address"},
	{"name resolving to CGNAT", "http://cgnat.gov.test/", "carrier-grade NAT address"},
	{"name resolving to NAT64 private", "http://nat64.gov.test/", "private address (NAT64)"},
	{"name resolving to IPv4-translated", "http://siit.gov.test/", "IPv4-translated address"},
	{"name resolving to loopback outside the resolve map", "http://loop.gov.test/", "loopback address"},
	{"scheme file", "file:///etc/passwd", "scheme"},
	{"scheme gopher", "gopher://public.gov.test/", "scheme"},
	{"userinfo", "http://user:pw@public.gov.test/", "user information"},
	{"port not allowed", "http://public.gov.test:22/", "port 22"},
}
