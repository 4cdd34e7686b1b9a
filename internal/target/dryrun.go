package target

import (
	"context"
	"errors"
	"fmt"

	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
)

// minContentChars is the shortest body a green dry-run accepts, as the
// validator judges it.
const minContentChars = crawl.MinContentChars

// DryRun is the dry-run of a target before it is saved: each check with
// its verdict, and everything the validator read (list items, title,
// publication time, body length and opening, public attributes,
// attachments, selectors that missed, problems) for the page to show.
type DryRun struct {
	Green      bool              `json:"green"`
	Checks     []Check           `json:"checks"`
	Validation *crawl.Validation `json:"validation,omitempty"` // nil when the dry-run could not run
	Error      string            `json:"error,omitempty"`      // why it could not run
}

// Check is one condition of a green dry-run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Failed lists the checks that did not pass.
func (d *DryRun) Failed() []Check {
	var out []Check
	for _, c := range d.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

func newDryRun(site *model.Site, v *crawl.Validation) *DryRun {
	d := &DryRun{Green: v.Green, Validation: v}
	listDetail := fmt.Sprintf("列表页 %s 读到 %d 条", v.Entry, v.ListItems)
	if site.CMSAdapter != "" {
		listDetail = fmt.Sprintf("栏目列表接口读到 %d 条", v.ListItems)
	}
	title := v.Title
	if title == "" {
		title = "未找到标题"
	}
	d.Checks = []Check{
		{Name: "列表选择器命中", OK: v.ListItems > 0, Detail: listDetail},
		{Name: "标题非空", OK: v.Title != "", Detail: title},
		{Name: fmt.Sprintf("正文不少于 %d 字", minContentChars), OK: v.ContentChars >= minContentChars,
			Detail: fmt.Sprintf("样例文章 %s 正文 %d 字", v.Sample, v.ContentChars)},
	}
	return d
}

// ErrNoValidator refuses to save a target with a sample article when the
// service was built without a dry-run.
var ErrNoValidator = errors.New("no dry-run available to check the sample article")

// dryRun runs the gate on tg: with a sample article it must be green; without
// one the save goes ahead with a warning. It returns the dry-run (nil without
// a sample), the warnings, and ErrDryRunFailed when the save must not happen.
func (s *Service) dryRun(ctx context.Context, site *model.Site, tg *model.Target) (*DryRun, []string, error) {
	if tg.SampleArticleURL == "" {
		return nil, []string{"未填写样例文章网址（sample_article_url）：保存前没有试运行校验选择器，建议补上"}, nil
	}
	if s.Validate == nil {
		return nil, nil, fmt.Errorf("target %s: %w", tg.TargetCode, ErrNoValidator)
	}
	v, err := s.Validate(ctx, site, tg, tg.EntryURL, tg.SampleArticleURL)
	if err != nil {
		d := &DryRun{Error: err.Error(), Checks: []Check{{Name: "试运行", OK: false, Detail: err.Error()}}}
		return d, nil, fmt.Errorf("target %s: %w: %v", tg.TargetCode, ErrDryRunFailed, err)
	}
	d := newDryRun(site, v)
	if !d.Green {
		return d, nil, fmt.Errorf("target %s: %w", tg.TargetCode, ErrDryRunFailed)
	}
	return d, nil, nil
}
