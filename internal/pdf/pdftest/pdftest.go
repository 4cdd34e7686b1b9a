// Package pdftest holds what tests of PDF reading share.
package pdftest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireTools skips a test whose PDF tools (poppler, prlimit, and
// tesseract for OCR) are missing, except under CI=true, where it fails:
// scripts/test.sh installs them.
func RequireTools(t testing.TB, ocr bool) {
	t.Helper()
	tools := []string{"pdftotext", "pdfimages", "pdftoppm", "prlimit"}
	if ocr {
		tools = append(tools, "tesseract")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI (scripts/ensure-deps.sh poppler ocr)", tool)
			}
			t.Skipf("%s not installed (scripts/ensure-deps.sh poppler ocr)", tool)
		}
	}
}
