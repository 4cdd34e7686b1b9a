package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

type releasesData struct {
	Rows   []store.CorpusRelease
	Active *store.CorpusActive
	// Eligible counts the works a build would take in now, and Held those
	// it would leave out.
	Eligible, Held int
}

// releaseList lists every release, newest first, the active one marked,
// with the buttons each role may use: operators build and verify; admins
// activate a verified release and roll back.
func (c *console) releaseList(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	p := page{}
	ctx := r.Context()
	act, err := c.store.ActiveCorpusRelease(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	// Each notice says only what the stored pointer shows.
	switch q := r.URL.Query(); {
	case q.Get("activated") != "" && act != nil && act.Version == q.Get("activated"):
		p.Flash = "已启用发布 " + act.Version + "：检索、引用与读取从现在起都来自这个版本。"
		if act.Previous != "" {
			p.Flash += "此前生效的是 " + act.Previous + "，可一步回滚。"
		}
	case q.Get("rolledback") != "" && act != nil && act.Version == q.Get("rolledback"):
		p.Flash = "已回滚：当前生效的发布是 " + act.Version + "（回滚前为 " + act.Previous + "）。"
	}
	c.renderReleases(w, r, http.StatusOK, p)
}

func (c *console) renderReleases(w http.ResponseWriter, r *http.Request, status int, p page) {
	ctx := r.Context()
	d := releasesData{}
	var err error
	if d.Rows, err = c.store.CorpusReleases(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	if d.Active, err = c.store.ActiveCorpusRelease(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	err = c.store.EachCorpusWork(ctx, func(w *store.CorpusWorkRow) error {
		if len(corpus.HeldReasons(w)) > 0 {
			d.Held++
		} else {
			d.Eligible++
		}
		return nil
	})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p.Title, p.Active, p.Data = "发布", "corpus-releases", d
	c.render(w, r, status, "corpus_releases", p)
}

type releaseData struct {
	R      *store.CorpusRelease
	Active *store.CorpusActive
	// Problems: what a verification found wrong (just now, or kept from
	// the failed one).
	Problems []verifyRow
	Held     []heldRow
	HeldErr  bool // the release's list of held works could not be read
	Built    bool // the page answers the build that made it
}

type heldRow struct {
	ID      string
	Title   string
	Reasons [][]segment
}

// releaseShow is one release: its state, works, who built and verified
// it, what a failed verification found, and the works it left out, each
// with why.
func (c *console) releaseShow(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	p := page{}
	c.renderRelease(w, r, http.StatusOK, r.PathValue("id"), p, nil, r.URL.Query().Get("built") == "1")
}

func (c *console) renderRelease(w http.ResponseWriter, r *http.Request, status int, version string, p page, problems []verifyRow, built bool) {
	ctx := r.Context()
	rel, err := c.store.CorpusRelease(ctx, version)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个发布版本。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := releaseData{R: rel, Problems: problems, Built: built}
	if d.Active, err = c.store.ActiveCorpusRelease(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	if d.Problems == nil && rel.State == store.ReleaseFailed {
		d.Problems = storedVerifyRows(rel.VerifyError)
	}
	if built && p.Flash == "" && p.Error == "" {
		p.Flash = fmt.Sprintf("已生成发布 %s：收入 %d 件作品，%d 件暂缓（原因见下方）。下一步：校验，通过后由管理员启用。",
			rel.Version, rel.Works, rel.Held)
	}
	held, err := c.releaseHeld(ctx, rel.Version)
	if err != nil {
		c.log.Warn("release held list", "release", rel.Version, "err", err)
		d.HeldErr = true
	}
	for _, h := range held {
		row := heldRow{ID: h.ID, Title: h.Title}
		for _, why := range h.Reasons {
			row.Reasons = append(row.Reasons, idSegments(why))
		}
		d.Held = append(d.Held, row)
	}
	p.Title, p.Active, p.Data = "发布 · "+rel.Version, "corpus-releases", d
	c.render(w, r, status, "corpus_release", p)
}

// releaseHeld reads the works a release left out, from its own held.jsonl
// (a release is immutable: this is why they were held when it was built).
func (c *console) releaseHeld(ctx context.Context, version string) ([]corpus.HeldEntry, error) {
	rel, err := c.corpus.Open(ctx, version)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(rel.Dir, "held.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []corpus.HeldEntry
	dec := json.NewDecoder(f)
	for dec.More() {
		var h corpus.HeldEntry
		if err := dec.Decode(&h); err != nil {
			return out, err
		}
		out = append(out, h)
	}
	return out, nil
}

// releaseBuild builds a new release from every work that may be published
// now. It is harmless — nothing reads a release until an admin activates
// it — so operators may; it runs in the request (a large corpus: zhizhi
// release build).
func (c *console) releaseBuild(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	p, _ := auth.FromContext(r.Context())
	res, err := c.corpus.Build(r.Context(), p.Actor(), nil)
	if errors.Is(err, store.ErrCorpusRace) {
		c.renderReleases(w, r, http.StatusConflict, page{Error: "另一个发布正在同时生成，请稍候刷新页面后再试。"})
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("release built from the console", "release", res.Version, "works", res.Works, "held", res.Held, "actor", p.Actor())
	http.Redirect(w, r, releaseURL(res.Version)+"?built=1", http.StatusSeeOther)
}

// releaseVerify checks every hash of a release (and its works'
// snapshots) and shows the outcome: verified, or every problem found. A
// release that fails stays failed and can never be activated.
func (c *console) releaseVerify(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	ctx := r.Context()
	version := r.PathValue("id")
	if _, err := c.store.CorpusRelease(ctx, version); errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个发布版本。")
		return
	} else if err != nil {
		c.serverError(w, r, err)
		return
	}
	p, _ := auth.FromContext(ctx)
	err := c.corpus.Verify(ctx, version, p.Actor(), corpus.VerifyOptions{}, nil)
	var verr *corpus.VerifyError
	switch {
	case errors.As(err, &verr):
		rows := verifyRows(verr.Problems)
		c.renderRelease(w, r, http.StatusOK, version, page{Error: fmt.Sprintf(
			"发布 %s 校验未通过：发现 %d 处问题（见下方）。此版本已标记为校验失败，不能启用；请重新生成发布。", version, len(rows))}, rows, false)
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.renderRelease(w, r, http.StatusOK, version, page{Flash: "发布 " + version +
		" 校验通过：清单、每个文件、每件作品的正文与快照的哈希均与记录一致。管理员现在可以启用它。"}, nil, false)
}

// releaseActivate makes a verified release the active one (its files are
// checked again first). Admins only; the store records it in the audit
// trail with the pointer before and after.
func (c *console) releaseActivate(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	ctx := r.Context()
	version := r.PathValue("id")
	rel, err := c.store.CorpusRelease(ctx, version)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这个发布版本。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	act, err := c.store.ActiveCorpusRelease(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	switch {
	case rel.State != store.ReleaseVerified:
		c.renderReleases(w, r, http.StatusConflict, page{Error: "发布 " + version + " 的状态是「" +
			releaseStateLabel(rel.State).Label + "」，只有校验通过的发布才能启用。"})
		return
	case act != nil && act.Version == version:
		c.renderReleases(w, r, http.StatusConflict, page{Error: "发布 " + version + " 已是当前生效的版本。"})
		return
	}
	p, _ := auth.FromContext(ctx)
	_, err = c.corpus.Activate(ctx, version, p.Actor())
	if c.releaseMoveFailed(w, r, version, err) {
		return
	}
	c.log.Info("release activated from the console", "release", version, "actor", p.Actor())
	http.Redirect(w, r, Prefix+"/corpus/releases?activated="+version, http.StatusSeeOther)
}

// releaseMoveFailed answers an activation or rollback that did not
// happen, and reports whether it did so.
func (c *console) releaseMoveFailed(w http.ResponseWriter, r *http.Request, version string, err error) bool {
	var verr *corpus.VerifyError
	switch {
	case err == nil:
		return false
	case errors.As(err, &verr):
		c.renderRelease(w, r, http.StatusConflict, version, page{Error: fmt.Sprintf(
			"发布 %s 的文件在校验后被改动过（%d 处问题，见下方），已标记为校验失败，未启用。当前生效的发布不变。",
			version, len(verr.Problems))}, verifyRows(verr.Problems), false)
	default:
		c.serverError(w, r, err)
	}
	return true
}

// releaseRollback returns to the release that was active before the
// current one, in one step. Admins only; audited by the store.
func (c *console) releaseRollback(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus-releases") {
		return
	}
	ctx := r.Context()
	act, err := c.store.ActiveCorpusRelease(ctx)
	if errors.Is(err, store.ErrNotFound) {
		c.renderReleases(w, r, http.StatusConflict, page{Error: "还没有启用过任何发布，无法回滚。"})
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if act.Previous == "" {
		c.renderReleases(w, r, http.StatusConflict, page{Error: "当前发布 " + act.Version + " 之前没有启用过其他发布，无法回滚。"})
		return
	}
	prev, err := c.store.CorpusRelease(ctx, act.Previous)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if prev.State != store.ReleaseVerified {
		c.renderReleases(w, r, http.StatusConflict, page{Error: "上一个发布 " + prev.Version + " 的状态是「" +
			releaseStateLabel(prev.State).Label + "」，不能回滚到它。"})
		return
	}
	p, _ := auth.FromContext(ctx)
	_, to, err := c.corpus.Rollback(ctx, "", p.Actor())
	if c.releaseMoveFailed(w, r, act.Previous, err) {
		return
	}
	c.log.Info("release rolled back from the console", "from", act.Version, "to", to, "actor", p.Actor())
	http.Redirect(w, r, Prefix+"/corpus/releases?rolledback="+to, http.StatusSeeOther)
}

func releaseURL(version string) string { return Prefix + "/corpus/releases/" + version }
