package onboard

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseBaseURLs: one base URL a line, trimmed, blanks and repeats
// skipped; a line that is not an http(s) URL of a host alone is refused
// with its own line number and a sentence saying what to write instead,
// and the good lines around it are kept.
func TestParseBaseURLs(t *testing.T) {
	text := strings.Join([]string{
		"  http://www.qingcheng.gov.test  ",    // 1
		"",                                     // 2
		"\u3000https://WWW.Yingde.gov.test/\t", // 3
		"http://www.qingcheng.gov.test/",       // 4 repeat
		"ftp://files.gov.test",                 // 5
		"www.lianzhou.gov.test",                // 6 no scheme
		"http://www.gd.gov.test/zwgk/",         // 7 path
		"http://",                              // 8 no host
		"http://bad host.gov.test",             // 9
		"http://c001.county.gov.test:8080",     // 10
		"https://x.gov.test/?a=1",              // 11 query
	}, "\r\n")
	lines, problems := ParseBaseURLs(text)
	want := []Line{
		{1, "http://www.qingcheng.gov.test"},
		{3, "https://www.yingde.gov.test"},
		{10, "http://c001.county.gov.test:8080"},
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("lines = %v, want %v", lines, want)
	}
	wantBad := map[int]string{5: "http://", 6: "http://", 7: "只写协议和域名", 8: "", 9: "", 11: "只写协议和域名"}
	got := map[int]LineProblem{}
	for _, p := range problems {
		got[p.Line] = p
	}
	for n, words := range wantBad {
		p, ok := got[n]
		if !ok {
			t.Errorf("line %d was not refused (problems: %v)", n, problems)
			continue
		}
		if p.Problem == "" || !strings.Contains(p.Problem, words) {
			t.Errorf("line %d: problem %q, want one saying %q", n, p.Problem, words)
		}
		if !strings.Contains(p.String(), fmt.Sprintf("第 %d 行", n)) {
			t.Errorf("line %d: %q does not name the line", n, p.String())
		}
	}
	if len(problems) != len(wantBad) {
		t.Errorf("%d problems, want %d: %v", len(problems), len(wantBad), problems)
	}
}

// TestParseBaseURLsCap: a paste of more than 200 sites keeps the first 200
// and says of each further line to paste it in another batch.
func TestParseBaseURLsCap(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 203; i++ {
		fmt.Fprintf(&b, "http://s%d.gov.test\n", i)
	}
	lines, problems := ParseBaseURLs(b.String())
	if len(lines) != 200 || len(problems) != 3 {
		t.Fatalf("%d lines and %d problems, want 200 and 3", len(lines), len(problems))
	}
	if problems[0].Line != 201 || !strings.Contains(problems[0].Problem, "200") {
		t.Errorf("first refused line: %v", problems[0])
	}
}
