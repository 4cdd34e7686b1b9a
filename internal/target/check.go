package target

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/queue"
)

var (
	codeRe     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	columnIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// The schedule rhythms a person picks instead of writing a cron; the
// system chooses the minute from the target code so targets spread over
// the night window.
const (
	ScheduleDaily   = "daily"
	ScheduleWeekly  = "weekly"
	ScheduleMonthly = "monthly"
)

// maxCadenceDays matches what the site files accept (ten years).
const maxCadenceDays = 3660

// scheduleCron turns a rhythm or a cron expression into the stored cron,
// checking that it parses and runs at most once a day: a target crawled
// more often than daily would only load the government site.
func (s *Service) scheduleCron(p *problems, code, sched string) string {
	sched = strings.TrimSpace(sched)
	daily := config.AssignCron(code)
	h := fnv.New32a()
	h.Write([]byte("schedule:" + code))
	n := h.Sum32()
	fields := strings.Fields(daily) // minute hour * * *
	switch strings.ToLower(sched) {
	case "", ScheduleDaily, "每日":
		return daily
	case ScheduleWeekly, "每周":
		return fmt.Sprintf("%s %s * * %d", fields[0], fields[1], n%7)
	case ScheduleMonthly, "每月":
		return fmt.Sprintf("%s %s %d * *", fields[0], fields[1], 1+n%28)
	}
	loc := s.Location
	if loc == nil {
		loc = time.Local
	}
	cs, err := queue.ParseSchedule(sched, loc)
	if err != nil {
		p.add("schedule", "%q 不是有效的调度：写 daily、weekly、monthly，或五段 cron（分 时 日 月 周），例如 \"17 2 * * *\"（%v）", sched, err)
		return ""
	}
	// Daylight saving can shorten one day to 23 hours.
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
	prev := cs.Next(t)
	for range 10 {
		next := cs.Next(prev)
		if next.Sub(prev) < 23*time.Hour {
			p.add("schedule", "%q 一天运行不止一次（%s 与 %s）；每个目标每天最多抓取一次，写 daily 或每天一个时刻的 cron",
				sched, prev.Format("01-02 15:04"), next.Format("01-02 15:04"))
			return ""
		}
		prev = next
	}
	return sched
}

// checkSiteURL requires an absolute http(s) URL on the site's own host.
func checkSiteURL(p *problems, field, raw string, site *model.Site, required bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		if required {
			p.add(field, "必填：写栏目列表页的完整网址，例如 %s/zwgk/tzgg/", strings.TrimRight(site.BaseURL, "/"))
		}
		return
	}
	if utf8.RuneCountInString(raw) > 1000 {
		p.add(field, "网址超过 1000 个字符")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.add(field, "%q 不是网址：%v", raw, err)
		return
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		p.add(field, "%q 不是完整网址：以 http:// 或 https:// 开头并带主机名", raw)
		return
	}
	base, err := url.Parse(site.BaseURL)
	if err == nil && base.Host != "" && !strings.EqualFold(base.Host, u.Host) {
		p.add(field, "%s 不在站点 %s（%s）上：网址必须属于本站点", u.Host, site.SiteCode, base.Host)
	}
}

func checkText(p *problems, field, v string, max int, required bool) {
	switch {
	case required && strings.TrimSpace(v) == "":
		p.add(field, "必填")
	case utf8.RuneCountInString(v) > max:
		p.add(field, "超过 %d 个字符", max)
	}
}

func checkNumbers(p *problems, cadence, interval int) {
	if cadence < 1 || cadence > maxCadenceDays {
		p.add("expected_cadence_days", "%d 不是有效的天数：写一个大于 0 的整数，例如 7 或 30", cadence)
	}
	if interval < 0 || interval > 86400 {
		p.add("interval_sec", "%d 不是有效的秒数：写 0（按站点默认间隔）或一个正整数", interval)
	}
}

// checkTemplateDept checks the binding of a template-site target: one of
// the four a file may say (pending is a state to leave, not to save), and
// a department that exists when mapped.
func (s *Service) checkTemplateDept(ctx context.Context, p *problems, binding string, localDeptID *int64) {
	switch binding {
	case "":
		p.add("dept_binding", "必填：mapped（挂本地部门，需 local_dept_id）、city_level（市本级）、cross_dept（跨部门）或 external_ref（外部参考）")
		return
	case model.BindingPending:
		p.add("dept_binding", "pending（待确认）不能保存：先选定 mapped、city_level、cross_dept 或 external_ref")
		return
	case model.BindingMapped:
		if localDeptID == nil {
			p.add("local_dept_id", "dept_binding 为 mapped 时必填：本地部门的 dept_id")
			return
		}
		ok, err := s.departmentExists(ctx, *localDeptID)
		if err != nil {
			p.add("local_dept_id", "无法检查部门 %d：%v", *localDeptID, err)
		} else if !ok {
			p.add("local_dept_id", "部门 %d 不在本地部门表中：先导入部门（zhizhi dept import）或选择已有部门", *localDeptID)
		}
	case model.BindingCityLevel, model.BindingCrossDept, model.BindingExternalRef:
		if localDeptID != nil {
			p.add("local_dept_id", "dept_binding 为 %s 时不挂本地部门：去掉 local_dept_id，或改为 mapped", binding)
		}
	default:
		p.add("dept_binding", "%q 不是有效的绑定：mapped、city_level、cross_dept 或 external_ref", binding)
	}
}

func (s *Service) departmentExists(ctx context.Context, id int64) (bool, error) {
	depts, err := s.Store.ListDepartments(ctx)
	if err != nil {
		return false, err
	}
	for _, d := range depts {
		if d.DeptID == id {
			return true, nil
		}
	}
	return false, nil
}

// siteDepartment finds the site department with path on the site.
func (s *Service) siteDepartment(ctx context.Context, siteID int64, path string) (*model.SiteDepartment, error) {
	depts, err := s.Store.ListSiteDepartments(ctx, siteID)
	if err != nil {
		return nil, err
	}
	for i := range depts {
		if depts[i].DeptPath == path {
			return &depts[i], nil
		}
	}
	return nil, nil
}

// columnEntryURL is where a person sees a gkmlpt column, as the site files
// derive it.
func columnEntryURL(site *model.Site, deptPath, columnID string) string {
	return strings.TrimRight(site.BaseURL, "/") + "/" + deptPath + "/gkmlpt/index#" + columnID
}

// deptNotReady says why no column may be added under dept yet, or "": its
// binding must be chosen (pending is refused) and its gkmlpt entry must
// have been found by a probe, so columns are never hung on a department
// whose CMS pages were not seen.
func deptNotReady(dept *model.SiteDepartment) string {
	switch {
	case dept.DeptBinding == model.BindingPending:
		return fmt.Sprintf("站点部门 %s 的绑定仍是 pending（待确认）：先选定 mapped、city_level、cross_dept 或 external_ref", dept.DeptPath)
	case dept.DetectStatus != model.DetectOK:
		return fmt.Sprintf("站点部门 %s 的探测状态是 %s，不是 ok：先探测成功（抓取一次该部门）再添加栏目", dept.DeptPath, dept.DetectStatus)
	}
	return ""
}
