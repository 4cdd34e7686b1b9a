package summary

import (
	"strings"
	"testing"
)

// TestRegradeAgreesWithBuildAndRewrite: a card's gauge grades its own
// summary exactly as Build did, and a person's text exactly as Rewrite
// would with the whole source at hand — so a rewrite can be graded after
// the source text is gone.
func TestRegradeAgreesWithBuildAndRewrite(t *testing.T) {
	in := noticeInput()
	c := Build(in)
	g := Gauge{Anchors: c.Anchors, Reference: c.Reference, Limit: c.Limit}
	v, err := Regrade(g, c.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if v.Covered != c.Covered || v.Sigma != c.Sigma || v.Relevance != c.Relevance || v.Grade != c.Grade {
		t.Fatalf("regrade of the machine's summary %+v, card %+v", v, c)
	}
	if c.Limit != Limit(in.Text) {
		t.Fatalf("card limit %d, Limit %d", c.Limit, Limit(in.Text))
	}
	texts := []string{
		"清远市人民政府发布通知。",
		string([]rune(c.Summary)[:len([]rune(c.Summary))/2]),
		strings.Repeat("字", c.Limit),
		strings.Repeat("字", c.Limit+1),
		" ",
	}
	for _, text := range texts {
		r, rerr := Rewrite(in, text)
		v, verr := Regrade(g, text)
		if (rerr == nil) != (verr == nil) {
			t.Fatalf("%q: Rewrite error %v, Regrade error %v", text, rerr, verr)
		}
		if rerr != nil {
			continue
		}
		if v.Covered != r.Covered || v.Sigma != r.Sigma || v.Relevance != r.Relevance || v.Grade != r.Grade {
			t.Errorf("%q: regrade %+v, rewrite %+v", text, v, r)
		}
		if len(v.Missing) != len(c.Anchors)-v.Covered {
			t.Errorf("%q: %d anchors missing of %d with %d covered", text, len(v.Missing), len(c.Anchors), v.Covered)
		}
	}
}
