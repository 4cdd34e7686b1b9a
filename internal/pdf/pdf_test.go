package pdf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"zhizhi/internal/pdf/pdftest"

	"golang.org/x/text/unicode/norm"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("%v (regenerate: go run ./internal/pdf/testdata/gen internal/pdf/testdata)", err)
	}
	return b
}

// TestInspectFixtures: every fixture, well-formed or hostile, gets its one
// expected answer: a report that says what the file is, or a typed error.
func TestInspectFixtures(t *testing.T) {
	cases := []struct {
		file    string
		limits  Limits
		wantErr error
		check   func(t *testing.T, r *Report)
	}{
		{file: "text-zh.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText, ClassText)
			if r.Version != "1.4" || r.Encryption.Encrypted || r.JavaScript || len(r.EmbeddedFiles) != 0 || len(r.OCRPages) != 0 {
				t.Errorf("version %q, encryption %+v, javascript %v, embedded %v, ocr %v; want 1.4 and nothing else", r.Version, r.Encryption, r.JavaScript, r.EmbeddedFiles, r.OCRPages)
			}
			for _, p := range r.Pages {
				if len(p.Fonts) != 1 || !strings.HasSuffix(p.Fonts[0], "+WenQuanYiMicroHei") || len(p.Images) != 0 {
					t.Errorf("page %d: fonts %v, images %v; want the one subset CJK font and no image", p.Number, p.Fonts, p.Images)
				}
			}
			if r.Objects < 10 || r.Objects > 100 {
				t.Errorf("objects %d; want the few dozen of a two-page file", r.Objects)
			}
		}},
		{file: "scanned-zh.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassScanned)
			wantOCR(t, r, 1)
			p := r.Pages[0]
			if len(p.Fonts) != 0 || len(p.Images) != 1 || p.Images[0].Width != 1653 || p.Images[0].Height != 2339 {
				t.Errorf("fonts %v, images %+v; want no font and the 1653×2339 scan", p.Fonts, p.Images)
			}
		}},
		{file: "mixed-zh.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassMixed)
			wantOCR(t, r, 1)
			if p := r.Pages[0]; !p.Text || len(p.Images) != 1 {
				t.Errorf("text %v, images %+v; want text and one picture", p.Text, p.Images)
			}
		}},
		{file: "encrypted-owner.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText, ClassText)
			if r.Encryption != (Encryption{Encrypted: true, UserPassword: false}) {
				t.Errorf("encryption %+v; want encrypted without a user password", r.Encryption)
			}
		}},
		{file: "encrypted-user.pdf", wantErr: ErrEncrypted, check: func(t *testing.T, r *Report) {
			if r == nil || r.Encryption != (Encryption{Encrypted: true, UserPassword: true}) || r.Bytes == 0 {
				t.Errorf("report %+v; want what is known without the password: encrypted, with a user password", r)
			}
		}},
		// The cross-reference table points nowhere; pdfcpu rebuilds it
		// from the objects, as readers do.
		{file: "malformed-xref.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText, ClassText)
		}},
		{file: "truncated.pdf", wantErr: ErrMalformed},
		{file: "not-a-pdf.pdf", wantErr: ErrMalformed},
		{file: "no-page-tree.pdf", wantErr: ErrMalformed},
		{file: "searchable-scan.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassMixed)
			wantOCR(t, r, 1)
		}},
		{file: "object-explosion.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText)
			if r.Objects < 20_000 {
				t.Errorf("objects %d; want the 20,000 of its chain counted", r.Objects)
			}
		}},
		{file: "object-explosion.pdf", limits: Limits{MaxObjects: 10_000}, wantErr: ErrTooBig},
		{file: "text-zh.pdf", limits: Limits{MaxBytes: 10_000}, wantErr: ErrTooBig},
		{file: "text-zh.pdf", limits: Limits{MaxPages: 1}, wantErr: ErrTooBig},
		// 1 GiB of content behind two Flate filters, in a 5 KB file.
		{file: "compression-bomb.pdf", wantErr: ErrTooBig},
		{file: "huge-image.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassScanned)
			if im := r.Pages[0].Images; len(im) != 1 || im[0].Width != 200_000 || im[0].Height != 200_000 {
				t.Errorf("images %+v; want the declared 200000×200000", im)
			}
		}},
		{file: "javascript.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText)
			if !r.JavaScript {
				t.Error("javascript false; want true (an open action and a name tree run scripts)")
			}
		}},
		{file: "embedded-file.pdf", check: func(t *testing.T, r *Report) {
			wantPages(t, r, ClassText, ClassText)
			want := []EmbeddedFile{{Name: "名单.csv", Size: 40}}
			if !slices.Equal(r.EmbeddedFiles, want) {
				t.Errorf("embedded files %+v; want %+v", r.EmbeddedFiles, want)
			}
		}},
	}
	for _, c := range cases {
		name := strings.TrimSuffix(c.file, ".pdf")
		if c.limits != (Limits{}) {
			name += "/limited"
		}
		t.Run(name, func(t *testing.T) {
			r, err := Inspect(context.Background(), fixture(t, c.file), c.limits)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v; want %v", err, c.wantErr)
				}
				var e *Error
				if !errors.As(err, &e) || e.Detail == "" {
					t.Errorf("error %v carries no detail", err)
				}
			} else if err != nil {
				t.Fatalf("error %v; want a report", err)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func wantPages(t *testing.T, r *Report, classes ...Class) {
	t.Helper()
	var got []Class
	for _, p := range r.Pages {
		got = append(got, p.Class)
	}
	if r.PageCount != len(classes) || !slices.Equal(got, classes) {
		t.Fatalf("page count %d, classes %v; want %v", r.PageCount, got, classes)
	}
	file := classes[0]
	for _, c := range classes[1:] {
		if c != file {
			file = ClassMixed
		}
	}
	if r.Class != file {
		t.Errorf("file class %q; want %q", r.Class, file)
	}
}

func wantOCR(t *testing.T, r *Report, pages ...int) {
	t.Helper()
	if !slices.Equal(r.OCRPages, pages) {
		t.Errorf("pages needing OCR %v; want %v", r.OCRPages, pages)
	}
}

// TestParseFixtures: the text layer of every readable fixture, and the
// typed error of every unreadable one.
func TestParseFixtures(t *testing.T) {
	pdftest.RequireTools(t, false)
	page1 := "市人民政府办公厅关于印发二〇二六年政务公开工作要点的通知"
	page2 := "二、围绕优化营商环境，深化办事服务公开。"
	cases := []struct {
		file    string
		opts    Options
		wantErr error
		check   func(t *testing.T, r *Result)
	}{
		{file: "text-zh.pdf", check: func(t *testing.T, r *Result) { wantText(t, r, page1, page2) }},
		{file: "encrypted-owner.pdf", check: func(t *testing.T, r *Result) { wantText(t, r, page1, page2) }},
		{file: "malformed-xref.pdf", check: func(t *testing.T, r *Result) { wantText(t, r, page1, page2) }},
		{file: "embedded-file.pdf", check: func(t *testing.T, r *Result) { wantText(t, r, page1, page2) }},
		{file: "javascript.pdf", check: func(t *testing.T, r *Result) { wantText(t, r, "Notice 2026-17") }},
		// OCR off: the scan is listed as skipped, not read.
		{file: "scanned-zh.pdf", check: func(t *testing.T, r *Result) {
			wantText(t, r, "")
			if !slices.Equal(r.Skipped, []int{1}) || r.Pages[0].OCR != "" {
				t.Errorf("skipped %v, ocr %q; want page 1 skipped and nothing read", r.Skipped, r.Pages[0].OCR)
			}
		}},
		// The image declares 40 Gpx: never extracted or rendered.
		{file: "huge-image.pdf", opts: Options{OCR: true}, check: func(t *testing.T, r *Result) {
			if p := r.Pages[0]; p.OCR != "" || !strings.Contains(p.Error, "200000×200000") {
				t.Errorf("page %+v; want no OCR and an error naming the declared size", p)
			}
			for _, run := range r.Runs {
				if run.Tool != "pdftotext" {
					t.Errorf("%s ran on the huge image; want only pdftotext", run.Tool)
				}
			}
		}},
		// A searchable scan: its invisible text layer is its OCR; the
		// picture is not read again.
		{file: "searchable-scan.pdf", opts: Options{OCR: true}, check: func(t *testing.T, r *Result) {
			wantText(t, r, "Searchable layer line 19 of the scanned notice")
			if p := r.Pages[0]; p.OCR != "" || p.Error != "" || len(r.Skipped) != 0 || len(r.Runs) != 1 {
				t.Errorf("page %+v, skipped %v, runs %v; want the text layer only, nothing else run", p, r.Skipped, r.Runs)
			}
		}},
		{file: "text-zh.pdf", opts: Options{Tools: ToolLimits{OutputBytes: 100}}, wantErr: ErrTooBig},
		// 16 MiB of address space: pdftotext cannot even load its libraries.
		{file: "text-zh.pdf", opts: Options{Tools: ToolLimits{MemoryBytes: 16 << 20}}, wantErr: ErrTooBig},
		{file: "encrypted-user.pdf", wantErr: ErrEncrypted},
		{file: "truncated.pdf", wantErr: ErrMalformed},
		{file: "not-a-pdf.pdf", wantErr: ErrMalformed},
		{file: "compression-bomb.pdf", wantErr: ErrTooBig},
		{file: "object-explosion.pdf", opts: Options{Limits: Limits{MaxObjects: 10_000}}, wantErr: ErrTooBig},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".pdf"), func(t *testing.T) {
			r, err := Parse(context.Background(), fixture(t, c.file), c.opts)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || r != nil {
					t.Fatalf("result %v, error %v; want no result and %v", r, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v; want text", err)
			}
			c.check(t, r)
		})
	}
}

// wantText: page i's text layer contains want[i] (every page's when want
// is "": nothing).
func wantText(t *testing.T, r *Result, want ...string) {
	t.Helper()
	if len(r.Pages) != len(want) {
		t.Fatalf("%d pages; want %d", len(r.Pages), len(want))
	}
	for i, w := range want {
		got := r.Pages[i].Text
		if w == "" && strings.TrimSpace(got) != "" || !strings.Contains(strings.ReplaceAll(got, "\n", ""), w) {
			t.Errorf("page %d text %q; want it to contain %q", i+1, got, w)
		}
	}
}

// TestParseOCRReadsScannedChinese: a page of Chinese text rendered to an
// image and wrapped in a PDF is read back with at least 0.9 of its
// characters.
func TestParseOCRReadsScannedChinese(t *testing.T) {
	pdftest.RequireTools(t, true)
	truth := string(fixture(t, "scanned-zh.txt"))
	for _, c := range []struct{ file, source string }{
		// 200 dpi: characters about 44 px tall, read from the image itself.
		{"scanned-zh.pdf", "native"},
		// 400 dpi: about 89 px, so the page is rendered for about 40.
		{"scanned-zh-400dpi.pdf", "render:206"},
	} {
		r, err := Parse(context.Background(), fixture(t, c.file), Options{OCR: true})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Pages[0]
		if p.Error != "" || p.Source != c.source || len(r.Skipped) != 0 {
			t.Fatalf("%s: page error %q, image %q, skipped %v; want %s read", c.file, p.Error, p.Source, r.Skipped, c.source)
		}
		acc := charAccuracy(truth, r.Text())
		t.Logf("%s (%s): character accuracy %.3f", c.file, p.Source, acc)
		if acc < 0.9 {
			t.Errorf("%s: character accuracy %.3f < 0.9; read:\n%s", c.file, acc, r.Text())
		}
	}

	// The mixed page: its text layer and the picture beside it.
	r, err := Parse(context.Background(), fixture(t, "mixed-zh.pdf"), Options{OCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Pages[0]; !strings.Contains(p.Text, "政务信息公开目录") || !strings.Contains(p.OCR, "规范公开内容") {
		t.Errorf("mixed page text %q, ocr %q; want the text layer and the picture's text", p.Text, p.OCR)
	}
}

// TestParseOCRBusy: while one OCR runs a second is refused at once, with a
// time to come back, and before any tool runs.
func TestParseOCRBusy(t *testing.T) {
	pdftest.RequireTools(t, true)
	release, err := acquireOCR(3) // the first file's OCR, three pages long
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(context.Background(), fixture(t, "scanned-zh.pdf"), Options{OCR: true})
	var busy *OCRBusyError
	if !errors.Is(err, ErrOCRBusy) || !errors.As(err, &busy) || r != nil {
		t.Fatalf("result %v, error %v; want ErrOCRBusy", r, err)
	}
	if busy.RetryAfter < 2*ocrSecondsPerPage*time.Second {
		t.Errorf("retry after %s; want about the three pages left", busy.RetryAfter)
	}
	// Text without OCR does not wait for the slot.
	if _, err := Parse(context.Background(), fixture(t, "text-zh.pdf"), Options{OCR: true}); err != nil {
		t.Errorf("a text file while OCR is busy: %v", err)
	}
	release()
	if _, err := Parse(context.Background(), fixture(t, "scanned-zh.pdf"), Options{OCR: true}); err != nil {
		t.Errorf("after the first OCR ended: %v", err)
	}
}

// charAccuracy is 1 − edit distance / length of the truth, over the
// characters that are not spaces, after NFKC (a full-width colon read as a
// half-width one is the same character to a reader).
func charAccuracy(truth, got string) float64 {
	clean := func(s string) []rune {
		var out []rune
		for _, r := range norm.NFKC.String(s) {
			if !unicode.IsSpace(r) {
				out = append(out, r)
			}
		}
		return out
	}
	a, b := clean(truth), clean(got)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(b)])/float64(len(a))
}
