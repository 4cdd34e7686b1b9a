package api

import (
	"net/http"
	"unicode/utf8"
)

type workTextView struct {
	ID         string `json:"id"`
	Rev        int    `json:"rev"`
	Release    string `json:"release"`
	Title      string `json:"title"`
	URL        string `json:"url"`
	Chars      int    `json:"chars"`
	TextSHA256 string `json:"text_sha256"`
	Text       string `json:"text"`
}

// workTextGet answers a work's canonical text as the active release holds
// it (or, with release=, as an earlier verified release held it): readers
// read a release, never the corpus as it is being changed. A work the
// release does not hold is a 404 that says why.
func (h *handler) workTextGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	id, err := workIDOf(r)
	q := newQuery(r)
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
	rel, err := h.releaseFor(r.Context(), version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	e, err := h.workInRelease(r.Context(), rel, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	text, err := rel.Text(e)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, workTextView{ID: e.ID, Rev: e.Rev, Release: rel.Version, Title: e.Title, URL: e.URL,
		Chars: utf8.RuneCountInString(text), TextSHA256: e.TextSHA256, Text: text})
}
