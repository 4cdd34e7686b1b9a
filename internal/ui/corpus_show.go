package ui

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"zhizhi/internal/corpus"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// corpusData is the corpus's overview and intake page.
type corpusData struct {
	Counts    *store.CorpusCounts
	Works     int
	Held      int // works held back from a release now
	Active    *store.CorpusActive
	Rules     []store.CorpusIntakeRule
	Targets   []model.Target
	Statuses  any
	Result    *intakeResult // what an intake just did
	Intake    intakeForm
	Rule      ruleForm
	CanIntake bool
}

// intakeForm and ruleForm are the page's forms as the person filled them.
type intakeForm struct {
	Article, Target string
	Errors          map[string]string
}

type ruleForm struct {
	Name, Targets string
	Errors        map[string]string
}

// intakeResult is a batch of intakes as the page tells it.
type intakeResult struct {
	What     string // what was taken in, in words
	Sum      corpus.RunSummary
	Failures []intakeFailureRow
}

type intakeFailureRow struct {
	ArticleID int64
	Why       string // in Chinese
	Raw       string // the error as the corpus said it, for the record
}

// corpusShow is the corpus at a glance — works by status, candidates
// waiting, snapshots, releases and the active one — with the intake forms
// and the intake rules.
func (c *console) corpusShow(w http.ResponseWriter, r *http.Request) {
	if c.corpusOff(w, r, "corpus") {
		return
	}
	d, err := c.corpusData(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p := page{Title: "语料库", Active: "corpus", Data: d}
	// The notice names only a rule the store holds.
	if id := r.URL.Query().Get("rule"); id != "" {
		for _, rule := range d.Rules {
			if strconv.FormatInt(rule.ID, 10) == id {
				p.Flash = "已保存摄取规则 #" + id + "「" + rule.Name + "」：服务进程在每次采集后执行，也可点击「立即执行全部规则」。"
			}
		}
	}
	c.render(w, r, http.StatusOK, "corpus", p)
}

func (c *console) corpusData(ctx context.Context) (*corpusData, error) {
	d := &corpusData{Statuses: workStatuses}
	var err error
	if d.Counts, err = c.store.CorpusCounts(ctx); err != nil {
		return nil, err
	}
	for _, n := range d.Counts.Works {
		d.Works += n
	}
	err = c.store.EachCorpusWork(ctx, func(w *store.CorpusWorkRow) error {
		if len(corpus.HeldReasons(w)) > 0 {
			d.Held++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.Active, err = c.store.ActiveCorpusRelease(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if d.Rules, err = c.store.CorpusIntakeRules(ctx); err != nil {
		return nil, err
	}
	if d.Targets, err = c.store.ListTargets(ctx, store.TargetFilter{}); err != nil {
		return nil, err
	}
	return d, nil
}

// failureWhy says why an article could not be taken in.
func failureWhy(err string) string {
	switch {
	case strings.Contains(err, corpus.ErrNotReady.Error()):
		return "文章尚未就绪（待处理或失败），只有已就绪的文章才能收入语料库"
	case strings.Contains(err, store.ErrNotFound.Error()):
		return "找不到这篇文章或其站点"
	}
	return "收入失败，原因见右侧原文"
}
