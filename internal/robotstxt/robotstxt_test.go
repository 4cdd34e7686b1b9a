package robotstxt

import (
	"strings"
	"testing"
	"time"
)

// productToken is the token fetch sends (fetch.ProductToken), the agent
// these files name.
const productToken = "zhizhi"

func TestRobotsDecide(t *testing.T) {
	type check struct {
		path    string
		allowed bool
		line    int // 0: decided without a rule
	}
	tests := []struct {
		name   string
		body   string
		agent  string
		checks []check
	}{
		{
			name: "longest match wins over order",
			body: "User-agent: *\nDisallow: /zwgk/\nAllow: /zwgk/public/\n",
			checks: []check{
				{"/zwgk/a.html", false, 2},
				{"/zwgk/public/a.html", true, 3},
				{"/other", true, 0},
			},
		},
		{
			name: "dot segments are judged as the server resolves them",
			body: "User-agent: *\nDisallow: /zwgk/rsrm/\n",
			checks: []check{
				{"/robots.txt/../zwgk/rsrm/x.html", false, 2},
				{"/zwgk/./rsrm/x.html", false, 2},
				{"/zwgk/wjk/../rsrm/x.html?id=1", false, 2},
				{"/../../zwgk/rsrm/", false, 2},
				{"/zwgk/rsrm/../wjk/x.html", true, 0},
				{"/zwgk/rsrm.html", true, 0},
				{"/robots.txt/.", true, 0},
			},
		},
		{
			name: "longest match wins when the longer rule comes first",
			body: "User-agent: *\nAllow: /zwgk/public/\nDisallow: /zwgk/\n",
			checks: []check{
				{"/zwgk/public/a.html", true, 2},
				{"/zwgk/x", false, 3},
			},
		},
		{
			name: "allow wins a tie of equal length",
			body: "User-agent: *\nDisallow: /page\nAllow: /page\n",
			checks: []check{
				{"/page", true, 3},
				{"/page2", true, 3},
			},
		},
		{
			name: "tie between wildcard patterns of equal length goes to allow",
			body: "User-agent: *\nDisallow: /*.htm\nAllow: /a*.htm\n",
			checks: []check{
				{"/ab.htm", true, 3},
				{"/b.htm", false, 2},
			},
		},
		{
			name: "dollar anchors the end",
			body: "User-agent: *\nDisallow: /*.pdf$\n",
			checks: []check{
				{"/files/a.pdf", false, 2},
				{"/files/a.pdf?x=1", true, 0},
				{"/files/a.pdfx", true, 0},
			},
		},
		{
			name: "star matches any run including empty",
			body: "User-agent: *\nDisallow: /a*b/c\n",
			checks: []check{
				{"/ab/c", false, 2},
				{"/axxxb/c/d", false, 2},
				{"/a/c", true, 0},
			},
		},
		{
			name: "only the home page, with an anchored allow",
			body: "User-agent: *\nDisallow: /\nAllow: /$\n",
			checks: []check{
				{"/", true, 3},
				{"/anything", false, 2},
			},
		},
		{
			name: "dollar alone on a prefix rule",
			body: "User-agent: *\nDisallow: /exact$\n",
			checks: []check{
				{"/exact", false, 2},
				{"/exact/more", true, 0},
			},
		},
		{
			name: "percent-encoding of unreserved characters is decoded on both sides",
			body: "User-agent: *\nDisallow: /%7Euser/\nDisallow: /a%2fb\n",
			checks: []check{
				{"/~user/x", false, 2},
				{"/%7euser/x", false, 2},
				{"/a%2Fb", false, 3},
				{"/a/b", true, 0}, // %2F is a reserved character: stays encoded
			},
		},
		{
			name: "non-ASCII rule matches the UTF-8 percent-encoded path",
			body: "User-agent: *\nDisallow: /政务公开/\n",
			checks: []check{
				{"/%E6%94%BF%E5%8A%A1%E5%85%AC%E5%BC%80/a.html", false, 2},
				{"/%e6%94%bf%e5%8a%a1%e5%85%ac%e5%bc%80/a.html", false, 2},
				{"/政务公开/a.html", false, 2},
				{"/政务/", true, 0},
			},
		},
		{
			name:  "groups for the same agent are merged",
			body:  "User-agent: zhizhi\nDisallow: /a/\n\nUser-agent: other\nDisallow: /\n\nUser-agent: zhizhi\nDisallow: /b/\n",
			agent: "zhizhi",
			checks: []check{
				{"/a/1", false, 2},
				{"/b/1", false, 8},
				{"/c/1", true, 0},
			},
		},
		{
			name:  "the specific group replaces the star group",
			body:  "User-agent: *\nDisallow: /\n\nUser-agent: zhizhi\nDisallow: /private/\n",
			agent: "zhizhi",
			checks: []check{
				{"/public", true, 0},
				{"/private/x", false, 5},
			},
		},
		{
			name:  "star group applies when no specific group matches",
			body:  "User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n",
			agent: "zhizhi",
			checks: []check{
				{"/tmp/x", false, 5},
				{"/public", true, 0},
			},
		},
		{
			name:  "agent matching is case-insensitive and ignores the version",
			body:  "User-Agent: ZhiZhi/1.0\nDisallow: /x/\n",
			agent: "zhizhi/0.1 (+https://zhizhi.example/contact)",
			checks: []check{
				{"/x/1", false, 2},
			},
		},
		{
			name:  "agent token is not a prefix match",
			body:  "User-agent: zhizhibot\nDisallow: /\n",
			agent: "zhizhi",
			checks: []check{
				{"/x", true, 0},
			},
		},
		{
			name:  "consecutive user-agent lines share one group",
			body:  "User-agent: a\nUser-agent: zhizhi\nUser-agent: b\nDisallow: /shared/\n",
			agent: "zhizhi",
			checks: []check{
				{"/shared/x", false, 4},
			},
		},
		{
			name: "a rule line ends the agent list",
			body: "User-agent: zhizhi\nDisallow: /one/\nUser-agent: other\nDisallow: /two/\n",
			checks: []check{
				{"/one/x", false, 2},
				{"/two/x", true, 0},
			},
		},
		{
			name: "empty disallow is no rule",
			body: "User-agent: *\nDisallow:\n",
			checks: []check{
				{"/anything", true, 0},
			},
		},
		{
			name: "disallow all",
			body: "User-agent: *\nDisallow: /\n",
			checks: []check{
				{"/", false, 2},
				{"/a/b", false, 2},
				{"/robots.txt", true, 0},
			},
		},
		{
			name: "allow all",
			body: "User-agent: *\nAllow: /\n",
			checks: []check{
				{"/a", true, 2},
			},
		},
		{
			name: "robots.txt is always allowed even when disallowed by name",
			body: "User-agent: *\nDisallow: /robots.txt\nDisallow: /*.txt\n",
			checks: []check{
				{"/robots.txt", true, 0},
				{"/notes.txt", false, 3},
			},
		},
		{
			name: "bad lines are skipped, the rest still applies",
			body: "User-agent: *\nthis is not a rule\nDisallow /nocolon\n:::\nFoo: bar\nDisallow: /still/\n",
			checks: []check{
				{"/still/x", false, 6},
				{"/nocolon", true, 0},
			},
		},
		{
			name: "rules before any user-agent are ignored",
			body: "Disallow: /early/\nUser-agent: *\nDisallow: /late/\n",
			checks: []check{
				{"/early/x", true, 0},
				{"/late/x", false, 3},
			},
		},
		{
			name: "comments, BOM and CRLF",
			body: "\xef\xbb\xbf# policy\r\nUser-agent: * # everyone\r\nDisallow: /zwgk/ # not this\r\n",
			checks: []check{
				{"/zwgk/a.html", false, 3},
			},
		},
		{
			name: "bare CR line ends count lines",
			body: "User-agent: *\rAllow: /a\rDisallow: /\r",
			checks: []check{
				{"/a", true, 2},
				{"/b", false, 3},
			},
		},
		{
			name: "path without leading slash is honoured with one added",
			body: "User-agent: *\nDisallow: zwgk/\n",
			checks: []check{
				{"/zwgk/x", false, 2},
			},
		},
		{
			name: "query strings take part in matching",
			body: "User-agent: *\nDisallow: /*?sid=\n",
			checks: []check{
				{"/list?sid=1", false, 2},
				{"/list", true, 0},
			},
		},
		{
			name:   "empty file allows all",
			body:   "",
			checks: []check{{"/x", true, 0}},
		},
		{
			name:   "no group for us and no star group allows all",
			body:   "User-agent: googlebot\nDisallow: /\n",
			checks: []check{{"/x", true, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := tt.agent
			if agent == "" {
				agent = productToken
			}
			r := Parse([]byte(tt.body), agent)
			for _, c := range tt.checks {
				d := r.Decide(c.path)
				if d.Allowed != c.allowed || d.Line != c.line {
					t.Errorf("Decide(%q) = allowed %v line %d (%s), want allowed %v line %d",
						c.path, d.Allowed, d.Line, d, c.allowed, c.line)
				}
			}
		})
	}
}

func TestRobotsDecisionNamesTheRule(t *testing.T) {
	body := "User-agent: *\n\n# sections\n\n\nAllow: /zwgk/public/\nDisallow: /zwgk/   # closed\n"
	d := Parse([]byte(body), productToken).Decide("/zwgk/a.html")
	want := Decision{Allowed: false, Rule: "Disallow: /zwgk/", Line: 7}
	if d != want {
		t.Fatalf("got %+v, want %+v", d, want)
	}
	if got := d.String(); got != `blocked by robots.txt line 7 "Disallow: /zwgk/"` {
		t.Errorf("String() = %q", got)
	}
}

func TestRobotsCrawlDelayAndSitemaps(t *testing.T) {
	body := "Sitemap: https://www.a.gov.test/sitemap.xml\n" +
		"User-agent: *\nCrawl-delay: 1\n" +
		"User-agent: zhizhi\nCrawl-delay: 5\nDisallow: /x\n" +
		"User-agent: zhizhi\nCrawl-delay: 2.5\n" +
		"User-agent: other\nCrawl-delay: abc\n" +
		"Sitemap: https://www.a.gov.test/sitemap2.xml\n"
	r := Parse([]byte(body), productToken)
	d, ok := r.CrawlDelay()
	if !ok || d != 5*time.Second {
		t.Errorf("CrawlDelay() = %v, %v; want the strictest of the merged groups, 5s", d, ok)
	}
	if len(r.Sitemaps) != 2 || r.Sitemaps[1] != "https://www.a.gov.test/sitemap2.xml" {
		t.Errorf("Sitemaps = %q", r.Sitemaps)
	}
	r = Parse([]byte(body), "someone")
	if d, ok := r.CrawlDelay(); !ok || d != time.Second {
		t.Errorf("star group CrawlDelay() = %v, %v; want 1s", d, ok)
	}
	r = Parse([]byte("User-agent: *\nDisallow: /\n"), productToken)
	if _, ok := r.CrawlDelay(); ok {
		t.Error("CrawlDelay reported without a Crawl-delay line")
	}
}

func TestRobotsParseLimit(t *testing.T) {
	// A rule near the start is kept, one beyond the limit is ignored.
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early/\n")
	filler := "# " + strings.Repeat("x", 98) + "\n"
	for b.Len() < ParseLimit+1000 {
		b.WriteString(filler)
	}
	b.WriteString("Disallow: /late/\n")
	r := Parse([]byte(b.String()), productToken)
	if d := r.Decide("/early/x"); d.Allowed {
		t.Error("rule within the parse limit was lost")
	}
	if d := r.Decide("/late/x"); !d.Allowed {
		t.Error("rule beyond the parse limit was applied")
	}
	if ParseLimit < 500<<10 {
		t.Errorf("ParseLimit = %d, RFC 9309 asks for at least 500 KiB", ParseLimit)
	}

	// A rule that straddles the limit is dropped, not cut in half.
	b.Reset()
	b.WriteString("User-agent: *\n")
	for b.Len() < ParseLimit-10 {
		b.WriteString("#\n")
	}
	b.WriteString("Allow: /abcdefghijklmnopqrstuvwxyz\nDisallow: /\n")
	r = Parse([]byte(b.String()), productToken)
	if d := r.Decide("/abc"); !d.Allowed || d.Line != 0 {
		t.Errorf("Decide(/abc) = %+v; a truncated rule must not apply", d)
	}
}
func TestAgentToken(t *testing.T) {
	for in, want := range map[string]string{
		"zhizhi":                  "zhizhi",
		"ZhiZhi/0.1 (+https://x)": "zhizhi",
		"  Googlebot-News ":       "googlebot-news",
		"*":                       "*",
		"/weird":                  "",
		"my_bot2":                 "my_bot",
	} {
		if got := AgentToken(in); got != want {
			t.Errorf("AgentToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkRobotsDecide(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; i < 200; i++ {
		sb.WriteString("Disallow: /section")
		sb.WriteString(strings.Repeat("x", i%17))
		sb.WriteString("/*.php$\n")
		sb.WriteString("Allow: /section/public/\n")
	}
	r := Parse([]byte(sb.String()), productToken)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Decide("/section/public/2024/%E6%94%BF%E5%8A%A1/post_1001.html?page=2")
	}
}
