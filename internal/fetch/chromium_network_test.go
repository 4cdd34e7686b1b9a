package fetch

import (
	"bufio"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/browser"
)

// leakPage asks Chromium for every kind of traffic that does not go
// through a proxy: a WebRTC peer connection gathering candidates from a
// STUN server at a public address (UDP, plus mDNS for local candidates),
// a DNS prefetch and a preconnect. When gathering is over it tells its own
// host, so the test knows WebRTC had its chance.
const leakPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>泄漏测试</title>
<link rel="dns-prefetch" href="//cdn.leak.example">
<link rel="preconnect" href="https://93.184.216.34">
</head><body><p id="ice">未开始</p>
<script>
var out = document.getElementById("ice");
var pc = new RTCPeerConnection({iceServers: [{urls: "stun:93.184.216.34:3478"}]});
pc.createDataChannel("d");
pc.onicecandidate = function (e) {
	out.textContent += e.candidate ? " " + e.candidate.candidate : " 完成";
	if (!e.candidate) { fetch("/ice-done").catch(function () {}); }
};
pc.createOffer().then(function (o) { return pc.setLocalDescription(o); });
</script>
</body></html>`

// TestChromiumSendsNothingOutsideTheProxy runs the browser tier's Chromium
// under strace and renders a page that asks for WebRTC, DNS prefetch and a
// preconnect. Every connect and send of every Chromium process is
// recorded: no TCP connection and no packet may go to an address other
// than loopback (where only the tier's proxy listens). A UDP socket that
// is connect()ed to a public address but never sent on carries nothing (a
// connect on UDP only picks a route); such probes are logged, not failed.
func TestChromiumSendsNothingOutsideTheProxy(t *testing.T) {
	needChromium(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is required in CI to watch Chromium's sockets: apt-get install strace")
		}
		t.Skip("strace not installed (apt-get install strace): Chromium's sockets cannot be watched")
	}
	if out, err := exec.Command(strace, "-f", "-qq", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("strace cannot trace here (%v): %s", err, out)
		}
		t.Skipf("strace cannot trace here (%v): %s", err, out)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "strace.log")
	wrapper := filepath.Join(dir, "chromium")
	script := "#!/bin/sh\nexec " + strace + " -f -qq -yy -e trace=connect,sendto,sendmsg,sendmmsg -o " + trace + " " + browser.DefaultExecPath + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pages := newPageServer(t, map[string]string{"/": leakPage, "/ice-done": "ok", "/robots.txt": "User-agent: *\nAllow: /\n"})
	e := newSimEnv(t, 1, ClientOptions{})
	c := e.clientWith(t, ResolveMap{"www.a.gov.test": pages.Listener.Addr().String()},
		ClientOptions{Browser: Chromium(wrapper, quietLogger())})
	c.SetSitePolicy("www.a.gov.test", SitePolicy{RespectRobots: true, Strategy: TierBrowser})
	e.c = c
	e.advancing(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := c.Do(ctx, Request{URL: "http://www.a.gov.test/", Tier: TierBrowser})
	if err != nil {
		t.Fatalf("render under strace: %v", err)
	}
	if !strings.Contains(string(r.Body), "完成") {
		t.Fatalf("the page's WebRTC gathering did not finish, so the test proves nothing: %.500s", r.Body)
	}
	// Close waits for every Chromium process to end: the trace is whole.
	c.Close()

	f, err := os.Open(trace)
	if err != nil {
		t.Fatalf("strace wrote no trace: %v", err)
	}
	defer f.Close()
	var loopbackConns, lines int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		lines++
		call, fd, addrs := parseTraceLine(line)
		if call == "" || strings.HasPrefix(fd, "UNIX") || strings.HasPrefix(fd, "NETLINK") {
			continue
		}
		var outside []netip.Addr
		for _, a := range addrs {
			if !a.Unmap().IsLoopback() {
				outside = append(outside, a)
			}
		}
		switch {
		case len(outside) == 0:
			if call == "connect" && strings.HasPrefix(fd, "TCP") {
				loopbackConns++
			}
		case call == "connect" && strings.HasPrefix(fd, "UDP"):
			t.Logf("UDP socket connected (no packet) to %v: %s", outside, shorten(line))
		default:
			t.Errorf("Chromium reached %v outside the proxy: %s", outside, shorten(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if loopbackConns == 0 {
		t.Fatalf("no TCP connection to the proxy in %d trace lines: strace did not see Chromium's network", lines)
	}
}

var (
	traceCall = regexp.MustCompile(`^\d+\s+(connect|sendto|sendmsg|sendmmsg)\((\d+)<([^>]*)>`)
	traceV4   = regexp.MustCompile(`inet_addr\("([^"]+)"\)`)
	traceV6   = regexp.MustCompile(`inet_pton\(AF_INET6, "([^"]+)"`)
	// -yy shows a connected socket as <TCP:[local->remote]>.
	tracePeer = regexp.MustCompile(`->\[?([0-9a-fA-F.:]+?)\]?:\d+\]`)
)

// parseTraceLine returns the call, the socket kind strace decoded for its
// fd (e.g. "UDP:[...]") and every address the line names as a destination
// (in the arguments, or the connected peer of the socket).
func parseTraceLine(line string) (call, fd string, addrs []netip.Addr) {
	m := traceCall.FindStringSubmatch(line)
	if m == nil {
		return "", "", nil
	}
	call, fd = m[1], m[3]
	var raw []string
	for _, re := range []*regexp.Regexp{traceV4, traceV6} {
		for _, s := range re.FindAllStringSubmatch(line, -1) {
			raw = append(raw, s[1])
		}
	}
	if p := tracePeer.FindStringSubmatch(fd); p != nil {
		raw = append(raw, p[1])
	}
	for _, s := range raw {
		if a, err := netip.ParseAddr(s); err == nil {
			addrs = append(addrs, a)
		}
	}
	return call, fd, addrs
}

func shorten(s string) string {
	if len(s) > 220 {
		return s[:220] + "…"
	}
	return s
}
