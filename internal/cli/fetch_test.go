package cli

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/sim"
)

// TestFetchCommand runs `zhizhi fetch` against the simulated web: a page in
// each format, a robots.txt refusal and an SSRF refusal in words.
func TestFetchCommand(t *testing.T) {
	w, err := sim.Start(context.Background(), sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dir := t.TempDir()
	base := []string{"--resolve", w.ResolveString(), "--data-dir", dir,
		"--database-url", "sqlite://" + filepath.Join(dir, "z.db"), "--config-dir", filepath.Join(dir, "none"),
		"--chromium", filepath.Join(dir, "no-chromium")}
	var article sim.TruthArticle
	for _, a := range w.Truth() {
		if a.Host == "www.lianzhou.gov.test" {
			article = a
			break
		}
	}
	run := func(args ...string) (string, error) {
		return runInProcess(append(append([]string{}, base...), args...)...)
	}
	// fetch keeps its politeness state in the database; it never makes one.
	if _, err := run("migrate"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string // in the output (or the exit message)
		wantErr bool
	}{
		{"html is transcoded to UTF-8", []string{"fetch", article.URL}, article.Title, false},
		{"text is readable", []string{"fetch", "--format", "text", article.URL}, article.Title, false},
		{"robots refusal names the rule", []string{"fetch", "http://www.gd.gov.test/zwgk/rsrm/x.html"},
			`blocked by robots.txt line 2 "Disallow: /zwgk/rsrm/"`, true},
		{"ssrf refusal says why", []string{"fetch", "http://169.254.169.254/latest/"},
			"refused: 169.254.169.254 is a metadata address", true},
		{"bad format", []string{"fetch", "--format", "pdf", article.URL}, "--format", true},
		{"purpose robots is not a way past robots.txt", []string{"fetch", "--purpose", "robots", "http://www.gd.gov.test/zwgk/rsrm/x.html"},
			`--purpose "robots"`, true},
		{"unknown purpose", []string{"fetch", "--purpose", "crawl", article.URL}, `--purpose "crawl"`, true},
		{"a site error is a failure", []string{"fetch", "http://www.lianzhou.gov.test/no/such/page.html"}, "answered HTTP 404", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(tt.args...)
			if tt.wantErr {
				var ee *exitError
				if !errors.As(err, &ee) {
					t.Fatalf("err = %v, want an exit error", err)
				}
				out = ee.msg
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output %.300q does not contain %q", out, tt.want)
			}
			if tt.name == "text is readable" && strings.Contains(out, "<") {
				t.Errorf("text output has markup: %.300q", out)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		out, err := run("fetch", "--format", "json", "--purpose", "detail", article.URL)
		if err != nil {
			t.Fatal(err)
		}
		var j fetchJSON
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("not JSON: %v\n%.300s", err, out)
		}
		if j.Status != 200 || j.Tier != "httpx" || j.WireBytes == 0 || j.Headers["Content-Type"] == "" ||
			!strings.Contains(j.Body, article.Title) || strings.ToLower(j.Charset) != "gb18030" {
			t.Errorf("json %+v", j)
		}
	})
}
