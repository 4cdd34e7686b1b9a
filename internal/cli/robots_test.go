package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRobotsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	body := "User-agent: *\nDisallow: /\n\nUser-agent: zhizhi\n\n\nDisallow: /zwgk/\nAllow: /zwgk/gkml/\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		want     []string
		wantCode int
	}{
		{
			name: "decisions name rule and line",
			args: []string{"robots", "check", "--robots", file, "--agent", "zhizhi",
				"http://x/zwgk/a.html", "http://x/zwgk/gkml/b.html", "http://x/index.html"},
			want: []string{
				`disallowed  http://x/zwgk/a.html  line 7 "Disallow: /zwgk/"`,
				`allowed     http://x/zwgk/gkml/b.html  line 8 "Allow: /zwgk/gkml/"`,
				`allowed     http://x/index.html  (no rule matched)`,
			},
		},
		{
			name: "another agent falls back to the star group",
			args: []string{"robots", "check", "--robots", file, "--agent", "otherbot", "http://x/index.html"},
			want: []string{`disallowed  http://x/index.html  line 2 "Disallow: /"`},
		},
		{
			name:     "missing file is a readable error",
			args:     []string{"robots", "check", "--robots", filepath.Join(dir, "none.txt"), "http://x/"},
			want:     []string{"robots check: read "},
			wantCode: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs(tt.args)
			err := root.Execute()
			text := out.String()
			if tt.wantCode != 0 {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != tt.wantCode {
					t.Fatalf("err = %v, want exit code %d", err, tt.wantCode)
				}
				text = ee.msg
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output %q lacks %q", text, w)
				}
			}
		})
	}
}
