package pages

import "testing"

func TestPlainText(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         string
		multiline bool
		want      bool
	}{
		{"chinese", "政务公开 通知", false, true},
		{"nul", "\x00zzzz", false, false},
		{"escape", "a\x1b[31m", false, false},
		{"del", "a\x7f", false, false},
		{"c1", "a\u0085b", false, false},
		{"invalid utf-8", "\xff", false, false},
		{"newline in one line", "a\nb", false, false},
		{"newline in a textarea", "a\r\n\tb", true, true},
		{"nul in a textarea", "a\n\x00", true, false},
	} {
		if got := PlainText(tc.s, tc.multiline); got != tc.want {
			t.Errorf("%s: PlainText(%q, %v) = %v, want %v", tc.name, tc.s, tc.multiline, got, tc.want)
		}
	}
}
