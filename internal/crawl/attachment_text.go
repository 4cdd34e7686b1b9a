package crawl

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/pdf"
)

// Stored attachment text stops here: a notice's attachment is a few pages;
// a file with more text is a book, kept whole in its blob.
const maxAttachmentText = 4 << 20

// readAttachmentText fills in a PDF attachment's text, class and page
// count with internal/pdf, OCR on only for sites that ask for it. A file
// that cannot be read keeps its bytes and says why in TextError: the
// article is complete without its text.
func (j *job) readAttachmentText(ctx context.Context, a *model.Attachment, body []byte) {
	if !strings.EqualFold(a.FileExt, "pdf") && !bytes.HasPrefix(body, []byte("%PDF-")) {
		return
	}
	r, err := pdf.Parse(ctx, body, pdf.Options{OCR: j.site.AttachmentOCR, WaitForOCR: true,
		Tools: pdf.ToolLimits{OutputBytes: maxAttachmentText}})
	if err != nil {
		a.TextError = err.Error()
		j.c.log().Info("attachment text", "url", a.URL, "error", err)
		return
	}
	a.Text, a.TextClass, a.PageCount = r.Text(), string(r.Report.Class), r.Report.PageCount
	if len(a.Text) > maxAttachmentText {
		a.Text = strings.ToValidUTF8(a.Text[:maxAttachmentText], "")
		a.TextError = fmt.Sprintf("text cut at %d bytes", maxAttachmentText)
	}
	if len(r.Skipped) > 0 && a.TextError == "" {
		if j.site.AttachmentOCR {
			a.TextError = fmt.Sprintf("pages %v not read by OCR: over the pages read per file", r.Skipped)
		} else {
			a.TextError = fmt.Sprintf("pages %v are scanned; OCR is off for this site (attachments: {ocr: true})", r.Skipped)
		}
	}
}
