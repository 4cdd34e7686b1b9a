package alert

import (
	"fmt"
	"strings"
	"time"
	"zhizhi/internal/config/zone"

	"zhizhi/internal/config"
	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// The messages are for the operators of a Chinese government knowledge
// base: Simplified Chinese, times in ZHIZHI_TIMEZONE, and each alert says what
// to do next.

// bj writes t for a chat message in the zone the operators read times in,
// with the zone named: the message is read away from the console.
func bj(t time.Time) string { return t.In(zone.Display()).Format("2006-01-02 15:04 MST") }

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func minutes(d time.Duration) string { return fmt.Sprintf("%d 分钟", int(d/time.Minute)) }

func successRateMessage(rr config.RateRule, c store.RequestCounts, rate float64) (string, []string) {
	return "【知止告警】抓取成功率过低", []string{
		fmt.Sprintf("最近 %s 请求成功率 %s，低于阈值 %s。", minutes(rr.Window), pct(rate), pct(rr.Threshold)),
		fmt.Sprintf("共请求 %d 次，成功 %d 次（不含因 robots.txt、熔断、退避而未发出的请求）。", c.Total, c.Succeeded),
		"请运行 zhizhi health 查看失败的栏目和受阻的主机。",
	}
}

func challengeRateMessage(rr config.RateRule, c store.RequestCounts, rate float64) (string, []string) {
	return "【知止告警】反爬验证拦截率过高", []string{
		fmt.Sprintf("最近 %s 共请求 %d 次，其中 %d 次遇到反爬验证（挑战页或验证码），占 %s，高于阈值 %s。",
			minutes(rr.Window), c.Total, c.Challenged, pct(rate), pct(rr.Threshold)),
		"zhizhi 不会绕过验证码；请检查相关站点是否收紧了访问策略。",
	}
}

func recoveredRate(rule string, rr config.RateRule, c store.RequestCounts, prev store.AlertState) (string, []string) {
	if rule == RuleSuccessRate {
		return "【知止恢复】抓取成功率已恢复", []string{
			fmt.Sprintf("最近 %s 请求成功率 %s（阈值 %s），共请求 %d 次，成功 %d 次。",
				minutes(rr.Window), pct(float64(c.Succeeded)/float64(c.Total)), pct(rr.Threshold), c.Total, c.Succeeded),
			"告警始于 " + bj(prev.FiredAt) + "。",
		}
	}
	return "【知止恢复】反爬验证拦截率已恢复", []string{
		fmt.Sprintf("最近 %s 共请求 %d 次，遇到反爬验证 %d 次，占 %s（阈值 %s）。",
			minutes(rr.Window), c.Total, c.Challenged, pct(float64(c.Challenged)/float64(c.Total)), pct(rr.Threshold)),
		"告警始于 " + bj(prev.FiredAt) + "。",
	}
}

func staleMessage(s health.StaleTarget) (string, []string) {
	name := s.TargetName
	if name == "" {
		name = s.TargetCode
	}
	lines := []string{fmt.Sprintf("栏目：%s（%s，站点 %s）", name, s.TargetCode, s.SiteCode)}
	if s.LastArticleTime != nil {
		lines = append(lines, fmt.Sprintf("最新文章发布于 %s，已 %.1f 天没有新文章，超过预期更新周期 %d 天的 3 倍（%d 天）。",
			bj(*s.LastArticleTime), s.QuietDays, s.CadenceDays, s.LimitDays))
	} else {
		lines = append(lines, fmt.Sprintf("自 %s 添加以来从未采集到文章，已 %.1f 天，超过预期更新周期 %d 天的 3 倍（%d 天）。",
			bj(s.QuietSince), s.QuietDays, s.CadenceDays, s.LimitDays))
	}
	lines = append(lines, "请检查栏目地址是否变更、页面是否改版，或按实际更新节奏调整 expected_cadence_days。")
	return "【知止告警】栏目长时间无更新：" + s.TargetCode, lines
}

// staleRecovered is the recovery of a stale target; t is nil when the
// target is no longer enabled (it cleared because nobody watches it).
func staleRecovered(prev store.AlertState, t *model.Target) (string, []string) {
	title := "【知止恢复】栏目恢复更新：" + prev.Subject
	switch {
	case t == nil:
		return title, []string{fmt.Sprintf("栏目 %s 已停用或已删除，不再监测其更新。", prev.Subject),
			"告警始于 " + bj(prev.FiredAt) + "。"}
	case t.LastArticleTime != nil:
		return title, []string{fmt.Sprintf("栏目 %s 已不再过期：最新文章发布于 %s，在预期更新周期 %d 天的 3 倍以内。",
			prev.Subject, bj(*t.LastArticleTime), t.ExpectedCadenceDays), "告警始于 " + bj(prev.FiredAt) + "。"}
	}
	return title, []string{fmt.Sprintf("栏目 %s 已不再满足过期条件。", prev.Subject), "告警始于 " + bj(prev.FiredAt) + "。"}
}

func reviewMessage(h health.HostIssue) (string, []string) {
	var lines []string
	if h.Has(health.HostCaptcha) {
		lines = append(lines, fmt.Sprintf("主机 %s 返回了验证码页面，zhizhi 已停止访问该主机（从不绕过验证码）。", h.Host))
	} else {
		lines = append(lines, fmt.Sprintf("主机 %s 在 7 天内已熔断 %d 次（每次连续出错 5 次后暂停 24 小时），已暂停抓取。", h.Host, h.BreakerTrips7d))
	}
	if h.BreakerUntil != nil {
		lines = append(lines, "熔断至 "+bj(*h.BreakerUntil)+"。")
	}
	lines = append(lines, fmt.Sprintf("请人工检查该站点，确认可以继续后运行 zhizhi host clear %s。", h.Host))
	return "【知止告警】站点需人工复核：" + h.Host, lines
}

func reviewRecovered(prev store.AlertState) (string, []string) {
	return "【知止恢复】站点已解除复核：" + prev.Subject, []string{
		fmt.Sprintf("主机 %s 的复核标记已由人工清除，恢复抓取。", prev.Subject),
		"告警始于 " + bj(prev.FiredAt) + "。",
	}
}

func takedownMessage(k model.Takedown, now time.Time) (string, []string) {
	lines := []string{fmt.Sprintf("%s 于 %s 提出下架摘要卡的请求（编号 %d，提出人：%s），尚未执行。", k.SiteName, bj(k.ReceivedAt), k.ID, k.Requester)}
	if now.After(k.DeadlineAt) {
		lines = append(lines, "已超过 48 小时处理期限（期限 "+bj(k.DeadlineAt)+"）。")
	} else {
		lines = append(lines, "处理期限 "+bj(k.DeadlineAt)+"，请尽快核实并执行。")
	}
	lines = append(lines, "在管理后台「下架请求」页面执行下架，卡片将被冻结（不删除）并生成回执。")
	return "【知止告警】下架请求临近期限：" + k.SiteName, lines
}

func takedownRecovered(prev store.AlertState) (string, []string) {
	return "【知止恢复】下架请求已执行：编号 " + prev.Subject, []string{
		"编号 " + prev.Subject + " 的下架请求已执行，相关摘要卡已冻结。",
		"告警始于 " + bj(prev.FiredAt) + "。",
	}
}

// text is a notification as plain text: the title, then the lines.
func (n Notification) text() string {
	return n.Title + "\n" + strings.Join(n.Lines, "\n")
}

// TestNotification is the message that checks a webhook before anyone
// relies on it (zhizhi alert test). It says where it came from, so that a
// group hearing from several installations knows which one works.
func TestNotification(webhook, from string, now time.Time) Notification {
	return Notification{Webhook: webhook, Key: Test, Rule: Test, State: Test, At: now.UTC(),
		Title: "【知止测试】告警通道测试消息",
		Lines: []string{
			"这是一条测试消息，用于确认 zhizhi 的告警能送达本群，无需处理。",
			fmt.Sprintf("发送自 %s，时间 %s（北京时间），通道 %s。", from, bj(now), webhook),
		}}
}
