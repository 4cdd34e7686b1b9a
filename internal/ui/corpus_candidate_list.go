package ui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// diffContext is how many characters of common text a candidate's
// excerpt shows around where the two texts part; diffSpan bounds the
// differing part shown.
const (
	diffContext = 30
	diffSpan    = 120
)

type candidateRow struct {
	store.CorpusCandidate
	Detail [][]segment
	// A and B are excerpts of both works' current texts around where they
	// first differ, the differing part marked; Same: the texts are equal.
	A, B []segment
	Same bool
}

type candidatesData struct {
	Status string // "" (open) or "all"
	Rows   []candidateRow
}

// corpusCandidateList is the review queue of possible duplicates: both
// works side by side with where their texts differ, and the two buttons a
// person decides with. The system never merges on its own.
func (c *console) corpusCandidateList(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-candidates") {
		return
	}
	p := page{}
	if id := r.URL.Query().Get("decided"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			if k, err := c.store.CorpusCandidate(r.Context(), n); err == nil && k.Status != store.CandidateOpen {
				p.Flash = "已记录判定：重复候选 #" + id + " 为「" + candidateStatusLabel(k.Status) + "」。"
			}
		}
	}
	c.renderCandidates(w, r, http.StatusOK, p)
}

func (c *console) renderCandidates(w http.ResponseWriter, r *http.Request, status int, p page) {
	ctx := r.Context()
	d := candidatesData{}
	want := store.CandidateOpen
	if r.URL.Query().Get("status") == "all" {
		d.Status, want = "all", ""
	}
	list, err := c.store.ListCorpusCandidates(ctx, want, 200)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	for _, k := range list {
		row := candidateRow{CorpusCandidate: k}
		for _, s := range []string{k.Detail} {
			row.Detail = append(row.Detail, idSegments(s))
		}
		if k.Status == store.CandidateOpen {
			a, errA := c.currentText(ctx, k.WorkA)
			b, errB := c.currentText(ctx, k.WorkB)
			if err := errors.Join(errA, errB); err != nil {
				c.serverError(w, r, err)
				return
			}
			row.A, row.B, row.Same = diffExcerpts(a, b)
		}
		d.Rows = append(d.Rows, row)
	}
	p.Title, p.Active, p.Data = "重复候选", "corpus-candidates", d
	c.render(w, r, status, "corpus_candidates", p)
}

// currentText reads a work's current revision's normalized text from its
// snapshot.
func (c *console) currentText(ctx context.Context, id string) (string, error) {
	w, err := c.store.CorpusWorkRow(ctx, id)
	if err != nil {
		return "", err
	}
	n, err := c.store.CorpusSnapshot(ctx, w.Rev.SnapshotID)
	if err != nil {
		return "", err
	}
	f, err := c.store.Blobs().Open(ctx, n.TextPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4<<20))
	return string(b), err
}

// diffExcerpts cuts a and b around where they differ: the common start
// and end are trimmed to diffContext characters, the differing middle of
// each is marked (and bounded). Equal texts give their first characters.
func diffExcerpts(a, b string) (ea, eb []segment, same bool) {
	ra, rb := []rune(a), []rune(b)
	if a == b {
		return []segment{{Text: clipRunes(ra, 0, diffSpan)}}, []segment{{Text: clipRunes(rb, 0, diffSpan)}}, true
	}
	pre := 0
	for pre < len(ra) && pre < len(rb) && ra[pre] == rb[pre] {
		pre++
	}
	suf := 0
	for suf < len(ra)-pre && suf < len(rb)-pre && ra[len(ra)-1-suf] == rb[len(rb)-1-suf] {
		suf++
	}
	cut := func(r []rune) []segment {
		var out []segment
		start := max(0, pre-diffContext)
		lead := string(r[start:pre])
		if start > 0 {
			lead = "…" + lead
		}
		if lead != "" {
			out = append(out, segment{Text: lead})
		}
		mid := r[pre : len(r)-suf]
		if len(mid) > 0 {
			out = append(out, segment{Text: clipRunes(mid, 0, diffSpan), Mark: true})
		} else {
			out = append(out, segment{Text: "（此处无对应文字）", Code: false, Mark: true})
		}
		end := len(r) - suf
		tail := r[end:min(len(r), end+diffContext)]
		if t := string(tail); t != "" {
			if end+diffContext < len(r) {
				t += "…"
			}
			out = append(out, segment{Text: t})
		}
		return out
	}
	return cut(ra), cut(rb), false
}

func clipRunes(r []rune, from, n int) string {
	if len(r)-from <= n {
		return string(r[from:])
	}
	return string(r[from:from+n]) + "…"
}

// corpusCandidateDecide records a person's decision on a candidate: the
// same work (the second is marked merged into the first; nothing is
// deleted) or different works.
func (c *console) corpusCandidateDecide(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-candidates") {
		return
	}
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这条重复候选。")
		return
	}
	k, err := c.store.CorpusCandidate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这条重复候选。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.renderCandidates(w, r, http.StatusBadRequest, page{Error: "请求无效，请重新提交。"})
		return
	}
	decision := r.PostFormValue("decision")
	if decision != store.CandidateSame && decision != store.CandidateDifferent {
		c.renderCandidates(w, r, http.StatusBadRequest, page{Error: "请求无效，请点击「同一作品」或「不同作品」。"})
		return
	}
	if k.Status != store.CandidateOpen {
		c.renderCandidates(w, r, http.StatusConflict, page{Error: "重复候选 #" + strconv.FormatInt(id, 10) +
			" 已由 " + corpusActor(k.DecidedBy) + " 判定为「" + candidateStatusLabel(k.Status) + "」，无需重复判定。"})
		return
	}
	p, _ := auth.FromContext(ctx)
	if err := c.store.DecideCorpusCandidate(ctx, id, decision, p.Actor()); err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("corpus candidate decided from the console", "candidate", id, "decision", decision, "actor", p.Actor())
	http.Redirect(w, r, Prefix+"/corpus/candidates?decided="+strconv.FormatInt(id, 10), http.StatusSeeOther)
}
