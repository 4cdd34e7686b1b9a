package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"zhizhi/internal/config"
)

// maxLineErrors bounds how many bad CSV lines one answer lists.
const maxLineErrors = 50

type importResult struct {
	Read      int `json:"read"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// departmentImport takes the OA department subset as CSV, the same file
// `zhizhi dept import` reads, with the same rules: one bad line and
// nothing is imported. The import and its audit entry commit together.
func (h *handler) departmentImport(w http.ResponseWriter, r *http.Request) {
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/csv" {
		h.fail(w, r, errorf(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send the department file as Content-Type: text/csv"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCSVBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, r, err)
			return
		}
		h.fail(w, r, invalid("request body: %v", err))
		return
	}
	depts, lineErrs := config.ReadDepartmentsCSV(strings.NewReader(string(body)), "upload")
	if len(lineErrs) > 0 {
		lines := make([]string, 0, maxLineErrors+1)
		for i, e := range lineErrs {
			if i == maxLineErrors {
				lines = append(lines, fmt.Sprintf("and %d more", len(lineErrs)-maxLineErrors))
				break
			}
			lines = append(lines, e.Error())
		}
		h.fail(w, r, invalid("%d bad line(s); nothing imported — fix them and send the file again: %s",
			len(lineErrs), strings.Join(lines, "; ")))
		return
	}
	if len(depts) == 0 {
		h.fail(w, r, invalid("the file has no department rows; nothing imported"))
		return
	}
	res, err := h.st.ImportDepartmentsBy(r.Context(), principal(r).Actor(), depts)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, importResult(res))
}
