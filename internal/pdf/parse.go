package pdf

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/png" // pdfimages and pdftoppm write PNG
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Options say how Parse reads a file. The zero value reads text only,
// within the default limits.
type Options struct {
	Limits Limits
	Tools  ToolLimits
	// OCR reads scanned and mixed pages with tesseract. Off, those pages
	// come back with what pdftotext finds (usually nothing).
	OCR bool
	// OCRLanguage is tesseract's model; default chi_sim (Simplified
	// Chinese, which also reads digits and Latin letters).
	OCRLanguage string
	// MaxOCRPages is how many pages of one file are read by OCR at most
	// (default 50); the rest are listed in Result.Skipped.
	MaxOCRPages int
	// WaitForOCR waits (as long as ctx allows) for the OCR in progress to
	// end instead of answering ErrOCRBusy: for background work such as the
	// crawler's, which has no caller to send back.
	WaitForOCR bool
	// TempDir holds the file and the page images while Parse runs
	// (default os.TempDir()); everything is removed before Parse returns.
	TempDir string
	// Report is what Inspect said of the same data, for a caller that
	// inspected it first (to meter its OCR pages); nil: Parse inspects.
	Report *Report
}

// Result is a file's text, page by page.
type Result struct {
	Report  *Report    `json:"report"`
	Pages   []PageText `json:"pages"`
	Skipped []int      `json:"ocr_skipped"` // pages that needed OCR and did not get it (OCR off, or over MaxOCRPages)
	Runs    []ToolRun  `json:"runs"`        // every tool run, with its time and peak memory
}

// PageText is one page's text.
type PageText struct {
	Number int    `json:"number"`
	Class  Class  `json:"class"`
	Text   string `json:"text"`                // from the page's text layer (pdftotext)
	OCR    string `json:"ocr,omitempty"`       // read from its picture (tesseract)
	Source string `json:"ocr_image,omitempty"` // "native" (the embedded image) or "render:<dpi>"
	Error  string `json:"error,omitempty"`     // why the picture was not read
}

// All is the page's whole text: the text layer, then what OCR read from
// the picture.
func (p PageText) All() string {
	switch {
	case p.OCR == "":
		return p.Text
	case strings.TrimSpace(p.Text) == "":
		return p.OCR
	}
	return strings.TrimRight(p.Text, "\n") + "\n" + p.OCR
}

// Text is the file's whole text, pages separated by a blank line.
func (r *Result) Text() string {
	parts := make([]string, 0, len(r.Pages))
	for _, p := range r.Pages {
		if t := strings.TrimSpace(p.All()); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// PeakRSS is the largest peak memory of any tool run.
func (r *Result) PeakRSS() int64 {
	var m int64
	for _, run := range r.Runs {
		m = max(m, run.PeakRSS)
	}
	return m
}

// One OCR at a time in this process: tesseract takes a whole core for
// seconds a page, and a server on two cores must keep answering. A second
// caller is told when to come back instead of queueing unseen.
var ocr struct {
	slot  chan struct{}
	mu    sync.Mutex
	until time.Time // when the running OCR is expected to end
}

func init() { ocr.slot = make(chan struct{}, 1) }

// Seconds one page of OCR is expected to take on a busy small server; the
// Retry-After a second caller gets is this times the pages left.
const ocrSecondsPerPage = 8

func acquireOCR(pages int) (release func(), err error) {
	return acquireOCRWait(context.Background(), pages, false)
}

func acquireOCRWait(ctx context.Context, pages int, wait bool) (release func(), err error) {
	select {
	case ocr.slot <- struct{}{}:
	default:
		if !wait {
			ocr.mu.Lock()
			left := time.Until(ocr.until).Round(time.Second)
			ocr.mu.Unlock()
			return nil, &OCRBusyError{RetryAfter: max(left, time.Second)}
		}
		select {
		case ocr.slot <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ocr.mu.Lock()
	ocr.until = time.Now().Add(time.Duration(pages*ocrSecondsPerPage) * time.Second)
	ocr.mu.Unlock()
	return func() { <-ocr.slot }, nil
}

// Parse reads data's text: every page through pdftotext, and with
// opts.OCR the scanned and mixed pages through tesseract. A file that
// needs a user password is ErrEncrypted; one too broken to read
// ErrMalformed; one over a limit ErrTooBig; with OCR asked for while
// another runs, an *OCRBusyError (errors.Is ErrOCRBusy).
func Parse(ctx context.Context, data []byte, opts Options) (*Result, error) {
	lim := opts.Limits.withDefaults()
	tools := opts.Tools.withDefaults()
	rep := opts.Report
	var err error
	if rep == nil {
		if rep, err = Inspect(ctx, data, lim); err != nil {
			return nil, err
		}
	}
	res := &Result{Report: rep, Skipped: []int{}, Runs: []ToolRun{}}

	var ocrPages []int
	if opts.OCR {
		maxOCR := opts.MaxOCRPages
		if maxOCR <= 0 {
			maxOCR = 50
		}
		for _, n := range rep.OCRPages {
			if len(ocrPages) < maxOCR {
				ocrPages = append(ocrPages, n)
			} else {
				res.Skipped = append(res.Skipped, n)
			}
		}
	} else {
		res.Skipped = append(res.Skipped, rep.OCRPages...)
	}
	// Refuse before any work, so a busy answer costs nothing.
	release := func() {}
	if len(ocrPages) > 0 {
		if release, err = acquireOCRWait(ctx, len(ocrPages), opts.WaitForOCR); err != nil {
			return nil, err
		}
	}
	defer release()

	dir, err := os.MkdirTemp(opts.TempDir, "zhizhi-pdf-")
	if err != nil {
		return nil, fmt.Errorf("pdf parse: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return nil, fmt.Errorf("pdf parse: %w", err)
	}

	out, run, err := runTool(ctx, tools, 0, nil, "pdftotext", "-enc", "UTF-8", "-eol", "unix", file, "-")
	res.Runs = append(res.Runs, run)
	if err != nil {
		if isKind(err) || ctx.Err() != nil {
			return nil, err
		}
		return nil, failf(ErrMalformed, "%v", err)
	}
	texts := strings.Split(string(out), "\f")
	for i, p := range rep.Pages {
		t := ""
		if i < len(texts) {
			t = strings.TrimRight(texts[i], " \n")
		}
		res.Pages = append(res.Pages, PageText{Number: p.Number, Class: p.Class, Text: t})
	}

	lang := opts.OCRLanguage
	if lang == "" {
		lang = "chi_sim"
	}
	for _, n := range ocrPages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pt := &res.Pages[n-1]
		if pt.Class == ClassMixed && textRunes(pt.Text) >= textLayerCarriesPage {
			// A scanner's searchable PDF: its text layer is the OCR of
			// the picture, and reading the picture again would say
			// everything twice.
			continue
		}
		text, source, runs, err := ocrPage(ctx, file, dir, rep.Pages[n-1], lim, tools, lang)
		res.Runs = append(res.Runs, runs...)
		switch {
		case err == nil:
			pt.OCR, pt.Source = text, source
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case isToolMissing(err):
			return nil, err
		default:
			// One unreadable picture does not lose the other pages.
			pt.Error = err.Error()
		}
	}
	return res, nil
}

func isKind(err error) bool {
	for _, k := range []error{ErrEncrypted, ErrMalformed, ErrTooBig, ErrOCRBusy, ErrToolMissing} {
		if errorsIs(err, k) {
			return true
		}
	}
	return false
}

func isToolMissing(err error) bool { return errorsIs(err, ErrToolMissing) }

// A mixed page whose text layer has this many characters is taken as
// read: the picture under it is its scan (or an illustration beside a
// full page of text), not text the layer lacks.
const textLayerCarriesPage = 200

func textRunes(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// Characters between 30 and 50 pixels tall read best with chi_sim's
// model; a page is rendered for 40. Body text of a government document is
// 12 to 16 pt, so the estimate takes 14 pt.
const (
	ocrMinCharPx, ocrTargetCharPx, ocrMaxCharPx = 30, 40, 50
	bodyTextPt                                  = 14.0
)

// ocrPage reads the picture of page p: the embedded image itself when its
// resolution puts characters near the target height (the image as
// scanned reads better than any re-rendering of it), otherwise the page
// rendered at the resolution that does.
func ocrPage(ctx context.Context, file, dir string, p Page, lim Limits, tools ToolLimits, lang string) (string, string, []ToolRun, error) {
	var runs []ToolRun
	var big *Image
	for i := range p.Images {
		if im := &p.Images[i]; big == nil || im.Pixels() > big.Pixels() {
			big = im
		}
	}
	if big != nil && big.Pixels() > lim.MaxImagePixels {
		return "", "", runs, failf(ErrTooBig, "page %d: its image declares %d×%d pixels, over the limit of %d", p.Number, big.Width, big.Height, lim.MaxImagePixels)
	}
	pageDPI := 0.0 // the native image's resolution, taking it to span the page's width
	if big != nil && p.Width > 0 {
		pageDPI = float64(big.Width) / (p.Width / 72)
	}
	charPx := pageDPI * bodyTextPt / 72
	var img, source string
	if big != nil && charPx >= ocrMinCharPx && charPx <= ocrMaxCharPx*1.5 {
		prefix := filepath.Join(dir, fmt.Sprintf("img-%d", p.Number))
		pg := strconv.Itoa(p.Number)
		_, run, err := runTool(ctx, tools, p.Number, nil, "pdfimages", "-png", "-f", pg, "-l", pg, file, prefix)
		runs = append(runs, run)
		if err != nil {
			return "", "", runs, err
		}
		img = largestImage(dir, fmt.Sprintf("img-%d-", p.Number), lim)
		source = "native"
	}
	if img == "" {
		dpi := math.Round(ocrTargetCharPx * 72 / bodyTextPt)
		if px := dpi * dpi * p.Width * p.Height / 72 / 72; px > float64(lim.MaxImagePixels) {
			return "", "", runs, failf(ErrTooBig, "page %d: %.0f×%.0f pt at %.0f dpi is over %d pixels", p.Number, p.Width, p.Height, dpi, lim.MaxImagePixels)
		}
		prefix := filepath.Join(dir, fmt.Sprintf("page-%d", p.Number))
		pg := strconv.Itoa(p.Number)
		_, run, err := runTool(ctx, tools, p.Number, nil, "pdftoppm", "-gray", "-png", "-r", fmt.Sprint(dpi), "-f", pg, "-l", pg, "-singlefile", file, prefix)
		runs = append(runs, run)
		if err != nil {
			return "", "", runs, err
		}
		img, source = prefix+".png", fmt.Sprintf("render:%.0f", dpi)
	}
	// OMP_THREAD_LIMIT=1: tesseract's OpenMP threads make one page slower,
	// not faster, on a machine whose other cores are busy.
	out, run, err := runTool(ctx, tools, p.Number, []string{"OMP_THREAD_LIMIT=1"}, "tesseract", img, "stdout", "-l", lang, "--psm", "3")
	runs = append(runs, run)
	if err != nil {
		if strings.Contains(err.Error(), "Failed loading language") {
			return "", "", runs, failf(ErrToolMissing, "tesseract has no %s model (scripts/ensure-deps.sh ocr installs it)", lang)
		}
		return "", "", runs, err
	}
	return cleanOCR(string(out)), source, runs, nil
}

// largestImage is the file with the most pixels among the PNGs pdfimages
// wrote with prefix (a page can hold a seal or a logo beside its scan).
func largestImage(dir, prefix string, lim Limits) string {
	names, _ := filepath.Glob(filepath.Join(dir, prefix+"*.png"))
	sort.Strings(names)
	best, bestPx := "", int64(0)
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			continue
		}
		cfg, _, err := image.DecodeConfig(f)
		f.Close()
		if err != nil {
			continue
		}
		px := int64(cfg.Width) * int64(cfg.Height)
		if px > bestPx && px <= lim.MaxImagePixels && min(cfg.Width, cfg.Height) >= scanMinSide {
			best, bestPx = n, px
		}
	}
	return best
}

// cleanOCR drops the spaces tesseract puts between Chinese characters and
// the blank lines between its blocks.
func cleanOCR(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "\f", ""))
		if line == "" {
			continue
		}
		lines = append(lines, joinCJK(line))
	}
	return strings.Join(lines, "\n")
}

func joinCJK(s string) string {
	var b bytes.Buffer
	rs := []rune(s)
	for i, r := range rs {
		if r == ' ' && i > 0 && i+1 < len(rs) && (wide(rs[i-1]) || wide(rs[i+1])) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wide: a Han character or full-width punctuation, between which Chinese
// text has no spaces.
func wide(r rune) bool {
	return unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef) || utf8.RuneLen(r) == 3 && unicode.IsPunct(r)
}
