package portal

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"time"
	"zhizhi/internal/config/zone"
)

//go:embed templates static
var embedded embed.FS

func (p *portal) funcs() template.FuncMap {
	return template.FuncMap{
		"date": func(t *time.Time) string {
			if t == nil || t.IsZero() {
				return ""
			}
			return t.In(p.loc).Format("2006年1月2日")
		},
		"year": func() int { return p.now().In(p.loc).Year() },
		"when": func(t time.Time) string {
			// Readers take a bare time for Beijing time; another zone is named.
			if p.loc.String() != zone.Default {
				return t.In(p.loc).Format("2006-01-02 15:04 MST")
			}
			return t.In(p.loc).Format("2006-01-02 15:04")
		},
		"kb": func(n int64) string { return humanBytes(float64(n)) },
		"bytes": func(n float64) string {
			if n <= 0 {
				return "—"
			}
			return humanBytes(n)
		},
		"ratio": func(v *float64) string {
			if v == nil {
				return "—"
			}
			return fmt.Sprintf("%.2f", *v)
		},
	}
}

// view is what the layout renders around a page's own data.
type view struct {
	Title string
	Q     string // the search box's text
	Error string
	Data  any
	// Beacon is the token the page script returns with its event counts:
	// the proof that a browser ran the page (set by render).
	Beacon string
}

// render writes page name with status, executed into a buffer first so a
// failing template gives a clean error page, not half a page.
func (p *portal) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	t, ok := p.pages[name]
	if !ok {
		p.serverError(w, r, fmt.Errorf("no template %q", name))
		return
	}
	if bt, ok := p.visits.(beaconTokens); ok {
		v.Beacon = bt.BeaconToken(r)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		p.serverError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorData struct {
	Code    int
	Heading string
	Message string
}

// notFound answers 404 with a page in the reader's words. A frozen or
// duplicate card gets the same page as a missing one: the portal does not
// say that a card exists but is hidden.
func (p *portal) notFound(w http.ResponseWriter, r *http.Request, heading, msg string) {
	p.render(w, r, http.StatusNotFound, "error", view{Title: heading,
		Data: errorData{Code: http.StatusNotFound, Heading: heading, Message: msg}})
}

// serverError logs err and shows a page that does not repeat it.
func (p *portal) serverError(w http.ResponseWriter, r *http.Request, err error) {
	p.log.Error("portal", "path", r.URL.Path, "err", err)
	if t, ok := p.pages["error"]; ok {
		var buf bytes.Buffer
		v := view{Title: "服务器内部错误", Data: errorData{Code: 500, Heading: "服务器内部错误",
			Message: "处理请求时出错，请稍后再试。"}}
		if t.ExecuteTemplate(&buf, "layout.html", v) == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(buf.Bytes())
			return
		}
	}
	http.Error(w, "服务器内部错误", http.StatusInternalServerError)
}

// humanBytes writes a size in B, KB, MB or GB (powers of 1024).
func humanBytes(n float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
