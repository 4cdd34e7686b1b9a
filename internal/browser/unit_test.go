package browser

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestResolverRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		resolve map[string]string
		want    string
		wantErr bool
	}{
		{"nothing pinned refuses every name", nil, "MAP * ~NOTFOUND", false},
		{"pinned hosts sorted, then refusal", map[string]string{
			"www.b.gov.test": "127.0.0.2:18081",
			"WWW.A.gov.test": "127.0.0.1:18080",
		}, "MAP www.a.gov.test 127.0.0.1:18080,MAP www.b.gov.test 127.0.0.2:18081,MAP * ~NOTFOUND", false},
		{"ipv6 loopback", map[string]string{"a.gov.test": "[::1]:8080"}, "MAP a.gov.test [::1]:8080,MAP * ~NOTFOUND", false},
		{"address without port", map[string]string{"a.gov.test": "127.0.0.1"}, "", true},
		{"name instead of address", map[string]string{"a.gov.test": "localhost:80"}, "", true},
		{"wildcard host would widen the pinning", map[string]string{"*": "127.0.0.1:80"}, "", true},
		{"comma would inject a rule", map[string]string{"a.gov.test,MAP *": "127.0.0.1:80"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolverRules(tc.resolve)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("rules = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckProxy: Chromium's only way out must be a proxy on this machine.
func TestCheckProxy(t *testing.T) {
	for _, tc := range []struct {
		name, proxy string
		ok          bool
	}{
		{"no proxy", "", true},
		{"local proxy", "http://127.0.0.1:38123", true},
		{"ipv6 loopback", "http://[::1]:38123", true},
		{"another host", "http://10.0.0.1:3128", false},
		{"a name, resolved by whom?", "http://proxy.example:3128", false},
		{"localhost is a name", "http://localhost:3128", false},
		{"socks", "socks5://127.0.0.1:1080", false},
		{"no port", "http://127.0.0.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkProxy(tc.proxy); (err == nil) != tc.ok {
				t.Errorf("checkProxy(%q) = %v, want ok %v", tc.proxy, err, tc.ok)
			}
		})
	}
}

func TestHonestUserAgent(t *testing.T) {
	const token = "zhizhi/1.2.3 (+https://example.gov.cn/zhizhi)"
	chromium := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
	got := honestUserAgent(chromium, token)
	if got != chromium+" "+token {
		t.Errorf("UA = %q", got)
	}
	if !strings.Contains(got, "HeadlessChrome/") {
		t.Error("the headless product token must stay: the site should see what we are")
	}
}

func TestFindCaptcha(t *testing.T) {
	long := strings.Repeat("正文内容", 500)
	for _, tc := range []struct {
		name, title, text string
		status            int
		want              string
	}{
		{"short page asking for a code", "安全验证", "请输入验证码", 200, "验证码"},
		{"slider wall in English", "Verify", "Drag the SLIDER to continue", 200, "slider"},
		{"captcha in the title only", "CAPTCHA", "", 200, "captcha"},
		{"long article with a code field", "通知", long + "验证码", 200, ""},
		{"error status counts whatever the length", "", long + "验证码", 403, "验证码"},
		{"plain short page", "首页", "欢迎访问", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := findCaptcha(tc.title, tc.text, tc.status, DefaultCaptchaMarkers); got != tc.want {
				t.Errorf("findCaptcha = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDomainMatch(t *testing.T) {
	for _, tc := range []struct {
		host, domain string
		want         bool
	}{
		{"www.a.gov.cn", "www.a.gov.cn", true},
		{"www.a.gov.cn", ".a.gov.cn", true},
		{"www.a.gov.cn", ".gov.cn", true},
		{"www.a.gov.cn", "b.gov.cn", false},
		{"www.a.gov.cn", "wa.gov.cn", false},
		{"a.gov.cn", "www.a.gov.cn", false},
		{"", "a.gov.cn", false},
	} {
		if got := domainMatch(tc.host, tc.domain); got != tc.want {
			t.Errorf("domainMatch(%q, %q) = %v, want %v", tc.host, tc.domain, got, tc.want)
		}
	}
}

func TestDefaultAllowOnlyPinnedHosts(t *testing.T) {
	allow := resolveOnly(map[string]string{"www.a.gov.test": "127.0.0.1:1"})
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{"http://www.a.gov.test/x", true},
		{"https://WWW.A.gov.test:8443/x", true},
		{"http://www.b.gov.test/x", false},
		{"http://127.0.0.1:1/x", false},
		{"ftp://www.a.gov.test/x", false},
	} {
		u, _ := url.Parse(tc.raw)
		if got := allow(context.Background(), u) == nil; got != tc.want {
			t.Errorf("allow(%s) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want error
	}{
		{"no identity", Options{ExecPath: "/bin/true"}, nil},
		{"missing binary", Options{UAToken: "zhizhi/1", ExecPath: "/nonexistent/chromium"}, ErrNoChromium},
		{"bad resolve entry", Options{UAToken: "zhizhi/1", ExecPath: "/bin/true", Resolve: map[string]string{"a": "b"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(context.Background(), tc.opts)
			if err == nil {
				b.Close()
				t.Fatal("New succeeded, want an error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
