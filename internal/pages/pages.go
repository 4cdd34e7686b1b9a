// Package pages loads the server-rendered HTML of the console and the
// portal: every page template parsed with its site's layout once, at start,
// so a template that does not parse stops the start instead of failing a
// reader's request.
package pages

import (
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"strings"
)

// Parse parses every templates/*.html of files together with
// templates/layout.html, one template set per page (keyed by its file name
// without .html), so each page defines its own "content".
func Parse(files fs.FS, funcs template.FuncMap) (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		page := strings.TrimSuffix(path.Base(name), ".html")
		if page == "layout" {
			continue
		}
		t, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if _, err := t.ParseFS(files, name); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if t.Lookup("content") == nil {
			return nil, fmt.Errorf("parse %s: it defines no \"content\"", name)
		}
		out[page] = t
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no page templates found")
	}
	return out, nil
}
