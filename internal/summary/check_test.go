package summary

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkExtractive fails t unless summary keeps the rules for source: every
// sentence of it (split at 。！？； and line breaks, the ellipsis taken off
// the cut last one) is a piece of source, in source order, and it is no
// longer than 300 characters or a tenth of the source's characters (its
// white space not counted).
func checkExtractive(t *testing.T, name, source, summary string) {
	t.Helper()
	limit := utf8.RuneCountInString(strings.Join(strings.Fields(source), "")) / 10
	if limit > 300 {
		limit = 300
	}
	if n := utf8.RuneCountInString(summary); n > limit {
		t.Errorf("%s: summary of %d characters, limit %d: %q", name, n, limit, summary)
	}
	pieces := strings.FieldsFunc(summary, func(r rune) bool { return strings.ContainsRune("。！？；\n", r) })
	at := 0 // where in the source the previous piece ended
	for i, p := range pieces {
		if i == len(pieces)-1 {
			p = strings.TrimSuffix(p, "…")
		}
		switch k := strings.Index(source[at:], p); {
		case !strings.Contains(source, p):
			t.Errorf("%s: summary sentence %q is not in the source", name, p)
		case k < 0:
			t.Errorf("%s: summary sentence %q is out of source order", name, p)
		default:
			at += k + len(p)
		}
	}
	if strings.Count(summary, "…") > strings.Count(source, "…")+1 {
		t.Errorf("%s: summary has more ellipses than its source and one cut: %q", name, summary)
	}
}
