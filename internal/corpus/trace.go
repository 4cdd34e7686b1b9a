package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/corpus/warc"
	"zhizhi/internal/store"
)

// Trace is a work's chain from its source to the releases that hold it,
// each step with its evidence.
type Trace struct {
	Work      store.CorpusWorkRow
	Held      []string // why it is held back now, if it is
	Steps     []TraceStep
	Events    []store.CorpusEvent
	Revisions []store.CorpusRevision
	Aliases   []string
}

// Trace steps, in order.
const (
	StepSource   = "source"
	StepCrawl    = "crawl"
	StepAdapter  = "adapter"
	StepSnapshot = "snapshot"
	StepRights   = "rights"
	StepQA       = "qa"
	StepReview   = "review"
	StepRelease  = "release"
)

// TraceStep is one link of the chain. State is ok, held (this step keeps
// the work out of releases) or missing (no evidence kept).
type TraceStep struct {
	Step     string     `json:"step"`
	Title    string     `json:"title"`
	State    string     `json:"state"`
	Detail   string     `json:"detail"`
	At       *time.Time `json:"at,omitempty"`
	Evidence []Evidence `json:"evidence"`
}

// Evidence names what backs a step: a crawl_log row, a WARC record, a
// sealed ledger day, a blob, a release.
type Evidence struct {
	Kind  string `json:"kind"`  // crawl_log, ledger_day, warc_record, blob, release, candidate, site, article
	Label string `json:"label"` // what a person reads
	Ref   string `json:"ref"`   // the id, path or day
}

// Trace returns work id's chain. ErrNotFound when there is no such work.
func (c *Service) Trace(ctx context.Context, id string) (*Trace, error) {
	w, err := c.Store.CorpusWorkRow(ctx, id)
	if err != nil {
		return nil, err
	}
	tr := &Trace{Work: *w, Held: HeldReasons(w)}
	if tr.Events, err = c.Store.CorpusEvents(ctx, id); err != nil {
		return nil, err
	}
	if tr.Revisions, err = c.Store.CorpusRevisions(ctx, id); err != nil {
		return nil, err
	}
	if tr.Aliases, err = c.Store.CorpusAliases(ctx, id); err != nil {
		return nil, err
	}
	snap, err := c.Store.CorpusSnapshot(ctx, w.Rev.SnapshotID)
	if err != nil {
		return nil, err
	}
	ok := func(b bool) string {
		if b {
			return "ok"
		}
		return "held"
	}

	src := TraceStep{Step: StepSource, Title: "来源", State: "ok", Detail: fmt.Sprintf("%s（%s）", w.SiteName, w.SourceURL),
		Evidence: []Evidence{{Kind: "site", Label: w.SiteName, Ref: w.SiteCode}}}
	if w.ArticleID != nil {
		src.Evidence = append(src.Evidence, Evidence{Kind: "article", Label: fmt.Sprintf("文章 #%d", *w.ArticleID), Ref: fmt.Sprint(*w.ArticleID)})
	}
	tr.Steps = append(tr.Steps, src)

	crawl := TraceStep{Step: StepCrawl, Title: "抓取", State: "missing", Detail: "未找到对应的抓取记录"}
	if snap.CrawlLogID != nil {
		logs, err := c.Store.ListCrawlLogs(ctx, store.CrawlLogFilter{ID: *snap.CrawlLogID, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(logs) == 1 {
			l := logs[0]
			at := l.OccurredAt
			status := 0
			if l.HTTPStatus != nil {
				status = *l.HTTPStatus
			}
			crawl = TraceStep{Step: StepCrawl, Title: "抓取", State: "ok", At: &at,
				Detail:   fmt.Sprintf("HTTP %d，%d 字节，%s", status, l.Bytes, strategyName(l.Strategy)),
				Evidence: []Evidence{{Kind: "crawl_log", Label: fmt.Sprintf("抓取日志 #%d", l.ID), Ref: fmt.Sprint(l.ID)}}}
			day := at.In(zone.Display()).Format("2006-01-02")
			days, err := c.Store.LedgerDays(ctx, day, day)
			if err != nil {
				return nil, err
			}
			if len(days) == 1 {
				crawl.Evidence = append(crawl.Evidence, Evidence{Kind: "ledger_day", Label: "已封存的抓取账本 " + day, Ref: day})
			} else {
				crawl.Evidence = append(crawl.Evidence, Evidence{Kind: "ledger_day", Label: "抓取账本 " + day + "（尚未封存）", Ref: day})
			}
		}
	}
	tr.Steps = append(tr.Steps, crawl)

	adapter := TraceStep{Step: StepAdapter, Title: "解析", State: "ok", Detail: "站点模板或 CMS 适配器解析正文与公开属性"}
	if w.SiteID != nil {
		if site, err := c.Store.SiteByID(ctx, *w.SiteID); err == nil {
			if site.CMSAdapter != "" {
				adapter.Detail = "CMS 适配器 " + site.CMSAdapter
			} else {
				adapter.Detail = "站点模板 " + site.YAMLPath
			}
			adapter.Evidence = append(adapter.Evidence, Evidence{Kind: "site", Label: site.SiteName, Ref: site.SiteCode})
		}
	}
	tr.Steps = append(tr.Steps, adapter)

	created := snap.CreatedAt
	sn := TraceStep{Step: StepSnapshot, Title: "快照", State: "ok", At: &created,
		Detail: fmt.Sprintf("WARC %s…，正文 %s…（%d 字）", snap.WARCSHA256[:12], snap.TextSHA256[:12], w.Rev.Chars),
		Evidence: []Evidence{
			{Kind: "blob", Label: "WARC 文件", Ref: snap.WARCPath},
			{Kind: "blob", Label: "规范化正文", Ref: snap.TextPath},
			{Kind: "blob", Label: "快照清单", Ref: snap.ManifestPath},
		}}
	if b, err := c.readBlob(ctx, snap.WARCPath); err == nil {
		recs, verr := warc.Verify(bytes.NewReader(b))
		for _, r := range recs {
			sn.Evidence = append(sn.Evidence, Evidence{Kind: "warc_record", Label: "WARC " + r.Type + " 记录", Ref: r.ID})
		}
		if verr != nil {
			sn.State, sn.Detail = "held", "WARC 校验失败："+verr.Error()
		}
	} else {
		sn.State, sn.Detail = "missing", "WARC 文件无法读取："+err.Error()
	}
	tr.Steps = append(tr.Steps, sn)

	rightsOK := w.SiteRights == "public_info"
	tr.Steps = append(tr.Steps, TraceStep{Step: StepRights, Title: "权利", State: ok(rightsOK),
		Detail:   "来源权利：" + rightsName(w.SiteRights) + "；访问方式：" + accessName(w.Access),
		Evidence: []Evidence{{Kind: "site", Label: "站点配置 corpus.rights", Ref: w.SiteCode}}})

	var fails []string
	_ = json.Unmarshal(w.Rev.QAProblems, &fails)
	qa := TraceStep{Step: StepQA, Title: "质量检查", State: ok(w.Rev.QA == "pass"), Detail: "全部通过"}
	if len(fails) > 0 {
		qa.Detail = strings.Join(fails, "；")
	}
	tr.Steps = append(tr.Steps, qa)

	review := TraceStep{Step: StepReview, Title: "审核", State: "ok", Detail: "无待判定事项"}
	switch w.Review {
	case store.ReviewPending:
		review.State, review.Detail = "held", fmt.Sprintf("%d 个重复候选待人工判定", w.OpenCandidates)
	case store.ReviewRejected:
		review.State, review.Detail = "held", "人工审核未通过"
	case store.ReviewApproved:
		review.Detail = "人工审核通过"
	}
	if w.Status != store.WorkActive {
		review.State = "held"
		review.Detail = strings.Join(HeldReasons(w)[:1], "")
	}
	tr.Steps = append(tr.Steps, review)

	rel := TraceStep{Step: StepRelease, Title: "发布", State: "held", Detail: "尚未收入任何发布"}
	var active string
	if act, err := c.Store.ActiveCorpusRelease(ctx); err == nil {
		active = act.Version
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	var in []string
	for _, e := range tr.Events {
		if e.Kind == "release" {
			v := strings.TrimPrefix(e.Evidence, "release:")
			in = append(in, v)
			label := "发布 " + v
			if v == active {
				label += "（当前生效）"
			}
			rel.Evidence = append(rel.Evidence, Evidence{Kind: "release", Label: fmt.Sprintf("%s，第 %d 版", label, e.Rev), Ref: v})
		}
	}
	if len(in) > 0 {
		rel.State, rel.Detail = "ok", "收入发布 "+strings.Join(in, "、")
	}
	tr.Steps = append(tr.Steps, rel)
	return tr, nil
}

func strategyName(s string) string {
	if s == "playwright" {
		return "浏览器抓取"
	}
	return "直连抓取"
}

// Citation returns the citation of work id as the release holds it, in
// format csl-json, gbt7714 or bibtex.
func (r *Release) Citation(id, format string) (string, error) {
	e, ok := r.Work(id)
	if !ok {
		return "", fmt.Errorf("work %s is not in release %s: %w", id, r.Version, store.ErrNotFound)
	}
	rec, err := citationRecord(r.Version, e)
	if err != nil {
		return "", err
	}
	switch format {
	case "csl-json":
		return string(rec.CSL), nil
	case "gbt7714":
		return rec.GBT7714, nil
	case "bibtex":
		return rec.BibTeX, nil
	}
	return "", fmt.Errorf("citation format %q: want csl-json, gbt7714 or bibtex", format)
}
