package ui

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

type workData struct {
	T      *corpus.Trace
	Held   [][]segment
	Reason string // the quarantine form as typed, when refused
}

// corpusWorkShow is a work's trace: the chain from its source to the
// releases that hold it, each step with its state and evidence; its
// revisions, aliases and provenance; and, for operators, quarantine.
func (c *console) corpusWorkShow(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-works") {
		return
	}
	p := page{}
	switch r.URL.Query().Get("intake") {
	case "new":
		p.Flash = "已收入语料库：新作品。"
	case "revision":
		p.Flash = "已收入语料库：内容有变化，生成了新修订。"
	case "unchanged":
		p.Flash = "语料库已有这篇文章的相同内容，未做改动。"
	}
	if r.URL.Query().Get("status") == "1" {
		p.Flash = "已更改作品状态，已记入作品来历与审计日志。"
	}
	c.renderWork(w, r, http.StatusOK, r.PathValue("id"), p, "")
}

func (c *console) renderWork(w http.ResponseWriter, r *http.Request, status int, id string, p page, reason string) {
	tr, err := c.corpus.Trace(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这件作品。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := workData{T: tr, Reason: reason}
	for _, why := range tr.Held {
		d.Held = append(d.Held, idSegments(why))
	}
	p.Title, p.Active, p.Data = "作品 · "+tr.Work.Rev.Title, "corpus-works", d
	c.render(w, r, status, "corpus_work", p)
}

// corpusWorkStatus quarantines a work (it stays out of every release
// until let back) or lets a quarantined work back, with the reason the
// person gives; both are kept in the work's provenance and the audit
// trail. Frozen and merged works are not changed here: a takedown and a
// person's merge decision are undone where they were made.
func (c *console) corpusWorkStatus(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-works") {
		return
	}
	ctx := r.Context()
	id := r.PathValue("id")
	work, err := c.store.CorpusWork(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这件作品。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.renderWork(w, r, http.StatusBadRequest, id, page{Error: "请求无效，请重新填写。"}, "")
		return
	}
	to := r.PostFormValue("status")
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	switch {
	case to != store.WorkQuarantined && to != store.WorkActive:
		c.renderWork(w, r, http.StatusBadRequest, id, page{Error: "请求无效，请从页面上的按钮提交。"}, reason)
		return
	case to == store.WorkQuarantined && work.Status != store.WorkActive,
		to == store.WorkActive && work.Status != store.WorkQuarantined:
		c.renderWork(w, r, http.StatusConflict, id, page{Error: "作品当前状态为「" + workStatusLabel(work.Status).Label +
			"」，不能改为「" + workStatusLabel(to).Label + "」。已冻结的作品随撤下请求处理，已合并的作品由重复候选判定决定。"}, reason)
		return
	case reason == "":
		c.renderWork(w, r, http.StatusBadRequest, id, page{Error: "请填写原因：将记入作品来历与审计日志。"}, reason)
		return
	case utf8.RuneCountInString(reason) > maxReasonRunes:
		c.renderWork(w, r, http.StatusBadRequest, id, page{Error: "原因过长，请控制在 500 字以内。"}, reason)
		return
	}
	p, _ := auth.FromContext(ctx)
	if err := c.store.SetCorpusWorkStatus(ctx, id, to, "", reason, p.Actor()); err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("corpus work status changed from the console", "work", id, "status", to, "actor", p.Actor())
	http.Redirect(w, r, workURL(id)+"?status=1", http.StatusSeeOther)
}
