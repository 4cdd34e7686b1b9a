package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtractBadInput: extract refuses what it cannot use in one plain
// sentence, and never reads a huge file whole.
func TestExtractBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 21 MB, one more than the 20 MB the fetcher takes off the wire; a
	// sparse file, so the test writes nothing to disk.
	huge := write("huge.html", []byte("<html><body>"))
	if err := os.Truncate(huge, 21<<20); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, want string
	}{
		{"too large", huge, "huge.html is 21 MB; extract reads at most 20 MB of HTML"},
		{"empty", write("empty.html", nil), "empty.html is an empty file"},
		{"only blank lines", write("blank.html", []byte("\n\r\n  \n")), "blank.html is an empty file"},
		{"a PDF", write("notice.html", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")), "notice.html is not HTML (it looks like a PDF document)"},
		{"an image", write("pic.html", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")), "pic.html is not HTML (it looks like an image"},
		{"plain text", write("notes.html", []byte("关于做好防汛工作的通知\n各县（市、区）人民政府：\n")), "notes.html is not HTML (plain text with no tags)"},
	}
	env := []string{"ZHIZHI_DATA_DIR=" + dir}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runZhizhi(t, env, "extract", tt.file)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q, want exit 1, no output, saying %q", r.code, r.stdout, r.stderr, tt.want)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line", r.stderr)
			}
		})
	}
}

// TestExtractDates: dates come out as YYYY-MM-DD (Beijing), and a page that
// states no date gets none from the numbers in its file name or links.
func TestExtractDates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	body := `<h1>关于做好2024年汛期安全防范工作的通知</h1><div class="content">
<p>各县（市、区）人民政府，市政府各部门：为切实做好今年汛期安全防范工作，确保人民群众生命财产安全，现就有关事项通知如下。</p>
<p>一、高度重视防汛工作。各地各部门要充分认识防汛工作的重要性和紧迫性，层层压实责任，确保各项措施落到实处。</p>
<p>二、加强监测预警。气象、水利等部门要加强会商研判，及时发布预警信息，提前转移受威胁群众。</p></div>`
	type out struct {
		PublishTime *string           `json:"publish_time"`
		PublishDate *string           `json:"publish_date"`
		Canonical   map[string]string `json:"canonical"`
	}
	run := func(t *testing.T, name, html string, args ...string) out {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runZhizhi(t, []string{"ZHIZHI_DATA_DIR=" + dir}, append(append([]string{"extract"}, args...), p)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var o out
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		return o
	}

	t.Run("attribute dates normalised", func(t *testing.T) {
		o := run(t, "page.html", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>通知</title></head><body>`+body+
			`<table><tr><td>索引号：</td><td>11441800/2024-00012</td><td>发布日期：</td><td>2024年3月5日</td></tr>
<tr><td>成文日期：</td><td>2024年03月01日</td><td>文号：</td><td>清府办〔2024〕3号</td></tr></table></body></html>`)
		if o.Canonical["publish_date"] != "2024-03-05" {
			t.Errorf("canonical publish_date %q, want 2024-03-05", o.Canonical["publish_date"])
		}
		if o.PublishDate == nil || *o.PublishDate != "2024-03-05" {
			t.Errorf("publish_date %v, want 2024-03-05", o.PublishDate)
		}
	})
	t.Run("no date from paths", func(t *testing.T) {
		o := run(t, "20240305.html", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>通知</title>
<link rel="canonical" href="http://www.qingyuan.gov.test/zwgk/2024/0305/20240305.html"></head><body>`+body+
			`<a href="/zwgk/2024/03/05/t20240305_2.html">上一篇</a></body></html>`,
			"--base", "http://www.qingyuan.gov.test/zwgk/2024/0305/20240305.html")
		if o.PublishTime != nil || o.PublishDate != nil {
			t.Errorf("publish_time %v publish_date %v invented from a path, want none", o.PublishTime, o.PublishDate)
		}
	})
}
