package acquire

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/pdf"
	"zhizhi/internal/store"
)

// POST /v1/pdf/inspect and POST /v1/pdf/parse: one PDF, by URL (through
// the polite client) or uploaded.
const (
	pdfInspectPattern = "POST /v1/pdf/inspect"
	pdfParsePattern   = "POST /v1/pdf/parse"

	// DefaultPDFMaxBytes bounds a PDF, uploaded or fetched, when
	// Deps.PDFMaxBytes is zero.
	DefaultPDFMaxBytes = 50 << 20
	// DefaultMaxOCRPages is how many pages one parse reads by OCR when the
	// request names no max_ocr_pages; MaxOCRPages the most it may name.
	DefaultMaxOCRPages = 20
	MaxOCRPages        = 50
	providerUpload     = "upload"
	pdfAccept          = "application/pdf,application/octet-stream;q=0.5,*/*;q=0.1"
	maxFormField       = 64
	multipartSlack     = 64 << 10 // the form's own bytes around the file
)

// Error codes of the PDF endpoints.
const (
	CodeFileTooLarge        = "FILE_TOO_LARGE"
	CodePDFEncrypted        = "PDF_ENCRYPTED"
	CodePDFMalformed        = "PDF_MALFORMED"
	CodePDFOverLimit        = "PDF_OVER_LIMIT"
	CodeOCRBusy             = "OCR_BUSY"
	CodePDFToolsUnavailable = "PDF_TOOLS_UNAVAILABLE"
)

var (
	pdfInspectFields = []string{"url", "timeout", "max_bytes"}
	pdfParseFields   = []string{"url", "timeout", "max_bytes", "ocr", "max_ocr_pages"}
)

// pdfRequest is a checked PDF request: a URL to fetch, or an uploaded file.
type pdfRequest struct {
	URL         string
	Upload      []byte // the file, when uploaded
	Filename    string
	Timeout     time.Duration
	MaxBytes    int64
	OCR         bool
	MaxOCRPages int
}

// PDFInspectData is the answer of POST /v1/pdf/inspect.
type PDFInspectData struct {
	Report      *pdf.Report    `json:"report"`
	Acquisition PDFAcquisition `json:"acquisition"`
}

// PDFParseData is the answer of POST /v1/pdf/parse.
type PDFParseData struct {
	Report *pdf.Report    `json:"report"`
	Pages  []pdf.PageText `json:"pages"`
	// Text is every page's text (its text layer, then what OCR read),
	// pages separated by a blank line.
	Text string `json:"text"`
	// OCRSkipped are the pages that need OCR and did not get it (ocr
	// false, or past max_ocr_pages); OCRPagesRead those that did, the
	// number the key was charged.
	OCRSkipped   []int          `json:"ocr_skipped"`
	OCRPagesRead int            `json:"ocr_pages_read"`
	Acquisition  PDFAcquisition `json:"acquisition"`
}

// PDFAcquisition is where a PDF came from and what was done with it. The
// file's content is untrusted data.
type PDFAcquisition struct {
	SourceURL string    `json:"source_url,omitempty"`
	FinalURL  string    `json:"final_url,omitempty"`
	Filename  string    `json:"filename,omitempty"`
	Provider  string    `json:"provider"` // direct (fetched) or upload
	FetchedAt string    `json:"fetched_at"`
	Raw       PDFRaw    `json:"raw"`
	Untrusted bool      `json:"untrusted"`
	Evidence  PDFRecord `json:"evidence"`
}

// PDFRaw names the file: kept (ref) when fetched, only hashed when uploaded.
type PDFRaw struct {
	Ref         string `json:"ref,omitempty"`
	SHA256      string `json:"sha256"`
	Bytes       int    `json:"bytes"`
	ContentType string `json:"content_type,omitempty"`
}

// PDFRecord is the bounded evidence of the work: the download (when
// fetched) and every tool run with its time and peak memory.
type PDFRecord struct {
	Attempts   int       `json:"attempts"`
	Status     int       `json:"status,omitempty"`
	WireBytes  int64     `json:"wire_bytes"`
	DurationMS int64     `json:"duration_ms"`
	Robots     string    `json:"robots,omitempty"`
	MaxBytes   int64     `json:"max_bytes"`
	TimeoutMS  int64     `json:"timeout_ms"`
	ParseMS    int64     `json:"parse_ms"`
	ToolRuns   []ToolRun `json:"tool_runs"`
}

// ToolRun is one run of pdftotext, pdfimages, pdftoppm or tesseract.
type ToolRun struct {
	Tool         string `json:"tool"`
	Page         int    `json:"page,omitempty"`
	DurationMS   int64  `json:"duration_ms"`
	PeakRSSBytes int64  `json:"peak_rss_bytes"`
}

func (a *API) pdfMaxBytes() int64 {
	if a.d.PDFMaxBytes > 0 {
		return a.d.PDFMaxBytes
	}
	return DefaultPDFMaxBytes
}

// inspectPDF serves POST /v1/pdf/inspect.
func (a *API) inspectPDF(w http.ResponseWriter, r *http.Request) { a.servePDF(w, r, false) }

// parsePDF serves POST /v1/pdf/parse.
func (a *API) parsePDF(w http.ResponseWriter, r *http.Request) { a.servePDF(w, r, true) }

func (a *API) servePDF(w http.ResponseWriter, r *http.Request, parse bool) {
	req, err := a.parsePDFRequest(w, r, parse)
	if err != nil {
		a.fail(w, r, asFailure(err))
		return
	}
	// One request, the download's bytes, and for an OCR parse one OCR page
	// at least: a key with none left is refused before the site is asked.
	est := budget.Cost{Requests: 1}
	if req.Upload == nil {
		est.Bytes = req.MaxBytes
	}
	if req.OCR {
		est.OCRPages = 1
	}
	res, ok := a.reserve(w, r, est)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), req.Timeout)
	defer cancel()
	started := time.Now()
	got, f := a.pdfBytes(ctx, req)
	if f != nil {
		a.settle(r, res, nil, f, 0)
		a.d.Logger.Info("acquire pdf refused or failed", "url", req.URL, "code", f.code, "status", f.status,
			"elapsed_ms", time.Since(started).Milliseconds())
		a.fail(w, r, f)
		return
	}
	parsed := time.Now()
	rep, err := pdf.Inspect(ctx, got.data, pdf.Limits{MaxBytes: req.MaxBytes})
	if err != nil {
		f := pdfFailure(ctx, req, err, rep)
		a.settlePDF(r, res, nil, got, f, 0)
		a.fail(w, r, f)
		return
	}
	acq := got.acquisition(req, a.d.Now())
	if !parse {
		acq.Evidence.ParseMS = time.Since(parsed).Milliseconds()
		a.settlePDF(r, res, nil, got, nil, 0)
		a.d.Logger.Info("acquire pdf inspect", "url", req.URL, "upload", req.Upload != nil, "pages", rep.PageCount,
			"class", rep.Class, "sha256", acq.Raw.SHA256, "elapsed_ms", time.Since(started).Milliseconds())
		writeJSON(w, http.StatusOK, struct {
			Success bool            `json:"success"`
			Data    *PDFInspectData `json:"data"`
		}{true, &PDFInspectData{Report: rep, Acquisition: acq}})
		return
	}

	// The pages OCR will read are known now: the one held before the
	// download, and the rest held here, or 402 naming the OCR pages.
	var more *budget.Reservation
	if n := min(len(rep.OCRPages), req.MaxOCRPages); req.OCR && n > 1 {
		if more, f = a.reserveOCR(r, n, got.upload); f != nil {
			a.settlePDF(r, res, nil, got, f, 0)
			a.fail(w, r, f)
			return
		}
	}
	result, err := pdf.Parse(ctx, got.data, pdf.Options{Limits: pdf.Limits{MaxBytes: req.MaxBytes}, Report: rep,
		OCR: req.OCR, MaxOCRPages: req.MaxOCRPages})
	if err != nil {
		f := pdfFailure(ctx, req, err, rep)
		// An upload refused because OCR is busy was not worked on.
		f.notSent = got.upload && f.code == CodeOCRBusy
		a.settlePDF(r, res, more, got, f, 0)
		a.fail(w, r, f)
		return
	}
	read := 0
	for _, run := range result.Runs {
		if run.Tool == "tesseract" {
			read++
		}
	}
	a.settlePDF(r, res, more, got, nil, read)
	acq.Evidence.ParseMS = time.Since(parsed).Milliseconds()
	for _, run := range result.Runs {
		acq.Evidence.ToolRuns = append(acq.Evidence.ToolRuns, ToolRun{Tool: run.Tool, Page: run.Page,
			DurationMS: run.Duration.Milliseconds(), PeakRSSBytes: run.PeakRSS})
	}
	a.d.Logger.Info("acquire pdf parse", "url", req.URL, "upload", req.Upload != nil, "pages", rep.PageCount,
		"class", rep.Class, "ocr_pages_read", read, "sha256", acq.Raw.SHA256, "elapsed_ms", time.Since(started).Milliseconds())
	writeJSON(w, http.StatusOK, struct {
		Success bool          `json:"success"`
		Data    *PDFParseData `json:"data"`
	}{true, &PDFParseData{Report: rep, Pages: result.Pages, Text: result.Text(), OCRSkipped: result.Skipped,
		OCRPagesRead: read, Acquisition: acq}})
}

// reserveOCR holds the OCR pages of a parse past the first (held with the
// request), or fails with 402 saying how many pages the file needs and
// how many the key has left (billed nothing for an upload).
func (a *API) reserveOCR(r *http.Request, pages int, upload bool) (*budget.Reservation, *failure) {
	p, ok := auth.FromContext(r.Context())
	if a.d.Budget == nil || !ok || p.APIKeyID == 0 {
		return nil, nil
	}
	res, err := a.d.Budget.Reserve(r.Context(), p.APIKeyID, budget.Cost{OCRPages: int64(pages - 1)})
	var over *budget.OverError
	switch {
	case errors.As(err, &over):
		// Used counts the page this request holds already.
		left := max(over.Limit-over.Used+1, 0)
		return nil, &failure{status: http.StatusPaymentRequired, code: CodeBudgetExceeded, notSent: upload,
			msg: fmt.Sprintf("%s: this file has %d pages to read by OCR and the key has %d left today; ask with max_ocr_pages %d, or ocr false for the text layer only",
				over.Error(), pages, left, max(left, 1))}
	case err != nil:
		return nil, asFailure(err)
	}
	return res, nil
}

// settlePDF charges a PDF request: nothing when it was refused before the
// site was asked (or an uploaded file before any work on it), else one
// request, the bytes downloaded and the pages OCR read.
func (a *API) settlePDF(r *http.Request, res, more *budget.Reservation, got *pdfFile, f *failure, ocrRead int) {
	if more != nil {
		var err error
		if f != nil {
			err = more.Cancel(r.Context())
		} else {
			err = more.Settle(r.Context(), budget.Cost{OCRPages: int64(max(ocrRead-1, 0))})
		}
		if err != nil {
			a.d.Logger.Error("acquire pdf: settle OCR pages", "error", err)
		}
	}
	if res == nil {
		return
	}
	var err error
	switch {
	case f != nil && f.notSent:
		err = res.Cancel(r.Context())
	default:
		err = res.Settle(r.Context(), budget.Cost{Requests: 1, Bytes: got.wireBytes, OCRPages: int64(min(ocrRead, 1))})
	}
	if err != nil {
		a.d.Logger.Error("acquire pdf: settle budget", "path", r.URL.Path, "error", err)
	}
}

// pdfFile is a PDF's bytes and how they came.
type pdfFile struct {
	data        []byte
	upload      bool
	filename    string
	sourceURL   string
	finalURL    string
	status      int
	contentType string
	wireBytes   int64
	duration    time.Duration
	rawRef      string
	fetchedAt   time.Time
}

func (g *pdfFile) acquisition(req *pdfRequest, now time.Time) PDFAcquisition {
	sum := sha256.Sum256(g.data)
	acq := PDFAcquisition{SourceURL: g.sourceURL, FinalURL: g.finalURL, Filename: g.filename, Provider: providerDirect,
		FetchedAt: g.fetchedAt.UTC().Format(time.RFC3339Nano), Untrusted: true,
		Raw: PDFRaw{Ref: g.rawRef, SHA256: hex.EncodeToString(sum[:]), Bytes: len(g.data), ContentType: g.contentType},
		Evidence: PDFRecord{Status: g.status, WireBytes: g.wireBytes, DurationMS: g.duration.Milliseconds(),
			MaxBytes: req.MaxBytes, TimeoutMS: req.Timeout.Milliseconds(), ToolRuns: []ToolRun{}}}
	if g.upload {
		acq.Provider = providerUpload
		acq.FetchedAt = now.UTC().Format(time.RFC3339Nano)
	} else {
		acq.Evidence.Attempts, acq.Evidence.Robots = 1, robotsAllowed
	}
	return acq
}

// pdfBytes is the uploaded file, or the file at req.URL fetched through
// the polite client and kept like a fetched page.
func (a *API) pdfBytes(ctx context.Context, req *pdfRequest) (*pdfFile, *failure) {
	if req.Upload != nil {
		return &pdfFile{data: req.Upload, upload: true, filename: req.Filename, contentType: "application/pdf"}, nil
	}
	freq := fetch.Request{URL: req.URL, Purpose: model.PurposeProbe, Accept: pdfAccept, MaxBytes: req.MaxBytes}
	asPage := &fetchRequest{URL: req.URL, Timeout: req.Timeout, MaxBytes: req.MaxBytes}
	if err := a.d.Client.CheckTarget(ctx, freq); err != nil {
		return nil, fetchFailure(ctx, asPage, err, a.d.Now())
	}
	resp, err := a.d.Client.Do(ctx, freq)
	if err != nil {
		return nil, fetchFailure(ctx, asPage, err, a.d.Now())
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &failure{status: http.StatusBadGateway, code: CodeSiteError,
			msg:     fmt.Sprintf("the site answered HTTP %d for %s", resp.Status, resp.URL),
			details: map[string]any{"statusCode": resp.Status, "url": resp.URL}, wireBytes: resp.WireBytes}
	}
	ct := resp.Header.Get("Content-Type")
	if !bytes.Contains(resp.Body[:min(len(resp.Body), 1024)], []byte("%PDF-")) {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt == "" {
			mt = "a file without a content type"
		}
		return nil, &failure{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedContent,
			msg:     fmt.Sprintf("%s is %s, not a PDF (no %%PDF- header in its first 1024 bytes); POST /v1/fetch reads web pages", resp.URL, mt),
			details: map[string]any{"contentType": ct}, wireBytes: resp.WireBytes}
	}
	g := &pdfFile{data: resp.Body, sourceURL: req.URL, finalURL: resp.URL, status: resp.Status, contentType: ct,
		wireBytes: resp.WireBytes, duration: resp.Duration, fetchedAt: a.d.Now().UTC()}
	snap := &store.FetchSnapshot{URL: req.URL, FinalURL: resp.URL, Status: resp.Status, ContentType: ct,
		WireBytes: resp.WireBytes, Duration: resp.Duration, Tier: resp.Tier, FetchedAt: g.fetchedAt}
	if err := a.d.Store.SaveFetchSnapshot(ctx, snap, resp.Body); err != nil {
		a.d.Logger.Error("acquire pdf: keep raw file", "url", req.URL, "error", err)
		return nil, &failure{status: http.StatusInternalServerError, code: CodeInternal,
			msg: "the file was fetched but could not be stored; try again later", wireBytes: resp.WireBytes}
	}
	g.rawRef = snap.RawPath
	return g, nil
}

// pdfFailure turns internal/pdf's typed errors into answers.
func pdfFailure(ctx context.Context, req *pdfRequest, err error, rep *pdf.Report) *failure {
	var busy *pdf.OCRBusyError
	var pe *pdf.Error
	detail := err.Error()
	if errors.As(err, &pe) {
		detail = pe.Detail
	}
	switch {
	case errors.As(err, &busy):
		return &failure{status: http.StatusServiceUnavailable, code: CodeOCRBusy, retryAfter: busy.RetryAfter,
			msg: "another file is being read by OCR on this server (one at a time); ask again after Retry-After, or with ocr false for the text layer now"}
	case errors.Is(err, pdf.ErrEncrypted):
		f := &failure{status: http.StatusUnprocessableEntity, code: CodePDFEncrypted,
			msg: "the PDF is encrypted with a user password, so nothing in it can be read; zhizhi does not guess passwords"}
		if rep != nil {
			f.details = map[string]any{"version": rep.Version, "bytes": rep.Bytes, "encryption": rep.Encryption}
		}
		return f
	case errors.Is(err, pdf.ErrMalformed):
		return &failure{status: http.StatusUnprocessableEntity, code: CodePDFMalformed,
			msg: "the file is not a PDF that can be read: " + detail}
	case errors.Is(err, pdf.ErrTooBig):
		return &failure{status: http.StatusUnprocessableEntity, code: CodePDFOverLimit,
			msg: "the PDF is over a limit of this server, so it was not read further: " + detail}
	case errors.Is(err, pdf.ErrToolMissing):
		return &failure{status: http.StatusServiceUnavailable, code: CodePDFToolsUnavailable,
			msg: "this server cannot read PDF text now: " + detail}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &failure{status: http.StatusRequestTimeout, code: CodeTimeout,
			msg: fmt.Sprintf("the PDF was not read within %v (timeout %d ms); an OCR parse takes seconds a page", req.Timeout, req.Timeout.Milliseconds())}
	}
	return &failure{status: http.StatusInternalServerError, code: CodeInternal, msg: "reading the PDF failed: " + err.Error()}
}

// parsePDFRequest reads a JSON body ({url, ...}) or a multipart upload
// (the file in the field "file", options as fields beside it).
func (a *API) parsePDFRequest(w http.ResponseWriter, r *http.Request, parse bool) (*pdfRequest, error) {
	known := pdfInspectFields
	if parse {
		known = pdfParseFields
	}
	req := &pdfRequest{Timeout: a.d.DefaultTimeout, MaxBytes: a.pdfMaxBytes(), MaxOCRPages: DefaultMaxOCRPages}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		if err := a.readUpload(w, r, params["boundary"], known, req); err != nil {
			return nil, err
		}
	} else {
		raw, err := readObject(w, r)
		if err != nil {
			return nil, err
		}
		if err := onlyKnown(raw, known); err != nil {
			return nil, err
		}
		if req.URL, err = requestURL(raw, "the PDF to fetch, or upload the file as multipart/form-data in the field \"file\""); err != nil {
			return nil, err
		}
		if err := field(raw, "ocr", &req.OCR); err != nil {
			return nil, err
		}
		opts := map[string]int64{}
		for _, name := range []string{"timeout", "max_bytes", "max_ocr_pages"} {
			if _, ok := raw[name]; ok {
				n, err := millis(raw, name, 1)
				if err != nil {
					return nil, err
				}
				opts[name] = n
			}
		}
		if err := req.apply(opts, a); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// apply sets the numeric options given (timeout in ms, max_bytes,
// max_ocr_pages) and the OCR parse's default time.
func (req *pdfRequest) apply(opts map[string]int64, a *API) error {
	if req.OCR {
		req.Timeout = a.d.MaxTimeout
	}
	if ms, ok := opts["timeout"]; ok {
		req.Timeout = min(time.Duration(ms)*time.Millisecond, a.d.MaxTimeout)
	}
	if n, ok := opts["max_bytes"]; ok {
		req.MaxBytes = min(n, a.pdfMaxBytes())
	}
	if n, ok := opts["max_ocr_pages"]; ok {
		if n > MaxOCRPages {
			return invalid("max_ocr_pages: at most %d", MaxOCRPages)
		}
		req.MaxOCRPages = int(n)
	}
	return nil
}

// readUpload reads a multipart form: the PDF in "file" (at most the PDF
// limit, or 413 FILE_TOO_LARGE), each option a short field beside it.
func (a *API) readUpload(w http.ResponseWriter, r *http.Request, boundary string, known []string, req *pdfRequest) error {
	limit := a.pdfMaxBytes()
	if boundary == "" {
		return invalid("multipart/form-data without a boundary")
	}
	body := http.MaxBytesReader(w, r.Body, limit+multipartSlack)
	mr := multipart.NewReader(body, boundary)
	opts := map[string]int64{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return uploadError(err, limit)
		}
		name := part.FormName()
		if seen[name] {
			return invalid("%s: given twice", name)
		}
		seen[name] = true
		switch {
		case name == "file":
			data, err := io.ReadAll(io.LimitReader(part, limit+1))
			if err != nil {
				return uploadError(err, limit)
			}
			if int64(len(data)) > limit {
				return tooLarge(limit)
			}
			req.Upload, req.Filename = data, part.FileName()
			if req.Upload == nil {
				req.Upload = []byte{}
			}
		case name == "url":
			return invalid("url: give a URL as a JSON body ({\"url\": …}), or upload the file; not both")
		case slices.Contains(known, name):
			v, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return uploadError(err, limit)
			}
			if len(v) > maxFormField {
				return invalid("%s: longer than %d bytes", name, maxFormField)
			}
			s := strings.TrimSpace(string(v))
			if name == "ocr" {
				b, err := strconv.ParseBool(s)
				if err != nil {
					return invalid("ocr: true or false expected")
				}
				req.OCR = b
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				return invalid("%s: a whole number from 1 expected", name)
			}
			opts[name] = n
		default:
			return invalid("%s: unknown field; the form has the file in \"file\" and the fields %s", name, strings.Join(without(known, "url"), ", "))
		}
	}
	if req.Upload == nil {
		return invalid("file: required, the PDF (multipart/form-data; or send {\"url\": …} as JSON)")
	}
	if len(req.Upload) == 0 {
		return invalid("file: the upload is empty")
	}
	return req.apply(opts, a)
}

func uploadError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge(limit)
	}
	return invalid("file: the multipart form could not be read: %v", err)
}

func tooLarge(limit int64) *failure {
	return &failure{status: http.StatusRequestEntityTooLarge, code: CodeFileTooLarge, notSent: true,
		msg: fmt.Sprintf("the upload is larger than this server's limit of %d bytes (%s)", limit, mib(limit))}
}

func mib(n int64) string {
	return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*10)/10, 'f', -1, 64) + " MiB"
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}
