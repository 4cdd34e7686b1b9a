package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// corpusIntake takes one article (by id) or every ready article of one
// target into the corpus, as the person signed in, and shows what it did.
// Taking the same content in twice changes nothing, so sending the form
// again is harmless.
func (c *console) corpusIntake(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus") {
		return
	}
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.corpusRefused(w, r, intakeForm{}, ruleForm{}, "请求无效，请重新填写。")
		return
	}
	f := intakeForm{Article: strings.TrimSpace(r.PostFormValue("article")), Target: strings.TrimSpace(r.PostFormValue("target"))}
	p, _ := auth.FromContext(ctx)
	res := &intakeResult{}
	switch r.PostFormValue("mode") {
	case "article":
		id, err := strconv.ParseInt(f.Article, 10, 64)
		if err != nil || id <= 0 {
			f.Errors = map[string]string{"article": "请填写文章编号（文章页地址中的数字）。"}
			c.corpusRefused(w, r, f, ruleForm{}, "有填写不正确的项（见标红处），未收入。")
			return
		}
		ires, err := c.corpus.IntakeArticle(ctx, id, p.Actor())
		if errors.Is(err, store.ErrNotFound) {
			f.Errors = map[string]string{"article": fmt.Sprintf("没有编号为 %d 的文章。", id)}
			c.corpusRefused(w, r, f, ruleForm{}, "有填写不正确的项（见标红处），未收入。")
			return
		}
		if err != nil && !errors.Is(err, corpus.ErrNotReady) {
			c.serverError(w, r, err)
			return
		}
		res.What = fmt.Sprintf("文章 #%d", id)
		res.Sum.Add(id, ires, err)
		if err == nil {
			c.auditIntake(r, "article", strconv.FormatInt(id, 10), res.Sum)
		}
	case "target":
		if f.Target == "" {
			f.Errors = map[string]string{"target": "请填写采集目标代码。"}
			c.corpusRefused(w, r, f, ruleForm{}, "有填写不正确的项（见标红处），未收入。")
			return
		}
		if _, err := c.store.TargetByCode(ctx, f.Target); errors.Is(err, store.ErrNotFound) {
			f.Errors = map[string]string{"target": "没有采集目标「" + f.Target + "」，请检查目标代码。"}
			c.corpusRefused(w, r, f, ruleForm{}, "有填写不正确的项（见标红处），未收入。")
			return
		} else if err != nil {
			c.serverError(w, r, err)
			return
		}
		sum, err := c.corpus.IntakeTargets(ctx, []string{f.Target}, p.Actor(), nil)
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		res.What, res.Sum = "采集目标 "+f.Target+" 的已就绪文章", sum
		c.auditIntake(r, "target", f.Target, sum)
	default:
		c.corpusRefused(w, r, f, ruleForm{}, "请求无效，请从页面上的表单提交。")
		return
	}
	c.showIntake(w, r, f, res)
}

// corpusRulesRun runs every enabled intake rule now, as serve does after
// each crawl.
func (c *console) corpusRulesRun(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus") {
		return
	}
	sum, err := c.corpus.RunRules(r.Context(), nil)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.auditIntake(r, "rules", "all", sum)
	c.showIntake(w, r, intakeForm{}, &intakeResult{What: "全部启用的摄取规则", Sum: sum})
}

func (c *console) showIntake(w http.ResponseWriter, r *http.Request, f intakeForm, res *intakeResult) {
	for _, x := range res.Sum.Failures {
		res.Failures = append(res.Failures, intakeFailureRow{ArticleID: x.ArticleID, Why: failureWhy(x.Error), Raw: x.Error})
	}
	d, err := c.corpusData(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Intake, d.Result = f, res
	p := page{Title: "语料库", Active: "corpus", Data: d}
	if len(res.Failures) > 0 {
		p.Error = fmt.Sprintf("有 %d 篇文章未能收入，原因见下方。", len(res.Failures))
	} else {
		p.Flash = "已完成收入：" + res.What + "。"
	}
	c.render(w, r, http.StatusOK, "corpus", p)
}

// auditIntake records an intake made from the console. The works'
// provenance names the person too; the audit trail is where staff look
// for who changed what.
func (c *console) auditIntake(r *http.Request, kind, id string, sum corpus.RunSummary) {
	p, _ := auth.FromContext(r.Context())
	after, _ := json.Marshal(map[string]int{"looked": sum.Looked, "new_works": sum.NewWorks,
		"new_revisions": sum.NewRevisions, "unchanged": sum.Unchanged, "failed": len(sum.Failures)})
	if err := c.store.RecordAudit(r.Context(), &store.AuditEntry{Actor: p.Actor(), Action: "corpus.intake",
		ObjectType: "corpus_intake", ObjectID: kind + ":" + id, After: after}); err != nil {
		c.log.Error("audit of a corpus intake", "err", err)
	}
}

func (c *console) corpusRefused(w http.ResponseWriter, r *http.Request, f intakeForm, rf ruleForm, msg string) {
	d, err := c.corpusData(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Intake, d.Rule = f, rf
	c.render(w, r, http.StatusBadRequest, "corpus", page{Title: "语料库", Active: "corpus", Error: msg, Data: d})
}

// corpusRuleCreate records a standing order to take in every ready
// article of some targets (every target when none is named).
func (c *console) corpusRuleCreate(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus") {
		return
	}
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.corpusRefused(w, r, intakeForm{}, ruleForm{}, "请求无效，请重新填写。")
		return
	}
	f := ruleForm{Name: strings.TrimSpace(r.PostFormValue("name")), Targets: r.PostFormValue("targets"), Errors: map[string]string{}}
	codes := strings.FieldsFunc(f.Targets, func(r rune) bool {
		return r == ',' || r == '，' || r == '、' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
	switch n := utf8.RuneCountInString(f.Name); {
	case n == 0:
		f.Errors["name"] = "请给规则起一个大家认得的名称。"
	case n > 200:
		f.Errors["name"] = "名称过长，请控制在 200 字以内。"
	}
	var unknown []string
	for _, code := range codes {
		if _, err := c.store.TargetByCode(ctx, code); errors.Is(err, store.ErrNotFound) {
			unknown = append(unknown, code)
		} else if err != nil {
			c.serverError(w, r, err)
			return
		}
	}
	if len(unknown) > 0 {
		f.Errors["targets"] = "没有这些采集目标：" + strings.Join(unknown, "、") + "。"
	}
	if len(f.Errors) > 0 {
		c.corpusRefused(w, r, intakeForm{}, f, "有填写不正确的项（见标红处），未保存规则。")
		return
	}
	p, _ := auth.FromContext(ctx)
	rule := &store.CorpusIntakeRule{Name: f.Name, TargetCodes: codes, Enabled: true, CreatedBy: p.Actor()}
	if err := c.store.CreateCorpusIntakeRule(ctx, rule); err != nil {
		c.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"/corpus?rule="+strconv.FormatInt(rule.ID, 10), http.StatusSeeOther)
}

// articleIntake is the article page's 收入语料库: the article becomes a
// work (or a new revision of its work), and the person is taken to it.
func (c *console) articleIntake(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这篇文章。")
		return
	}
	if c.corpusOff(w, r, "articles") {
		return
	}
	p, _ := auth.FromContext(r.Context())
	res, err := c.corpus.IntakeArticle(r.Context(), id, p.Actor())
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.notFound(w, r, "没有这篇文章。")
		return
	case errors.Is(err, corpus.ErrNotReady):
		c.renderArticle(w, r, http.StatusConflict, id, "这篇文章尚未就绪（待处理或失败），只有已就绪的文章才能收入语料库。")
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	var sum corpus.RunSummary
	sum.Add(id, res, nil)
	c.auditIntake(r, "article", strconv.FormatInt(id, 10), sum)
	how := "unchanged"
	switch {
	case res.NewWork:
		how = "new"
	case res.NewRevision:
		how = "revision"
	}
	http.Redirect(w, r, workURL(res.WorkID)+"?intake="+how, http.StatusSeeOther)
}

func workURL(id string) string { return Prefix + "/corpus/works/" + id }
