package ui

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// recentRuns is how many runs the detail page lists.
const recentRuns = 10

type targetShowData struct {
	Row        targetListRow
	Site       *model.Site
	Provenance []target.FieldSource
	Runs       []store.TargetRun
	Reason     string // a refused enable/disable reason, given back
}

// targetShow is one target: every setting with where its value comes from
// (the site file, a person's change, or the console), a revert for each
// changed one, switching it on or off with a reason, and its recent runs.
func (c *console) targetShow(w http.ResponseWriter, r *http.Request) {
	d, ok := c.targetShowData(w, r)
	if !ok {
		return
	}
	p := page{Title: "采集目标 · " + d.Row.TargetName, Active: "targets", Data: d}
	q := r.URL.Query()
	// Confirmations say only what the page can back: a field named must be
	// one a person changes, a crawl must be of this target.
	var saved []string
	for _, f := range strings.Split(q.Get("saved"), ",") {
		if model.IsTargetField(f) {
			saved = append(saved, fieldLabel(f))
		}
	}
	switch {
	case q.Get("saved") == "1":
		p.Flash = "已保存采集目标。"
	case len(saved) > 0:
		p.Flash = "已保存：" + strings.Join(saved, "、") + "。"
	case q.Get("unchanged") == "1":
		p.Flash = "没有改动，未保存。"
	case model.IsTargetField(q.Get("reverted")):
		p.Flash = "已将「" + fieldLabel(q.Get("reverted")) + "」恢复为 YAML 中的值。"
	case q.Get("enabled") == "1" && d.Row.Enabled:
		p.Flash = "已启用。"
	case q.Get("enabled") == "0" && !d.Row.Enabled:
		p.Flash = "已停用。"
	case q.Get("crawl") == d.Row.TargetCode:
		p.Flash = "已加入抓取队列，排在定时任务之前。"
		if q.Get("state") == "running" {
			p.Flash = "正在抓取中，未重复加入队列。"
		}
	case q.Get("refused") == d.Row.TargetCode:
		p.Error = "该目标已停用（或其站点、部门已停用），不能立即采集。"
	}
	if q.Get("nosample") == "1" && d.Row.SampleArticleURL == "" {
		p.Flash += " 注意：未填写样例文章网址，保存前没有试运行校验选择器，建议补上。"
	}
	c.render(w, r, http.StatusOK, "target", p)
}

func (c *console) targetShowData(w http.ResponseWriter, r *http.Request) (*targetShowData, bool) {
	ctx := r.Context()
	t, site, ok := c.targetAndSite(w, r)
	if !ok {
		return nil, false
	}
	sites := []model.Site{*site}
	depts, err := c.store.ListDepartments(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	rows, err := c.targetRows(ctx, store.TargetFilter{TargetCode: t.TargetCode}, sites, depts)
	if err == nil && len(rows) != 1 {
		err = fmt.Errorf("target %s: %d rows", t.TargetCode, len(rows))
	}
	if err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	d := &targetShowData{Row: rows[0], Site: site}
	if d.Provenance, err = c.targets.Provenance(ctx, t.TargetCode); err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	// A department reads better by name than as "mapped:2403".
	for i := range d.Provenance {
		fs := &d.Provenance[i]
		fs.Value = fieldText(fs.Field, fs.Value, depts)
		if fs.YAMLValue != nil {
			y := fieldText(fs.Field, *fs.YAMLValue, depts)
			fs.YAMLValue = &y
		}
	}
	if d.Runs, err = c.store.TargetRuns(ctx, t.ID, recentRuns); err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	return d, true
}

// fieldText shows a stored field value the way staff read it.
func fieldText(field, v string, depts []model.Department) string {
	switch field {
	case model.FieldDept:
		return deptText(v, depts)
	case model.FieldScheduleCron:
		if v != "" {
			return cronWords(v)
		}
	case model.FieldEnabled:
		switch v {
		case "true":
			return "是"
		case "false":
			return "否"
		}
	}
	return v
}

// deptText shows a stored department value ("mapped:37") by name.
func deptText(v string, depts []model.Department) string {
	binding, id, err := model.ParseDeptValue(v)
	if err != nil || v == "" {
		return v
	}
	s := bindingLabel(binding)
	if id != nil {
		i := slices.IndexFunc(depts, func(d model.Department) bool { return d.DeptID == *id })
		if i >= 0 {
			return s + "：" + depts[i].DeptName
		}
		return s + "：部门 " + v[strings.IndexByte(v, ':')+1:]
	}
	return s
}
