package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// DefaultExecPath is where Debian's chromium package installs its launcher.
const DefaultExecPath = "/usr/bin/chromium"

// ErrNoChromium means the Chromium binary is missing; `make test` and
// `make demo` install Debian's chromium package when they can.
var ErrNoChromium = errors.New("chromium not found (install Debian's chromium package or set the path)")

// Defaults for Options and RenderOptions.
const (
	defaultTimeout = 60 * time.Second
	defaultMaxTabs = 1
)

// defaultBlockedTypes are resource types a polite crawler never needs: they
// cost the site bandwidth and carry no text.
var defaultBlockedTypes = []string{"Image", "Font", "Media"}

// Options configure the one shared Chromium.
type Options struct {
	// ExecPath is the Chromium binary; empty means DefaultExecPath.
	ExecPath string

	// UAToken is zhizhi's honest identity, "zhizhi/<version> (+<contact URL>)".
	// It is appended to Chromium's own User-Agent, never replacing it.
	// Required.
	UAToken string

	// Resolve pins host names to loopback addresses ("host" → "127.0.0.1:port"),
	// like curl --resolve, inside Chromium's own resolver. It is used only
	// when Proxy is empty (this package's own tests); with a Proxy the
	// proxy's dialer applies the resolve map. Chromium itself resolves no
	// other name, IP literals included, whatever the Allow callback says,
	// so a bug in the callback still cannot reach the network.
	Resolve map[string]string

	// Proxy sends every connection Chromium makes through this proxy,
	// "http://127.0.0.1:port" (the fetcher's local proxy, whose dialer is
	// its SSRF guard). Loopback is not bypassed and Chromium's resolver
	// answers no name, so the proxy is the only way out. It must be a
	// loopback address. When empty, Chromium ignores any proxy in the
	// environment (it would bypass the resolver pinning) and reaches only
	// the hosts in Resolve.
	Proxy string

	// Allow is the gate every network request of a page passes before
	// Chromium may open a connection: the fetcher plugs its SSRF guard and
	// robots check in here. A non-nil error refuses the request and its text
	// becomes RequestRecord.BlockedReason. Its context carries the
	// render's values and a RequestInfo (RequestInfoFrom) saying what the
	// request is for. It is called from several goroutines at once. Nil
	// allows only http(s) URLs whose host is in Resolve.
	Allow func(ctx context.Context, u *url.URL) error

	// BlockTypes are Chromium resource types ("Image", "Font", "Media",
	// "Stylesheet", ...) refused without asking Allow. Nil means images,
	// fonts and media; an empty non-nil slice blocks none.
	BlockTypes []string

	// Timeout bounds one Render from opening the tab to returning; zero
	// means 60 s.
	Timeout time.Duration

	// MaxTabs is how many pages may render at once; zero means 1. The
	// politeness layer above also limits requests per host.
	MaxTabs int

	// Logger receives the tier's logs; nil means slog.Default().
	Logger *slog.Logger

	// Now stamps harvested cookies; nil means time.Now.
	Now func() time.Time
}

// Browser is one running headless Chromium shared by all renders. It is safe
// for concurrent use; at most Options.MaxTabs pages render at once.
type Browser struct {
	opts      Options
	log       *slog.Logger
	dir       string // unique user-data-dir; also how leftover processes are found
	userAgent string
	blocked   map[string]bool
	slots     *hostSlots

	allocCancel   context.CancelFunc
	browserCtx    context.Context
	browserCancel context.CancelFunc

	tabs      chan struct{}
	closeOnce sync.Once
	done      chan struct{} // closed when Chromium is gone and dir removed
}

// New starts one headless Chromium. When ctx ends, Chromium is killed and
// its profile removed, as if Close had been called.
func New(ctx context.Context, opts Options) (*Browser, error) {
	if strings.TrimSpace(opts.UAToken) == "" {
		return nil, errors.New("start browser: UAToken is required (zhizhi/<version> (+<contact>))")
	}
	if opts.ExecPath == "" {
		opts.ExecPath = DefaultExecPath
	}
	execPath, err := exec.LookPath(opts.ExecPath)
	if err != nil {
		return nil, fmt.Errorf("start browser: %w: %s", ErrNoChromium, opts.ExecPath)
	}
	if err := checkProxy(opts.Proxy); err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	pinned := opts.Resolve
	if opts.Proxy != "" {
		// Through the proxy Chromium resolves no target host: the
		// proxy dials, and the resolve map is the proxy's business.
		pinned = nil
	}
	rules, err := resolverRules(pinned)
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	if opts.Proxy != "" {
		// The refusal of every name covers IP literals too, the proxy's
		// own address included; that one address is let through.
		pu, _ := url.Parse(opts.Proxy)
		rules += ",EXCLUDE " + pu.Hostname()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.MaxTabs <= 0 {
		opts.MaxTabs = defaultMaxTabs
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Allow == nil {
		opts.Allow = resolveOnly(opts.Resolve)
	}
	if opts.BlockTypes == nil {
		opts.BlockTypes = defaultBlockedTypes
	}

	// A zhizhi killed without a chance to clean up (SIGKILL, a crash)
	// left its profile behind; the next start tidies it.
	removeStaleProfiles(os.TempDir(), opts.Logger)
	prof, err := newProfile(os.TempDir())
	if err != nil {
		return nil, fmt.Errorf("start browser: profile dir: %w", err)
	}

	b := &Browser{
		opts:    opts,
		log:     opts.Logger.With("component", "browser"),
		dir:     prof.dir,
		blocked: make(map[string]bool),
		slots:   newHostSlots(),
		tabs:    make(chan struct{}, opts.MaxTabs),
		done:    make(chan struct{}),
	}
	for _, t := range opts.BlockTypes {
		b.blocked[strings.ToLower(t)] = true
	}

	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, b.allocatorOptions(execPath, rules)...)
	b.allocCancel = allocCancel
	b.browserCtx, b.browserCancel = chromedp.NewContext(allocCtx,
		chromedp.WithLogf(func(f string, a ...any) { b.log.Debug(fmt.Sprintf(f, a...)) }),
		chromedp.WithErrorf(func(f string, a ...any) { b.log.Debug(fmt.Sprintf(f, a...)) }),
	)

	// Whatever ends the allocator context (Close or the caller's ctx), the
	// same cleanup runs once: no Chromium child may outlive it.
	go func() {
		<-allocCtx.Done()
		b.browserCancel()
		allocCancel() // waits for the main process to be reaped
		cleanUp(b.dir, b.log)
		prof.release()
		close(b.done)
	}()

	if err := chromedp.Do(b.browserCtx); err != nil {
		b.Close()
		return nil, fmt.Errorf("start browser: launch %s: %w", execPath, err)
	}
	version, err := chromedp.CallBrowser(b.browserCtx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("start browser: get version: %w", err)
	}
	b.userAgent = honestUserAgent(version.UserAgent, opts.UAToken)
	b.log.Info("chromium started", "product", version.Product, "user_agent", b.userAgent,
		"resolve", len(opts.Resolve), "proxy", opts.Proxy, "max_tabs", opts.MaxTabs)
	return b, nil
}

// UserAgent is the User-Agent every page request carries: Chromium's own,
// followed by zhizhi's token.
func (b *Browser) UserAgent() string { return b.userAgent }

// Done is closed once Chromium and all its child processes are gone and the
// profile directory is removed, whether by Close or by the end of the
// context given to New.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Close kills Chromium and every child process, removes the profile
// directory and waits for both. It is safe to call more than once.
func (b *Browser) Close() {
	b.closeOnce.Do(func() {
		// A graceful close lets Chromium end and reap its own children;
		// killing it first would orphan them. The kill and the /proc
		// sweep after it are the backstop.
		if err := chromedp.Cancel(b.browserCtx); err != nil && !errors.Is(err, context.Canceled) {
			b.log.Debug("close chromium gracefully", "error", err)
		}
		b.browserCancel()
		b.allocCancel()
	})
	<-b.done
}

func (b *Browser) closed() bool {
	select {
	case <-b.done:
		return true
	default:
		return b.browserCtx.Err() != nil
	}
}

func (b *Browser) allocatorOptions(execPath, rules string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(b.dir),
		chromedp.ModifyCmdFunc(ownProcessGroup),
		// Chromium's crash handler daemonizes away from the browser and
		// its command line has no --user-data-dir; pointing its database
		// into our directory marks it as ours for the cleanup sweep (and
		// keeps crash files out of $HOME).
		chromedp.Env("XDG_CONFIG_HOME="+filepath.Join(b.dir, "config"),
			"XDG_CACHE_HOME="+filepath.Join(b.dir, "cache")),
		chromedp.DisableGPU,
		// Chromium refuses to start as root without it; the renderer still
		// runs no code but the page's own scripts.
		chromedp.NoSandbox,
		chromedp.Flag("host-resolver-rules", rules),
		// Background services would try hosts this network refuses and
		// that no crawl log records.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("no-first-run", true),
		// HTTPS upgrades would send a TLS handshake to plain-HTTP sites
		// first: a request nobody asked for. Site isolation would move
		// cross-site iframes into other targets, out of this tab's request
		// gate. DNS over HTTPS and the built-in stub resolver would talk to
		// resolvers directly, past the proxy (host-resolver-rules
		// already answer every name; these make sure nothing is asked).
		chromedp.Flag("disable-features", "DnsOverHttps,AsyncDns,Translate,BlinkGenPropertyTrees,HttpsUpgrades,"+
			"HttpsFirstBalancedModeAutoEnable,OptimizationHints,MediaRouter,"+
			"AutofillServerCommunication,IsolateOrigins,site-per-process"),
		chromedp.Flag("disable-site-isolation-trials", true),
		// A page's WebRTC would send STUN and mDNS datagrams itself, past
		// the proxy: only proxied traffic is allowed, and an HTTP proxy
		// carries no UDP. Chromium reads the second spelling; older builds
		// read the first.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	)
	if b.opts.Proxy != "" {
		// "<-loopback>" removes Chromium's implicit bypass of localhost
		// and 127.0.0.1: even loopback goes through the proxy, which
		// reaches it only for hosts in the resolve map.
		opts = append(opts, chromedp.ProxyServer(b.opts.Proxy),
			chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	} else {
		opts = append(opts, chromedp.Flag("no-proxy-server", true))
	}
	return opts
}

// resolverRules builds Chromium's --host-resolver-rules: each pinned host
// mapped to its address, then every other name refused. Rules are sorted so
// the command line is stable.
func resolverRules(resolve map[string]string) (string, error) {
	hosts := make([]string, 0, len(resolve))
	for h := range resolve {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var rules []string
	for _, h := range hosts {
		addr := resolve[h]
		host := strings.ToLower(strings.TrimSpace(h))
		if host == "" || strings.ContainsAny(host, " ,*:/") {
			return "", fmt.Errorf("resolve map: bad host %q", h)
		}
		ip, port, err := net.SplitHostPort(strings.TrimSpace(addr))
		if err != nil || net.ParseIP(ip) == nil || port == "" {
			return "", fmt.Errorf("resolve map: %s: want ip:port, got %q", h, addr)
		}
		rules = append(rules, "MAP "+host+" "+net.JoinHostPort(ip, port))
	}
	rules = append(rules, "MAP * ~NOTFOUND")
	return strings.Join(rules, ","), nil
}

// checkProxy accepts an empty proxy or http://<loopback IP>:<port>: a
// proxy elsewhere would be a way out of this machine that no guard sees.
func checkProxy(proxy string) error {
	if proxy == "" {
		return nil
	}
	u, err := url.Parse(proxy)
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.Path != "" && u.Path != "/" {
		return fmt.Errorf("proxy %q: want http://127.0.0.1:port", proxy)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("proxy %q: not a loopback address", proxy)
	}
	return nil
}

// honestUserAgent appends zhizhi's token to Chromium's own User-Agent. The
// "HeadlessChrome" product stays: the site should see what we are.
func honestUserAgent(chromiumUA, token string) string {
	chromiumUA = strings.TrimSpace(chromiumUA)
	if chromiumUA == "" {
		return token
	}
	return chromiumUA + " " + strings.TrimSpace(token)
}

// resolveOnly is the Allow used when the caller gives none: only http(s)
// URLs on pinned hosts.
func resolveOnly(resolve map[string]string) func(context.Context, *url.URL) error {
	pinned := make(map[string]bool, len(resolve))
	for h := range resolve {
		pinned[strings.ToLower(strings.TrimSpace(h))] = true
	}
	return func(_ context.Context, u *url.URL) error {
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("scheme %q not allowed", u.Scheme)
		}
		if !pinned[strings.ToLower(u.Hostname())] {
			return fmt.Errorf("host %s is not in the resolve map", u.Hostname())
		}
		return nil
	}
}
