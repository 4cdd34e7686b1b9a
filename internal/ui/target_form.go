package ui

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/target"
)

// targetForm is the new and edit form of a target as the person filled it
// in: every value is kept as typed, so a refused save gives it back whole.
type targetForm struct {
	Edit bool   // editing an existing target (Code), not adding one
	Code string // the target edited
	CMS  bool   // the target hangs under a CMS site department: entry and binding follow from it
	// Refused says why the last save was refused. It is shown inside the
	// form, which a new dry-run replaces, so a green dry-run never sits
	// under an old red verdict.
	Refused string

	SiteCode, TargetCode, TargetName, EntryURL, SampleArticleURL  string
	DeptPath, ColumnID, DeptBinding, LocalDeptID                  string
	ChannelName, ChannelPath, ContentCategory, ContentSubcategory string
	Schedule, ScheduleCron, ExpectedCadenceDays, IntervalSec      string
	Enabled                                                       bool

	Errors map[string]string // by field name: shown next to the field
	Other  []string          // problems of no field on the form

	DryRun   *target.DryRun
	Warnings []string
	Ran      bool // a dry-run (or the gate) ran: show its panel

	Sites []model.Site
	Depts []model.Department
}

func (f *targetForm) fail(field, msg string) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	if _, ok := f.Errors[field]; ok {
		f.Errors[field] += "；" + msg
		return
	}
	f.Errors[field] = msg
}

// formFields are the inputs of the form; a problem with another field is
// shown above the form.
var formFields = []string{"site_code", "target_code", "target_name", "entry_url", "sample_article_url", "dept_path",
	"column_id", "dept_binding", "local_dept_id", "channel_name", "channel_path", "content_category",
	"content_subcategory", "schedule", "expected_cadence_days", "interval_sec", "enabled"}

// maxFormBytes bounds a posted form; a target's fields are short.
const maxFormBytes = 64 << 10

// readTargetForm reads the posted form into f (whose Edit, Code and CMS
// the caller set).
func readTargetForm(w http.ResponseWriter, r *http.Request, f *targetForm) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return err
	}
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	if !f.Edit {
		f.SiteCode, f.TargetCode = v("site_code"), v("target_code")
		f.DeptPath, f.ColumnID = v("dept_path"), v("column_id")
	}
	f.TargetName, f.EntryURL, f.SampleArticleURL = v("target_name"), v("entry_url"), v("sample_article_url")
	f.DeptBinding, f.LocalDeptID = v("dept_binding"), v("local_dept_id")
	f.ChannelName, f.ChannelPath = v("channel_name"), v("channel_path")
	f.ContentCategory, f.ContentSubcategory = v("content_category"), v("content_subcategory")
	f.Schedule, f.ScheduleCron = v("schedule"), v("schedule_cron")
	f.ExpectedCadenceDays, f.IntervalSec = v("expected_cadence_days"), v("interval_sec")
	f.Enabled = r.PostFormValue("enabled") != ""
	return nil
}

// schedule is what the service reads: a rhythm, or the cron typed in.
func (f *targetForm) schedule() string {
	if f.Schedule == "cron" {
		if f.ScheduleCron == "" {
			f.fail("schedule", "选择了自定义 cron，请填写五段 cron（分 时 日 月 周），例如 17 2 * * *")
		}
		return f.ScheduleCron
	}
	if !slices.Contains([]string{"", target.ScheduleDaily, target.ScheduleWeekly, target.ScheduleMonthly}, f.Schedule) {
		f.fail("schedule", "请从列表中选择调度节奏")
	}
	return f.Schedule
}

// number reads a whole number field; empty is zero unless required.
func (f *targetForm) number(field, s string, required bool) int {
	if s == "" {
		if required {
			f.fail(field, "必填：填写一个整数")
		}
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		f.fail(field, "「"+s+"」不是整数")
	}
	return n
}

// dept reads the department picker; it counts only with a mapped binding.
func (f *targetForm) dept() *int64 {
	if f.DeptBinding != model.BindingMapped || f.LocalDeptID == "" {
		return nil
	}
	n, err := strconv.ParseInt(f.LocalDeptID, 10, 64)
	if err != nil {
		f.fail("local_dept_id", "请从列表中选择部门")
		return nil
	}
	return &n
}

// input is the form as a new target; field problems found reading it are
// recorded on f.
func (f *targetForm) input() target.Input {
	return target.Input{
		SiteCode: f.SiteCode, TargetCode: f.TargetCode, TargetName: f.TargetName, EntryURL: f.EntryURL,
		SampleArticleURL: f.SampleArticleURL, DeptPath: f.DeptPath, ColumnID: f.ColumnID,
		DeptBinding: f.DeptBinding, LocalDeptID: f.dept(),
		ChannelName: f.ChannelName, ChannelPath: f.ChannelPath, ContentCategory: f.ContentCategory,
		ContentSubcategory: f.ContentSubcategory, Schedule: f.schedule(),
		ExpectedCadenceDays: f.number("expected_cadence_days", f.ExpectedCadenceDays, false),
		IntervalSec:         f.number("interval_sec", f.IntervalSec, false), Enabled: f.Enabled,
	}
}

// patch is the form as a change of the target: every field the form
// shows, so what the person sees is what is saved. A column of a CMS
// site keeps the entry and binding its site department gives it.
func (f *targetForm) patch() target.Patch {
	p := target.Patch{TargetName: &f.TargetName, SampleArticleURL: &f.SampleArticleURL,
		ChannelName: &f.ChannelName, ChannelPath: &f.ChannelPath, ContentCategory: &f.ContentCategory,
		ContentSubcategory: &f.ContentSubcategory, Enabled: &f.Enabled}
	sched := f.schedule()
	p.Schedule = &sched
	cadence := f.number("expected_cadence_days", f.ExpectedCadenceDays, true)
	interval := f.number("interval_sec", f.IntervalSec, true)
	p.ExpectedCadenceDays, p.IntervalSec = &cadence, &interval
	if !f.CMS {
		p.EntryURL = &f.EntryURL
		p.DeptBinding, p.LocalDeptID = &f.DeptBinding, f.dept()
	}
	return p
}

// formOf fills a form from a saved target, for editing it.
func formOf(t *model.Target, siteCode string) *targetForm {
	f := &targetForm{Edit: true, Code: t.TargetCode, CMS: t.SiteDepartmentID != nil, SiteCode: siteCode,
		TargetCode: t.TargetCode, TargetName: t.TargetName, EntryURL: t.EntryURL, SampleArticleURL: t.SampleArticleURL,
		ColumnID: t.ColumnID, DeptBinding: t.DeptBinding, ChannelName: t.ChannelName, ChannelPath: t.ChannelPath,
		ContentCategory: t.ContentCategory, ContentSubcategory: t.ContentSubcategory, Schedule: "cron",
		ScheduleCron: t.ScheduleCron, ExpectedCadenceDays: strconv.Itoa(t.ExpectedCadenceDays),
		IntervalSec: strconv.Itoa(t.IntervalSec), Enabled: t.Enabled}
	if t.DeptID != nil {
		f.LocalDeptID = strconv.FormatInt(*t.DeptID, 10)
	}
	return f
}

// takeError puts what the service refused onto the form and says with
// which status and message the form goes back to the person; ok is false
// for an error that is not the person's to fix.
func (f *targetForm) takeError(err error, res *target.Result) (status int, msg string, ok bool) {
	if res != nil && res.DryRun != nil {
		f.DryRun, f.Ran = res.DryRun, true
	}
	var in *target.InputError
	switch {
	case errors.As(err, &in):
		for _, p := range in.Problems {
			if slices.Contains(formFields, p.Field) {
				f.fail(p.Field, p.Message)
			} else {
				f.Other = append(f.Other, p.Field+"："+p.Message)
			}
		}
		return http.StatusBadRequest, "有填写不正确的项（见标红处），未保存。", true
	case errors.Is(err, target.ErrDryRunFailed):
		f.Ran = true
		return http.StatusUnprocessableEntity, "试运行未通过，未保存：请按下方试运行结果修改后再保存。", true
	case errors.Is(err, target.ErrNoValidator):
		return http.StatusServiceUnavailable, "服务器未配置试运行，填写了样例文章网址的目标无法保存：请联系系统管理员，或暂不填写样例文章网址。", true
	case errors.Is(err, target.ErrConflict):
		return http.StatusConflict, "保存期间该目标已被他人修改，未保存：请重新打开编辑页，确认后再改。", true
	}
	return 0, "", false
}

// renderTargetForm shows the form as the person left it.
func (c *console) renderTargetForm(w http.ResponseWriter, r *http.Request, status int, f *targetForm, msg string) {
	ctx := r.Context()
	var err error
	if f.Sites, err = c.store.ListSites(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	if f.Depts, err = c.store.ListDepartments(ctx); err != nil {
		c.serverError(w, r, err)
		return
	}
	title := "新增采集目标"
	if f.Edit {
		title = "编辑采集目标 · " + f.Code
	}
	f.Refused = msg
	c.render(w, r, status, "target_form", page{Title: title, Active: "targets", Data: f})
}

func targetURL(code string) string { return Prefix + "/targets/" + url.PathEscape(code) }

func fieldLabel(f string) string { return model.TargetFieldLabel(f) }

// withTargetFuncs adds the helpers the target and catalog pages use.
func (c *console) withTargetFuncs(m template.FuncMap) template.FuncMap {
	m["runOutcome"] = func(o string) string { l, _ := runOutcomeLabel(o); return l }
	m["fieldLabel"] = fieldLabel
	m["adminLevel"] = adminLevelLabel
	m["subStatus"] = subscriptionLabel
	m["fieldErr"] = func(f *targetForm, field string) string { return f.Errors[field] }
	return m
}
