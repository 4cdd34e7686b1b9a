package acquire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"zhizhi/internal/pdf/pdftest"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/fetch/ssrftest"
	"zhizhi/internal/pdf"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// pdfHost serves the PDF fixtures of internal/pdf at /pdf/<name>, a web
// page, a page robots.txt disallows and a missing file.
const pdfHost = "www.pdf.gov.test"

type pdfSite = countingSite

func newPDFSite(t testing.TB, extra map[string][]byte) *pdfSite {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", disallowPrivate)
	mux.HandleFunc("/pdf/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		b, ok := extra[name]
		if !ok {
			var err error
			if b, err = os.ReadFile(filepath.Join("..", "pdf", "testdata", filepath.Base(name))); err != nil {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(b)
	})
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><title>附件下载</title><p>文件已移动。</p>")
	})
	mux.HandleFunc("/private/secret.pdf", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("robots.txt disallows %s, and it was asked for", r.URL.Path)
	})
	return serveCounted(t, mux)
}

func pdfURL(name string) string { return "http://" + pdfHost + "/pdf/" + name }

// withPDFSite lets the client reach s as pdfHost.
func withPDFSite(s *pdfSite) envOption {
	return func(o *fetch.ClientOptions, d *Deps) { o.Resolve[pdfHost] = s.addr }
}

// withPDFMaxBytes sets the API's PDF limit.
func withPDFMaxBytes(n int64) envOption {
	return func(o *fetch.ClientOptions, d *Deps) { d.PDFMaxBytes = n }
}

// pdfData is the data of a PDF answer, inspect's or parse's.
type pdfData struct {
	Report       *pdf.Report    `json:"report"`
	Pages        []pdf.PageText `json:"pages"`
	Text         string         `json:"text"`
	OCRSkipped   []int          `json:"ocr_skipped"`
	OCRPagesRead int            `json:"ocr_pages_read"`
	Acquisition  PDFAcquisition `json:"acquisition"`
}

func (a *answer) pdf(t testing.TB) *pdfData {
	t.Helper()
	var v struct {
		Data *pdfData `json:"data"`
	}
	if err := json.Unmarshal(a.raw, &v); err != nil || v.Data == nil || v.Data.Report == nil {
		t.Fatalf("not a PDF answer (%v): %.500s", err, a.raw)
	}
	return v.Data
}

// uploadTo posts data as the form's "file" (named filename), with fields
// beside it, to url+path, and checks the answer against openapi.yaml.
func uploadTo(t testing.TB, base, path, filename string, data []byte, fields map[string]string, hdr ...string) *answer {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if data != nil {
		fw, err := mw.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, base+path, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	a := &answer{status: resp.StatusCode, header: resp.Header}
	a.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(a.raw, a); err != nil {
		t.Fatalf("POST %s: answer is not JSON (%v): %s", path, err, a.raw)
	}
	checkSpec(t, path, a)
	return a
}

func pdfFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "pdf", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pdfCase is one fixture's expected answer, by URL and by upload.
type pdfCase struct {
	file   string
	status int
	code   string // of a failure
	// byURL overrides status and code when the file is fetched by URL.
	urlStatus int
	urlCode   string
	check     func(t *testing.T, d *pdfData)
}

func classes(t *testing.T, d *pdfData, file pdf.Class, pages ...pdf.Class) {
	t.Helper()
	var got []pdf.Class
	for _, p := range d.Report.Pages {
		got = append(got, p.Class)
	}
	if d.Report.Class != file || !slices.Equal(got, pages) || d.Report.PageCount != len(pages) {
		t.Errorf("file %q, pages %v (%d); want %q, %v", d.Report.Class, got, d.Report.PageCount, file, pages)
	}
}

var pdfCases = []pdfCase{
	{file: "text-zh.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassText, pdf.ClassText, pdf.ClassText)
		if r := d.Report; r.Version != "1.4" || r.Encryption.Encrypted || r.JavaScript || len(r.OCRPages) != 0 || r.Objects < 10 {
			t.Errorf("report %+v; want version 1.4, nothing hidden, no OCR", r)
		}
		if f := d.Report.Pages[0].Fonts; len(f) != 1 || !strings.HasSuffix(f[0], "WenQuanYiMicroHei") {
			t.Errorf("page 1 fonts %v; want the subset CJK font", f)
		}
	}},
	{file: "scanned-zh.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassScanned, pdf.ClassScanned)
		if im := d.Report.Pages[0].Images; !slices.Equal(d.Report.OCRPages, []int{1}) || len(im) != 1 || im[0].Width != 1653 {
			t.Errorf("ocr pages %v, images %+v; want page 1 and its 1653-pixel scan", d.Report.OCRPages, im)
		}
	}},
	{file: "scanned-zh-400dpi.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassScanned, pdf.ClassScanned)
	}},
	{file: "mixed-zh.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassMixed, pdf.ClassMixed)
		if !slices.Equal(d.Report.OCRPages, []int{1}) {
			t.Errorf("ocr pages %v; want [1]", d.Report.OCRPages)
		}
	}},
	{file: "searchable-scan.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassMixed, pdf.ClassMixed)
	}},
	{file: "encrypted-owner.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassText, pdf.ClassText, pdf.ClassText)
		if e := d.Report.Encryption; !e.Encrypted || e.UserPassword {
			t.Errorf("encryption %+v; want encrypted, no user password", e)
		}
	}},
	{file: "encrypted-user.pdf", status: 422, code: CodePDFEncrypted},
	{file: "malformed-xref.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		classes(t, d, pdf.ClassText, pdf.ClassText, pdf.ClassText)
	}},
	{file: "truncated.pdf", status: 422, code: CodePDFMalformed},
	{file: "not-a-pdf.pdf", status: 422, code: CodePDFMalformed, urlStatus: 415, urlCode: CodeUnsupportedContent},
	{file: "no-page-tree.pdf", status: 422, code: CodePDFMalformed},
	{file: "object-explosion.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		if d.Report.Objects < 20_000 {
			t.Errorf("objects %d; want its 20,000 counted", d.Report.Objects)
		}
	}},
	{file: "compression-bomb.pdf", status: 422, code: CodePDFOverLimit},
	{file: "huge-image.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		if im := d.Report.Pages[0].Images; len(im) != 1 || im[0].Width != 200_000 || im[0].Height != 200_000 {
			t.Errorf("images %+v; want the declared 200000×200000", im)
		}
	}},
	{file: "javascript.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		if !d.Report.JavaScript {
			t.Errorf("javascript false; want true")
		}
	}},
	{file: "embedded-file.pdf", status: 200, check: func(t *testing.T, d *pdfData) {
		if ef := d.Report.EmbeddedFiles; len(ef) != 1 || ef[0].Name != "名单.csv" || ef[0].Size != 40 {
			t.Errorf("embedded files %+v; want 名单.csv of 40 bytes", ef)
		}
	}},
}

// TestPDFInspectFixtures: every adversarial fixture, by URL through the
// polite client and as an upload, gets its one expected answer — a report
// saying what the file is, or a clear error code — and a fetched file is
// kept and named by its SHA-256 while an uploaded one is only hashed.
func TestPDFInspectFixtures(t *testing.T) {
	site := newPDFSite(t, nil)
	e := newEnv(t, storetest.SQLite(t), withPDFSite(site))
	files, _ := filepath.Glob(filepath.Join("..", "pdf", "testdata", "*.pdf"))
	if len(files) != len(pdfCases) {
		t.Errorf("%d fixtures in internal/pdf/testdata, %d cases here: every fixture needs its case", len(files), len(pdfCases))
	}
	for _, c := range pdfCases {
		t.Run(strings.TrimSuffix(c.file, ".pdf"), func(t *testing.T) {
			data := pdfFixture(t, c.file)
			for _, mode := range []string{"url", "upload"} {
				var a *answer
				status, code := c.status, c.code
				if mode == "url" {
					a = e.post(t, "/v1/pdf/inspect", map[string]any{"url": pdfURL(c.file)})
					if c.urlStatus != 0 {
						status, code = c.urlStatus, c.urlCode
					}
				} else {
					a = uploadTo(t, e.srv.URL, "/v1/pdf/inspect", c.file, data, nil)
				}
				if a.status != status || a.Code != code {
					t.Fatalf("%s: %d %.400s; want %d %s", mode, a.status, a.raw, status, code)
				}
				if status != 200 {
					if a.Success || a.Error == "" {
						t.Errorf("%s: failure without words: %s", mode, a.raw)
					}
					if c.code == CodePDFEncrypted {
						if enc, _ := a.Details["encryption"].(map[string]any); enc["user_password"] != true {
							t.Errorf("%s: details %v; want the encryption named", mode, a.Details)
						}
					}
					continue
				}
				d := a.pdf(t)
				c.check(t, d)
				acq := d.Acquisition
				if !acq.Untrusted || acq.Raw.Bytes != len(data) || len(acq.Raw.SHA256) != 64 {
					t.Errorf("%s: acquisition %+v; want untrusted, the file's size and hash", mode, acq)
				}
				if mode == "url" && (acq.Provider != providerDirect || acq.Raw.Ref == "" || acq.Evidence.Attempts != 1 || acq.SourceURL != pdfURL(c.file)) {
					t.Errorf("url: acquisition %+v; want fetched directly, kept, one attempt", acq)
				}
				if mode == "upload" && (acq.Provider != providerUpload || acq.Raw.Ref != "" || acq.Evidence.Attempts != 0 || acq.Filename != c.file) {
					t.Errorf("upload: acquisition %+v; want an upload, not kept, no attempt", acq)
				}
			}
		})
	}
}

// TestPDFParseFixtures: every fixture through parse (an upload, OCR off)
// is its text page by page or the same clear error as inspect; a scanned
// page without OCR is listed in ocr_skipped, not read.
func TestPDFParseFixtures(t *testing.T) {
	pdftest.RequireTools(t, false)
	e := newEnv(t, storetest.SQLite(t))
	page1 := "市人民政府办公厅关于印发二〇二六年政务公开工作要点的通知"
	for _, c := range pdfCases {
		t.Run(strings.TrimSuffix(c.file, ".pdf"), func(t *testing.T) {
			a := uploadTo(t, e.srv.URL, "/v1/pdf/parse", c.file, pdfFixture(t, c.file), nil)
			if a.status != c.status || a.Code != c.code {
				t.Fatalf("%d %.400s; want %d %s", a.status, a.raw, c.status, c.code)
			}
			if c.status != 200 {
				return
			}
			d := a.pdf(t)
			if len(d.Pages) != d.Report.PageCount || d.OCRPagesRead != 0 {
				t.Errorf("%d pages of text, %d read by OCR; want one per page (%d), none by OCR", len(d.Pages), d.OCRPagesRead, d.Report.PageCount)
			}
			var needOCR []int
			for _, n := range d.Report.OCRPages {
				needOCR = append(needOCR, n)
			}
			if !slices.Equal(d.OCRSkipped, needOCR) && !(len(d.OCRSkipped) == 0 && len(needOCR) == 0) {
				t.Errorf("ocr_skipped %v; want the pages needing OCR %v", d.OCRSkipped, needOCR)
			}
			if len(d.Acquisition.Evidence.ToolRuns) == 0 || d.Acquisition.Evidence.ToolRuns[0].Tool != "pdftotext" {
				t.Errorf("tool runs %+v; want pdftotext's", d.Acquisition.Evidence.ToolRuns)
			}
			switch c.file {
			case "text-zh.pdf", "encrypted-owner.pdf", "malformed-xref.pdf", "embedded-file.pdf":
				if !strings.Contains(d.Pages[0].Text, page1) || !strings.Contains(d.Text, page1) {
					t.Errorf("page 1 text %q; want %q", d.Pages[0].Text, page1)
				}
			case "scanned-zh.pdf":
				if strings.TrimSpace(d.Text) != "" || d.Pages[0].OCR != "" {
					t.Errorf("text %q; want nothing read from a scan with OCR off", d.Text)
				}
			}
		})
	}
}

// TestPDFByURLIsPolite: a PDF by URL is refused by robots.txt before it is
// asked for, a web page is not taken for a PDF, a missing file is the
// site's error, and a file over max_bytes is not read.
func TestPDFByURLIsPolite(t *testing.T) {
	site := newPDFSite(t, nil)
	e := newEnv(t, storetest.SQLite(t), withPDFSite(site))
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"robots.txt disallows", map[string]any{"url": "http://" + pdfHost + "/private/secret.pdf"}, 403, CodeRobotsDisallowed},
		{"a web page", map[string]any{"url": "http://" + pdfHost + "/page.html"}, 415, CodeUnsupportedContent},
		{"missing", map[string]any{"url": pdfURL("gone.pdf")}, 502, CodeSiteError},
		{"over max_bytes", map[string]any{"url": pdfURL("text-zh.pdf"), "max_bytes": 1000}, 502, CodeTooLarge},
	} {
		for _, path := range []string{"/v1/pdf/inspect", "/v1/pdf/parse"} {
			a := e.post(t, path, c.body)
			if a.status != c.status || a.Code != c.code {
				t.Errorf("%s, %s: %d %.300s; want %d %s", c.name, path, a.status, a.raw, c.status, c.code)
			}
		}
	}
	if n := site.count("/private/secret.pdf"); n != 0 {
		t.Errorf("the disallowed file was asked for %d times", n)
	}

	// The server's own download limit, under the PDF limit, is named as such.
	small := newEnv(t, storetest.SQLite(t), withPDFSite(site), func(o *fetch.ClientOptions, d *Deps) {
		o.Limits = fetch.Limits{MaxRawBytes: 10_000, MaxDecompressedBytes: 10_000}
	})
	a := small.post(t, "/v1/pdf/inspect", map[string]any{"url": pdfURL("text-zh.pdf")})
	if a.status != http.StatusBadGateway || a.Code != CodeTooLarge || !strings.Contains(a.Error, "10000 bytes (the server's download limit)") {
		t.Errorf("a PDF over the server's download limit: %d %s", a.status, a.raw)
	}
}

// TestPDFSSRFTable: every target the SSRF guard refuses, given to either
// PDF endpoint by URL, is refused with 403 URL_REFUSED and not one
// connection is opened.
func TestPDFSSRFTable(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, c := range ssrftest.Cases {
		for _, path := range []string{"/v1/pdf/inspect", "/v1/pdf/parse"} {
			a := e.post(t, path, map[string]any{"url": c.URL})
			if a.status != http.StatusForbidden || a.Code != CodeURLRefused || !strings.Contains(a.Error, c.Reason) {
				t.Errorf("%s, %s (%s): %d %s; want 403 %s naming %q", c.Name, path, c.URL, a.status, a.raw, CodeURLRefused, c.Reason)
			}
		}
	}
	if d := e.dialsNow(); len(d) != 0 {
		t.Errorf("the client dialled %v for refused targets; want no connection", d)
	}
}

// TestPDFBadRequests: a request that cannot be served is a 400 naming the
// field (413 for an upload over the limit), and nothing is fetched.
func TestPDFBadRequests(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), withPDFMaxBytes(20_000))
	text := pdfFixture(t, "text-zh.pdf")
	if len(text) <= 20_000 {
		t.Fatalf("text-zh.pdf is %d bytes; the 413 case needs it over the 20,000-byte limit", len(text))
	}
	small := pdfFixture(t, "truncated.pdf")[:2000]
	for _, c := range []struct {
		name, path string
		body       string
		field      string
	}{
		{"no url", "/v1/pdf/inspect", `{}`, "url"},
		{"url not a string", "/v1/pdf/parse", `{"url": 3}`, "url"},
		{"relative url", "/v1/pdf/inspect", `{"url": "/a.pdf"}`, "url"},
		{"ocr on inspect", "/v1/pdf/inspect", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "ocr": true}`, "ocr"},
		{"ocr not a boolean", "/v1/pdf/parse", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "ocr": "yes"}`, "ocr"},
		{"max_ocr_pages 0", "/v1/pdf/parse", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "max_ocr_pages": 0}`, "max_ocr_pages"},
		{"max_ocr_pages over 50", "/v1/pdf/parse", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "max_ocr_pages": 51}`, "max_ocr_pages"},
		{"timeout negative", "/v1/pdf/parse", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "timeout": -1}`, "timeout"},
		{"unknown field", "/v1/pdf/parse", `{"url": "http://www.pdf.gov.test/pdf/a.pdf", "password": "x"}`, "password"},
		{"not an object", "/v1/pdf/parse", `["http://www.pdf.gov.test/pdf/a.pdf"]`, "request body"},
	} {
		a := e.post(t, c.path, c.body)
		if a.status != http.StatusBadRequest || a.Code != CodeInvalidRequest || !strings.HasPrefix(a.Error, c.field) {
			t.Errorf("%s: %d %s; want 400 naming %s", c.name, a.status, a.raw, c.field)
		}
	}
	for _, c := range []struct {
		name   string
		data   []byte
		fields map[string]string
		status int
		field  string
	}{
		{"no file", nil, map[string]string{"ocr": "true"}, 400, "file"},
		{"empty file", []byte{}, nil, 400, "file"},
		{"url beside the file", small, map[string]string{"url": "http://www.pdf.gov.test/pdf/a.pdf"}, 400, "url"},
		{"unknown field", small, map[string]string{"pages": "1-3"}, 400, "pages"},
		{"ocr not a boolean", small, map[string]string{"ocr": "maybe"}, 400, "ocr"},
		{"max_ocr_pages not a number", small, map[string]string{"max_ocr_pages": "all"}, 400, "max_ocr_pages"},
		{"over the limit", text, nil, 413, ""},
	} {
		a := uploadTo(t, e.srv.URL, "/v1/pdf/parse", "a.pdf", c.data, c.fields)
		if c.status == 413 {
			if a.status != http.StatusRequestEntityTooLarge || a.Code != CodeFileTooLarge || !strings.Contains(a.Error, "20000 bytes") {
				t.Errorf("%s: %d %s; want 413 %s naming the limit", c.name, a.status, a.raw, CodeFileTooLarge)
			}
			continue
		}
		if a.status != c.status || a.Code != CodeInvalidRequest || !strings.HasPrefix(a.Error, c.field) {
			t.Errorf("%s: %d %s; want 400 naming %s", c.name, a.status, a.raw, c.field)
		}
	}
	if d := e.dialsNow(); len(d) != 0 {
		t.Errorf("bad requests made the client dial %v", d)
	}
}

// scans makes a PDF of n copies of the scanned fixture's page.
func scans(t testing.TB, n int) []byte {
	t.Helper()
	page := pdfFixture(t, "scanned-zh.pdf")
	var in []io.ReadSeeker
	for range n {
		in = append(in, bytes.NewReader(page))
	}
	var out bytes.Buffer
	if err := api.MergeRaw(in, &out, false, nil); err != nil {
		t.Fatalf("merge %d scans: %v", n, err)
	}
	return out.Bytes()
}

// ocrKey makes an operator's acquire key with ocrPages OCR pages a day.
func ocrKey(t *testing.T, g *guarded, ocrPages int64) (hdr []string, keyID int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := g.users.CreateUser(ctx, "test", "alice", "a long enough passphrase", auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	secret, k, err := g.users.CreateAPIKey(ctx, "test", "alice", "reader", []string{auth.ScopeAcquire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	setOCR(t, g, k.ID, ocrPages)
	return []string{"Authorization", "Bearer " + secret}, k.ID
}

func setOCR(t *testing.T, g *guarded, keyID, ocrPages int64) {
	t.Helper()
	if err := g.b.SetLimits(context.Background(), "test", keyID, budget.Limits{
		PerDay: budget.Cost{Requests: 20, Bytes: 1 << 30, OCRPages: ocrPages}, RequestsPerMinute: 60}); err != nil {
		t.Fatal(err)
	}
}

func usageOf(t *testing.T, g *guarded, keyID int64) budget.Usage {
	t.Helper()
	u, err := g.b.Usage(context.Background(), keyID)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPDFOCRBudget: an OCR parse holds its pages against the key's daily
// OCR pages before tesseract runs and is charged the pages read; a key
// with none left is answered 402 naming the budget before the site is
// asked; a file needing more pages than are left is answered 402 saying
// how many it needs and how many are left (an upload billed nothing, a
// download its request and bytes); a parse without OCR still works.
func TestPDFOCRBudget(t *testing.T) {
	pdftest.RequireTools(t, true)
	storetest.ForEachDialect(t, testPDFOCRBudget)
}

func testPDFOCRBudget(t *testing.T, st *store.Store) {
	three := scans(t, 3)
	site := newPDFSite(t, map[string][]byte{"three-scans.pdf": three})
	g := newGuarded(t, st, withPDFSite(site))
	hdr, keyID := ocrKey(t, g, 1)
	// A line of the scan's text (OCR may misread a character elsewhere).
	truth := "为进一步推进政务公开，提高政府工作透明度"
	if !strings.Contains(string(pdfFixture(t, "scanned-zh.txt")), truth) {
		t.Fatalf("scanned-zh.txt no longer says %q", truth)
	}

	a := g.call(t, http.MethodPost, "/v1/pdf/parse", map[string]any{"url": pdfURL("scanned-zh.pdf"), "ocr": true}, hdr...)
	if a.status != http.StatusOK {
		t.Fatalf("OCR parse: %d %.500s", a.status, a.raw)
	}
	d := a.pdf(t)
	if d.OCRPagesRead != 1 || len(d.OCRSkipped) != 0 || !strings.Contains(d.Pages[0].OCR, truth) || !strings.Contains(d.Text, truth) {
		t.Errorf("read %d by OCR, skipped %v, OCR %q; want page 1 read, with %q", d.OCRPagesRead, d.OCRSkipped, d.Pages[0].OCR, truth)
	}
	u := usageOf(t, g, keyID)
	if u.OCRPages.Used != 1 || u.OCRPages.Reserved != 0 || u.Requests.Used != 1 || u.Bytes.Used != d.Acquisition.Evidence.WireBytes || u.Bytes.Used == 0 {
		t.Errorf("after one OCR page: %+v; want 1 OCR page, 1 request, its %d bytes, nothing held", u, d.Acquisition.Evidence.WireBytes)
	}

	// None left: refused before the site is asked, billed nothing.
	asked := site.count("/pdf/scanned-zh.pdf")
	a = g.call(t, http.MethodPost, "/v1/pdf/parse", map[string]any{"url": pdfURL("scanned-zh.pdf"), "ocr": true}, hdr...)
	if a.status != http.StatusPaymentRequired || a.Code != CodeBudgetExceeded || !strings.Contains(a.Error, "OCR pages") {
		t.Errorf("OCR parse with no OCR page left: %d %s; want 402 naming the OCR pages", a.status, a.raw)
	}
	if site.count("/pdf/scanned-zh.pdf") != asked {
		t.Errorf("the site was asked for a parse over the OCR budget")
	}
	// Without OCR the text layer is still read, and the scan listed.
	a = g.call(t, http.MethodPost, "/v1/pdf/parse", map[string]any{"url": pdfURL("scanned-zh.pdf")}, hdr...)
	if a.status != http.StatusOK || !slices.Equal(a.pdf(t).OCRSkipped, []int{1}) {
		t.Errorf("parse without OCR: %d %.300s", a.status, a.raw)
	}
	if u := usageOf(t, g, keyID); u.OCRPages.Used != 1 || u.Requests.Used != 2 {
		t.Errorf("after the refusal and a text-only parse: %+v; want 2 requests, still 1 OCR page", u)
	}

	// One page left, three needed.
	setOCR(t, g, keyID, 2)
	a = uploadTo(t, g.srv.URL, "/v1/pdf/parse", "three-scans.pdf", three, map[string]string{"ocr": "true"}, hdr...)
	if a.status != http.StatusPaymentRequired || a.Code != CodeBudgetExceeded ||
		!strings.Contains(a.Error, "3 pages to read by OCR") || !strings.Contains(a.Error, "1 left") {
		t.Errorf("an upload needing 3 OCR pages with 1 left: %d %s; want 402 saying 3 needed, 1 left", a.status, a.raw)
	}
	if u := usageOf(t, g, keyID); u.Requests.Used != 2 || u.OCRPages.Used != 1 || u.OCRPages.Reserved != 0 || u.Requests.Reserved != 0 {
		t.Errorf("after the refused upload: %+v; want nothing billed, nothing held", u)
	}
	a = g.call(t, http.MethodPost, "/v1/pdf/parse", map[string]any{"url": pdfURL("three-scans.pdf"), "ocr": true}, hdr...)
	if a.status != http.StatusPaymentRequired || a.Code != CodeBudgetExceeded || !strings.Contains(a.Error, "3 pages to read by OCR") {
		t.Errorf("a download needing 3 OCR pages with 1 left: %d %s", a.status, a.raw)
	}
	if u := usageOf(t, g, keyID); u.Requests.Used != 3 || u.OCRPages.Used != 1 || u.OCRPages.Reserved != 0 || u.Bytes.Reserved != 0 {
		t.Errorf("after the refused download: %+v; want its request billed, no OCR page, nothing held", u)
	}
	if n := site.count("/pdf/three-scans.pdf"); n != 1 {
		t.Errorf("three-scans.pdf asked for %d times; want once", n)
	}
}

// TestPDFOCRBusy: one OCR at a time on a server: of two OCR parses sent
// together, one is read and the other refused at once with 503 OCR_BUSY
// and Retry-After (an upload refused so is billed nothing), while a parse
// without OCR is answered meanwhile.
func TestPDFOCRBusy(t *testing.T) {
	pdftest.RequireTools(t, true)
	g := newGuarded(t, storetest.SQLite(t))
	hdr, keyID := ocrKey(t, g, 10)
	scan := pdfFixture(t, "scanned-zh.pdf")
	var wg sync.WaitGroup
	answers := make([]*answer, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = uploadTo(t, g.srv.URL, "/v1/pdf/parse", "scan.pdf", scan, map[string]string{"ocr": "true"}, hdr...)
		}()
	}
	text := uploadTo(t, g.srv.URL, "/v1/pdf/parse", "text.pdf", pdfFixture(t, "text-zh.pdf"), nil, hdr...)
	wg.Wait()
	if text.status != http.StatusOK {
		t.Errorf("a parse without OCR beside the OCR: %d %.300s", text.status, text.raw)
	}
	var read, busy int
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK && a.pdf(t).OCRPagesRead == 1:
			read++
		case a.status == http.StatusServiceUnavailable && a.Code == CodeOCRBusy:
			busy++
			ra, err := strconv.Atoi(a.header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 60 {
				t.Errorf("Retry-After %q; want whole seconds until the OCR in progress is expected to end", a.header.Get("Retry-After"))
			}
		default:
			t.Errorf("OCR parse: %d %.300s", a.status, a.raw)
		}
	}
	if read != 1 || busy != 1 {
		t.Errorf("%d read, %d refused busy; want one of each", read, busy)
	}
	if u := usageOf(t, g, keyID); u.Requests.Used != 2 || u.OCRPages.Used != 1 || u.OCRPages.Reserved != 0 {
		t.Errorf("usage %+v; want the OCR parse and the text parse billed, the busy one not", u)
	}
}
