package sim

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var sampleLines = []string{"关于印发《清远市优化营商环境工作方案》的通知", "各县（市、区）人民政府，市府直属各单位：", strings.Repeat("加强数据共享和信息化支撑，推动相关业务“一网通办”。", 30)}

func TestPDFIsWellFormed(t *testing.T) {
	pdf := buildPDF(append(sampleLines, sampleLines...))
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.7\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatal("missing header or EOF marker")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d does not point at the xref table", xref)
	}
	var n int
	fmt.Sscanf(string(pdf[xref+len("xref\n0 "):]), "%d", &n)
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(pdf[xref:], -1)
	if len(entries) != n-1 {
		t.Fatalf("xref declares %d objects, lists %d", n, len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if !bytes.HasPrefix(pdf[off:], []byte(fmt.Sprintf("%d 0 obj\n", i+1))) {
			t.Errorf("xref entry %d points at %q", i+1, pdf[off:off+10])
		}
	}
	if !bytes.Contains(pdf, []byte(fmt.Sprintf("/Size %d /Root 1 0 R", n))) {
		t.Error("trailer /Size disagrees with xref")
	}
	for _, lm := range regexp.MustCompile(`/Length (\d+) >>\nstream\n`).FindAllSubmatchIndex(pdf, -1) {
		l, _ := strconv.Atoi(string(pdf[lm[2]:lm[3]]))
		if !bytes.HasPrefix(pdf[lm[1]+l:], []byte("\nendstream")) {
			t.Errorf("stream /Length %d is wrong", l)
		}
	}

	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed; structure checked only")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "a.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-q", in, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	if !strings.Contains(squash(string(out)), squash(sampleLines[0])) {
		t.Errorf("pdftotext lost the Chinese title:\n%s", out)
	}
}

func TestDOCXIsWellFormed(t *testing.T) {
	docx := buildDOCX(sampleLines)
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		parts[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml"} {
		if _, ok := parts[name]; !ok {
			t.Fatalf("missing part %s", name)
		}
		dec := xml.NewDecoder(bytes.NewReader(parts[name]))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", name, err)
			}
		}
	}
	var doc struct {
		Paras []struct {
			Runs []struct {
				Text string `xml:"t"`
			} `xml:"r"`
		} `xml:"body>p"`
	}
	if err := xml.Unmarshal(parts["word/document.xml"], &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paras) != len(sampleLines) || doc.Paras[0].Runs[0].Text != sampleLines[0] {
		t.Errorf("document holds %d paragraphs, first %+v", len(doc.Paras), doc.Paras)
	}
	if !bytes.Equal(docx, buildDOCX(sampleLines)) {
		t.Error("DOCX bytes are not deterministic")
	}
}

// TestChromiumPassesChallenge proves a real browser gets through the cookie
// challenge that stops plain clients.
func TestChromiumPassesChallenge(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is required under CI")
		}
		t.Skip("chromium not installed")
	}
	w := startWorld(t, Options{Seed: 1})
	addr := w.ResolveMap()["www.qingyuan.gov.test"]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP www.qingyuan.gov.test "+addr+", EXCLUDE localhost",
		"--dump-dom", "http://www.qingyuan.gov.test/qyfgw/gkmlpt/index")
	// Its own process group, so every helper process dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = &out
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if !strings.Contains(out.String(), "window._CONFIG") {
		t.Fatalf("chromium did not pass the challenge:\n%s", out.String())
	}
	var statuses []int
	for _, a := range w.AccessLog("www.qingyuan.gov.test") {
		if a.Path == "/qyfgw/gkmlpt/index" {
			statuses = append(statuses, a.Status)
		}
	}
	if len(statuses) != 2 || statuses[0] != 412 || statuses[1] != 200 {
		t.Errorf("index statuses %v, want [412 200]", statuses)
	}
}
