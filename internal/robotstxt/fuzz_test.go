package robotstxt

import (
	"bytes"
	"testing"
)

// FuzzRobotsParse checks that no robots.txt makes the parser panic, that a
// decision is stable, that /robots.txt stays reachable and that a decision
// names a real line of the file.
func FuzzRobotsParse(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /zwgk/\nAllow: /zwgk/public/\n"), "/zwgk/a.html")
	f.Add([]byte("User-agent: zhizhi\nDisallow: /*.pdf$\n"), "/a.pdf")
	f.Add([]byte("\xef\xbb\xbfUser-agent: *\r\nDisallow: /%7E\r\n"), "/~x")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body, productToken)
		d1 := r.Decide(path)
		d2 := r.Decide(path)
		if d1 != d2 {
			t.Fatalf("unstable decision for %q: %+v then %+v", path, d1, d2)
		}
		if d := r.Decide("/robots.txt"); !d.Allowed {
			t.Fatalf("/robots.txt refused: %+v", d)
		}
		if d1.Line > 0 {
			lines := 1 + bytes.Count(body, []byte("\n")) + bytes.Count(body, []byte("\r"))
			if d1.Line > lines || d1.Rule == "" {
				t.Fatalf("decision names line %d %q of a %d-line file", d1.Line, d1.Rule, lines)
			}
		} else if d1.Reason == "" {
			t.Fatalf("decision without rule or reason: %+v", d1)
		}
	})
}
