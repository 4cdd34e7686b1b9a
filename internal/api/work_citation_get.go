package api

import (
	"net/http"
)

// Citation formats and the media type each is answered in.
var citationTypes = map[string]string{
	"csl-json": "application/vnd.citationstyles.csl+json",
	"gbt7714":  "text/plain; charset=utf-8",
	"bibtex":   "application/x-bibtex; charset=utf-8",
}

// workCitationGet answers a work's citation as the active release (or,
// with release=, an earlier verified one) records it: CSL-JSON (an array
// of one item),
// a GB/T 7714-2015 reference, or BibTeX. Each names the release, so it
// keeps pointing at the text that was cited after the source changes.
func (h *handler) workCitationGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	id, err := workIDOf(r)
	q := newQuery(r)
	format := q.oneOf("format", "csl-json", "gbt7714", "bibtex")
	version := q.text("release")
	if err == nil {
		err = q.check()
	}
	if err == nil && version != "" {
		err = versionOf("query parameter \"release\"", version)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if format == "" {
		format = "csl-json"
	}
	rel, err := h.releaseFor(r.Context(), version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, err := h.workInRelease(r.Context(), rel, id); err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := rel.Citation(id, format)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", citationTypes[format])
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Zhizhi-Release", rel.Version)
	w.WriteHeader(http.StatusOK)
	body := []byte(c)
	if format == "csl-json" {
		// One item, as the array csl-data.json describes and Zotero,
		// pandoc and citeproc-js import.
		body = []byte("[" + c + "]")
	}
	if len(body) == 0 || body[len(body)-1] != '\n' {
		body = append(body, '\n')
	}
	_, _ = w.Write(body)
}
