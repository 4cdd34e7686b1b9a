package pages

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParse(t *testing.T) {
	layout := &fstest.MapFile{Data: []byte(`<main>{{template "content" .}}</main>`)}
	good := fstest.MapFS{
		"templates/layout.html": layout,
		"templates/a.html":      {Data: []byte(`{{define "content"}}A {{.}}{{end}}`)},
		"templates/b.html":      {Data: []byte(`{{define "content"}}B{{end}}`)},
	}
	got, err := Parse(good, nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("parsed %d pages, %v; want a and b", len(got), err)
	}
	var out strings.Builder
	if err := got["a"].ExecuteTemplate(&out, "layout.html", "<x>"); err != nil || out.String() != "<main>A &lt;x&gt;</main>" {
		t.Fatalf("page a renders %q, %v", out.String(), err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no content": {"templates/layout.html": layout, "templates/c.html": {Data: []byte(`plain`)}},
		"bad syntax": {"templates/layout.html": layout, "templates/d.html": {Data: []byte(`{{define "content"}}{{.x`)}},
		"no pages":   {"templates/layout.html": layout},
		"no layout":  {"templates/e.html": {Data: []byte(`{{define "content"}}E{{end}}`)}},
	} {
		if _, err := Parse(fsys, nil); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
}
