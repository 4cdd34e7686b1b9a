package warc

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/npmtest"
)

func TestSURT(t *testing.T) {
	// Examples from the Wayback CDX server and pywb documentation, and the
	// rules they state (www dropped, default port dropped, args sorted,
	// everything lowercased), applied to Chinese government URLs.
	tests := []struct{ in, want string }{
		{"http://www.archive.org:80/", "org,archive)/"},
		{"archive.org/about/", "org,archive)/about/"},
		{"http://archive.org", "org,archive)/"},
		{"https://www.Example.com/Path/Page.html?b=2&a=1#frag", "com,example)/path/page.html?a=1&b=2"},
		{"http://example.com:8080/x", "com,example:8080)/x"},
		{"https://example.com:443/x", "com,example)/x"},
		{"http://www2.gd.gov.cn/a", "cn,gov,gd)/a"},
		{"http://www.gd.gov.cn/zwgk/政策/", "cn,gov,gd)/zwgk/%e6%94%bf%e7%ad%96/"},
		{"http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/", "cn,gov,gd)/zwgk/%e6%94%bf%e7%ad%96/"},
		{"http://user:pw@sz.gov.cn/a?x=1", "cn,gov,sz)/a?x=1"},
		{"http://10.0.0.1/a", "1,0,0,10)/a"},
		{"mailto:Office@GD.gov.cn", "mailto:office@gd.gov.cn"},
	}
	for _, tt := range tests {
		got, err := SURT(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("SURT(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "http://", "http://a b.cn/%zz"} {
		if got, err := SURT(bad); err == nil {
			t.Errorf("SURT(%q) = %q, want an error", bad, got)
		}
	}
}

// TestSURTMatchesWarcio compares SURT with warcio.js's getSurt on URLs as
// they appear in WARC-Target-URI (ASCII, non-ASCII percent-encoded).
func TestSURTMatchesWarcio(t *testing.T) {
	urls := []string{
		"http://www.archive.org:80/",
		"https://www.Example.com/Path/Page.html?b=2&a=1#frag",
		"http://example.com:8080/x",
		"http://www2.gd.gov.cn/a",
		"http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/index.html?id=7&a=1",
		"https://user:pw@sz.gov.cn:443/path;jsessionid=1?x=%E4%B8%AD&b=",
		"http://10.0.0.1/a",
		"http://gd.gov.cn",
		"http://政府.政务/",
		"http://xn--mxtq1m.xn--zfr164b/gk/",
	}
	utils := npmtest.FileURL(npmtest.Path(t, warcio(t), "warcio", "dist", "utils.js"))
	out := npmtest.Node(t, npmtest.Script{Path: filepath.Join("testdata", "surt.mjs"), Args: append([]string{utils}, urls...)})
	var want map[string]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("surt.mjs: %v\n%s", err, out)
	}
	for _, u := range urls {
		got, err := SURT(u)
		if err != nil || got != want[u] {
			t.Errorf("SURT(%q) = %q, %v; warcio says %q", u, got, err, want[u])
		}
	}
}

func cdxEntry(t testing.TB, u, ts string) CDXEntry {
	t.Helper()
	k, err := SURT(u)
	if err != nil {
		t.Fatal(err)
	}
	return CDXEntry{URLKey: k, Timestamp: ts, Original: u, MIME: "text/html", Status: 200, Length: 100, Offset: 0, Filename: "a.warc.gz"}
}

func TestQuery(t *testing.T) {
	// Original URLs as a WARC records them (percent-encoded), queried with
	// and without encoding.
	entries := []CDXEntry{
		cdxEntry(t, "http://www.gd.gov.cn/", "20240101000000"),                                                 // home
		cdxEntry(t, "http://www.gd.gov.cn/", "20250101000000"),                                                 // home2
		cdxEntry(t, "http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/", "20240102000000"),                         // 政策/
		cdxEntry(t, "http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96/a.html", "20240103000000"),                   // 政策/a
		cdxEntry(t, "http://www.gd.gov.cn/zwgk/%E6%94%BF%E7%AD%96%E8%A7%A3%E8%AF%BB/b.html", "20240104000000"), // 政策解读/b
		cdxEntry(t, "http://sz.gd.gov.cn/x", "20240105000000"),                                                 // subdomain
		cdxEntry(t, "http://www.gd.gov.cn:8080/p", "20240106000000"),                                           // other port
		cdxEntry(t, "http://gd.gov.cn.evil.com/", "20240107000000"),                                            // look-alike
		cdxEntry(t, "http://gdx.gov.cn/", "20240108000000"),                                                    // sibling
	}
	names := []string{"home", "home2", "政策/", "政策/a", "政策解读/b", "sub", "port", "evil", "gdx"}
	tests := []struct {
		name string
		q    CDXQuery
		want []string
	}{
		{"exact", CDXQuery{URL: "http://gd.gov.cn/"}, []string{"home", "home2"}},
		{"exact with from", CDXQuery{URL: "gd.gov.cn", From: "2025"}, []string{"home2"}},
		{"exact with to", CDXQuery{URL: "gd.gov.cn", To: "2024"}, []string{"home"}},
		{"exact Chinese", CDXQuery{URL: "http://www.gd.gov.cn/zwgk/政策/a.html"}, []string{"政策/a"}},
		{"prefix Chinese path with slash", CDXQuery{URL: "www.gd.gov.cn/zwgk/政策/", MatchType: "prefix"}, []string{"政策/", "政策/a"}},
		{"prefix encoded lowercase", CDXQuery{URL: "www.gd.gov.cn/zwgk/%e6%94%bf%e7%ad%96/", MatchType: "prefix"}, []string{"政策/", "政策/a"}},
		{"prefix without slash is a string prefix", CDXQuery{URL: "www.gd.gov.cn/zwgk/政策", MatchType: "prefix"}, []string{"政策/", "政策/a", "政策解读/b"}},
		{"wildcard prefix", CDXQuery{URL: "gd.gov.cn/zwgk/*"}, []string{"政策/", "政策/a", "政策解读/b"}},
		{"host", CDXQuery{URL: "http://www.gd.gov.cn/zwgk/", MatchType: "host"}, []string{"home", "政策/", "政策/a", "政策解读/b", "home2"}},
		{"domain", CDXQuery{URL: "gd.gov.cn", MatchType: "domain"}, []string{"home", "政策/", "政策/a", "政策解读/b", "home2", "port", "sub"}},
		{"wildcard domain", CDXQuery{URL: "*.gd.gov.cn"}, []string{"home", "政策/", "政策/a", "政策解读/b", "home2", "port", "sub"}},
		{"first one", CDXQuery{URL: "gd.gov.cn", Limit: 1}, []string{"home"}},
		{"last one", CDXQuery{URL: "gd.gov.cn", Limit: -1}, []string{"home2"}},
		{"nothing", CDXQuery{URL: "http://www.gd.gov.cn/none"}, nil},
	}
	byKey := map[string]string{}
	for i, e := range entries {
		byKey[e.URLKey+" "+e.Timestamp] = names[i]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Query(entries, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var gotNames []string
			for _, e := range got {
				gotNames = append(gotNames, byKey[e.URLKey+" "+e.Timestamp])
			}
			// Results come in urlkey order, then timestamp; compare as sets
			// and check the order separately.
			if !slices.IsSortedFunc(got, func(a, b CDXEntry) int {
				return strings.Compare(a.URLKey+" "+a.Timestamp, b.URLKey+" "+b.Timestamp)
			}) {
				t.Errorf("results not in urlkey, timestamp order: %v", gotNames)
			}
			a, b := slices.Clone(gotNames), slices.Clone(tt.want)
			slices.Sort(a)
			slices.Sort(b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("got %v, want %v", gotNames, tt.want)
			}
		})
	}
	if _, err := Query(entries, CDXQuery{URL: "gd.gov.cn", MatchType: "subdomain"}); err == nil || !strings.Contains(err.Error(), "exact, prefix, host, domain") {
		t.Errorf("unknown matchType: error %v", err)
	}
	if _, err := Query(entries, CDXQuery{URL: "gd.gov.cn", From: "2024-01"}); err == nil {
		t.Error("a from= with a dash was accepted")
	}
}

func TestParseCDXQuery(t *testing.T) {
	v := url.Values{"url": {"gd.gov.cn/*"}, "matchType": {"prefix"}, "from": {"2024"}, "limit": {"-5"}, "output": {"json"}, "fl": {"timestamp,original,filename"}}
	q, err := ParseCDXQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	want := CDXQuery{URL: "gd.gov.cn/*", MatchType: "prefix", From: "2024", Limit: -5, Output: "json", Fields: []string{"timestamp", "original", "filename"}}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("ParseCDXQuery = %+v, want %+v", q, want)
	}
	bad := []struct {
		v    url.Values
		want string
	}{
		{url.Values{}, "url parameter is required"},
		{url.Values{"url": {"a.cn"}, "matchType": {"regex"}}, "not one of exact, prefix, host, domain"},
		{url.Values{"url": {"a.cn"}, "limit": {"ten"}}, "not an integer"},
		{url.Values{"url": {"a.cn"}, "fl": {"timestamp,size"}}, `field "size"`},
		{url.Values{"url": {"a.cn"}, "to": {"202401011200000"}}, "more than 14 digits"},
	}
	for _, b := range bad {
		if _, err := ParseCDXQuery(b.v); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseCDXQuery(%v) error %v, want %q", b.v, err, b.want)
		}
	}
}

func TestWriteCDXServer(t *testing.T) {
	entries := []CDXEntry{
		{URLKey: "cn,gov,gd)/", Timestamp: "20240501080000", Original: "http://www.gd.gov.cn/", MIME: "text/html", Status: 200,
			Digest: "205ea836a4e83620563f1df4e430ddd22f887400d84f0a56ee413365a8bb1ca7", Length: 470, Offset: 324, Filename: "a.warc.gz"},
		{URLKey: "cn,gov,gd)/a?b=1&c=2", Timestamp: "20240501090000", Original: "http://gd.gov.cn/a?c=2&b=1", Length: 9, Offset: 0, Filename: "b.warc.gz"},
	}
	var b bytes.Buffer
	if err := WriteCDXServer(&b, entries, "json"); err != nil {
		t.Fatal(err)
	}
	// The Wayback CDX server's JSON: a first row of field names, then
	// every field as a string.
	want := `[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],
 ["cn,gov,gd)/","20240501080000","http://www.gd.gov.cn/","text/html","200","205ea836a4e83620563f1df4e430ddd22f887400d84f0a56ee413365a8bb1ca7","470"],
 ["cn,gov,gd)/a?b=1&c=2","20240501090000","http://gd.gov.cn/a?c=2&b=1","","","","9"]]
`
	if b.String() != want {
		t.Errorf("json output\n%s\nwant\n%s", b.String(), want)
	}
	var rows [][]string
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 3 {
		t.Errorf("json output does not parse as 3 rows: %v", err)
	}

	b.Reset()
	if err := WriteCDXServer(&b, entries, "", "urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length", "offset", "filename"); err != nil {
		t.Fatal(err)
	}
	wantPlain := "cn,gov,gd)/ 20240501080000 http://www.gd.gov.cn/ text/html 200 205ea836a4e83620563f1df4e430ddd22f887400d84f0a56ee413365a8bb1ca7 470 324 a.warc.gz\n" +
		"cn,gov,gd)/a?b=1&c=2 20240501090000 http://gd.gov.cn/a?c=2&b=1 - - - 9 0 b.warc.gz\n"
	if b.String() != wantPlain {
		t.Errorf("plain output\n%s\nwant\n%s", b.String(), wantPlain)
	}

	b.Reset()
	if err := WriteCDXServer(&b, nil, "json"); err != nil || b.String() != "[]\n" {
		t.Errorf("empty json answer %q, %v; want []", b.String(), err)
	}
	if err := WriteCDXServer(&b, entries, "json", "timestamp", "bogus"); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("unknown field: error %v", err)
	}
}

func TestCDXJRoundTrip(t *testing.T) {
	e := CDXEntry{URLKey: "cn,gov,gd)/a?b=1&c=2", Timestamp: "20240501090000", Original: "http://gd.gov.cn/a?c=2&b=1",
		MIME: "application/pdf", Status: 200, Digest: "abc", Length: 1234, Offset: 5678, Filename: "x.warc.gz"}
	line := e.CDXJ()
	want := `cn,gov,gd)/a?b=1&c=2 20240501090000 {"url":"http://gd.gov.cn/a?c=2&b=1","mime":"application/pdf","status":"200","digest":"abc","length":"1234","offset":"5678","filename":"x.warc.gz"}`
	if line != want {
		t.Errorf("CDXJ\n%s\nwant\n%s", line, want)
	}
	back, err := ParseCDXJ(line)
	if err != nil || back != e {
		t.Errorf("ParseCDXJ = %+v, %v; want %+v", back, err, e)
	}
	for _, bad := range []string{"", "onlykey", `k 2024 {"url":`, `k 2024 {"url":"u","length":"x","offset":"1"}`} {
		if _, err := ParseCDXJ(bad); err == nil {
			t.Errorf("ParseCDXJ(%q) accepted", bad)
		}
	}
}

// TestCDXJMatchesWarcioIndexer indexes the same WARCs with warcio.js's
// indexer and with CDXJLine: every field of every line must agree, with
// one exchange per file and with all exchanges in one file.
func TestCDXJMatchesWarcioIndexer(t *testing.T) {
	dir := t.TempDir()
	var all bytes.Buffer
	var mine, paths []string
	names := []string{"gb18030", "pdf", "redirect", "utf8"}
	exs := exchanges(t)
	for _, name := range names {
		path, recs := writeFile(t, dir, name, exs[name])
		paths = append(paths, path)
		base := int64(all.Len())
		combined, err := Write(&all, exs[name])
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if r.Type != "response" {
				continue
			}
			mine = append(mine, CDXJLine(r, filepath.Base(path)))
			// Write counts offsets from its own first byte; the caller
			// appending to a file adds what the file held before.
			c := combined[i]
			if c.Offset != r.Offset {
				t.Fatalf("offset %d from a second Write, %d from the first", c.Offset, r.Offset)
			}
			c.Offset = base + r.Offset
			mine = append(mine, CDXJLine(c, "all.warc.gz"))
		}
	}
	allPath := filepath.Join(dir, "all.warc.gz")
	if err := os.WriteFile(allPath, all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := warcioCDX(t, append(paths, allPath)...)
	slices.Sort(mine)
	slices.Sort(theirs)
	if !reflect.DeepEqual(mine, theirs) {
		t.Errorf("CDXJLine:\n%s\nwarcio cdx-index:\n%s", strings.Join(mine, "\n"), strings.Join(theirs, "\n"))
	}
	if len(theirs) != 2*len(names) {
		t.Errorf("warcio indexed %d captures, want %d (one response per exchange, in its own file and in the combined one)", len(theirs), 2*len(names))
	}
}
