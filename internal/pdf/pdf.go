// Package pdf owns what zhizhi knows about PDF files: Inspect reads a file's
// structure (pages, version, encryption, scripts, embedded files, fonts and
// images per page) with pdfcpu and says which pages carry text and which are
// scans; Parse gets each page's text with poppler's pdftotext and reads the
// scanned pages with tesseract, each tool in a subprocess bounded in time,
// memory and output. Every file is treated as hostile: an input over a limit
// or broken beyond reading gets one typed error, never a panic or an
// unbounded wait.
package pdf

import (
	"errors"
	"fmt"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

func init() {
	// pdfcpu otherwise creates and reads a configuration directory in the
	// user's home: a library must not write there.
	api.DisableConfigDir()
}

// The kinds of failure a caller tells apart (with errors.Is); every error
// Inspect and Parse return for a bad file wraps one of them.
var (
	// ErrEncrypted: the file needs a user password to be opened.
	ErrEncrypted = errors.New("pdf: encrypted with a user password")
	// ErrMalformed: the file is not a PDF, or too broken to be read.
	ErrMalformed = errors.New("pdf: malformed")
	// ErrTooBig: the file is over a limit (bytes, pages, objects, decoded
	// stream bytes, or a tool's time, memory or output).
	ErrTooBig = errors.New("pdf: over a limit")
	// ErrOCRBusy: another OCR is running; try again after OCRBusyError.RetryAfter.
	ErrOCRBusy = errors.New("pdf: OCR busy")
	// ErrToolMissing: pdftotext, pdfimages, pdftoppm or tesseract (with its
	// chi_sim model) is not installed.
	ErrToolMissing = errors.New("pdf: tool missing")
)

// Error is a failure of one kind with what exactly went wrong.
type Error struct {
	Kind   error  // one of the Err* values above
	Detail string // e.g. "3 MiB of content decoded from page 2 is over 1 MiB"
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }
func (e *Error) Unwrap() error { return e.Kind }

func failf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// OCRBusyError is returned by Parse when a second OCR would run beside the
// one in progress (OCR takes a whole core for seconds a page).
type OCRBusyError struct {
	RetryAfter time.Duration
}

func (e *OCRBusyError) Error() string {
	return fmt.Sprintf("pdf: OCR busy with another file; retry after %s", e.RetryAfter)
}
func (e *OCRBusyError) Is(target error) bool { return target == ErrOCRBusy }

// Limits bound the work spent on one file. The zero value of a field means
// its default (DefaultLimits).
type Limits struct {
	MaxBytes        int64 // size of the file
	MaxPages        int   // pages in the page tree
	MaxObjects      int   // objects in the cross-reference table
	MaxDecodedBytes int64 // bytes decoded from any one stream (a compression bomb stops here)
	MaxImagePixels  int64 // declared pixels of an image extracted or rendered for OCR
}

// DefaultLimits are generous for government notices (a few pages, a few
// MB) and far below what would hurt a small server.
var DefaultLimits = Limits{
	MaxBytes:        64 << 20,
	MaxPages:        2000,
	MaxObjects:      500_000,
	MaxDecodedBytes: 64 << 20,
	MaxImagePixels:  60 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxPages > 0 {
		d.MaxPages = l.MaxPages
	}
	if l.MaxObjects > 0 {
		d.MaxObjects = l.MaxObjects
	}
	if l.MaxDecodedBytes > 0 {
		d.MaxDecodedBytes = l.MaxDecodedBytes
	}
	if l.MaxImagePixels > 0 {
		d.MaxImagePixels = l.MaxImagePixels
	}
	return d
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
