package api

import (
	"errors"
	"net/http"
	"time"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

type eventView struct {
	ID       int64     `json:"id"`
	Rev      int       `json:"rev"`
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor"`
	Detail   string    `json:"detail"`
	Evidence string    `json:"evidence"`
	At       time.Time `json:"at"`
}

type traceView struct {
	Work      workView           `json:"work"`
	HeldBack  []string           `json:"held_back"`
	Steps     []corpus.TraceStep `json:"steps"`
	Events    []eventView        `json:"events"`
	Revisions []revisionView     `json:"revisions"`
	Aliases   []string           `json:"aliases"`
}

// workTraceGet answers a work's chain from its source to the releases that
// hold it — source, crawl, adapter, snapshot, rights, QA, review, release —
// each step with its state and evidence (crawl_log row, sealed ledger day,
// WARC records, blobs, releases), with its provenance timeline.
func (h *handler) workTraceGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	id, err := workIDOf(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	tr, err := h.corpus.Trace(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		err = notFoundf("no work %s", id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	wv := workOf(&tr.Work)
	v := traceView{Work: wv, HeldBack: wv.HeldBack, Steps: tr.Steps, Events: []eventView{},
		Revisions: []revisionView{}, Aliases: tr.Aliases}
	for i := range v.Steps {
		if v.Steps[i].Evidence == nil {
			v.Steps[i].Evidence = []corpus.Evidence{}
		}
	}
	for _, e := range tr.Events {
		v.Events = append(v.Events, eventView{ID: e.ID, Rev: e.Rev, Kind: e.Kind, Actor: e.Actor, Detail: e.Detail,
			Evidence: e.Evidence, At: e.At})
	}
	for i := range tr.Revisions {
		v.Revisions = append(v.Revisions, revisionOf(&tr.Revisions[i]))
	}
	if v.Aliases == nil {
		v.Aliases = []string{}
	}
	h.ok(w, r, v)
}
