package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"

	"zhizhi/internal/config/zone"
)

// StatusError is a site's answer whose status is not a success (nor a
// 304 to a conditional request).
type StatusError struct {
	URL    string
	Status int
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s answered HTTP %d", e.URL, e.Status) }

// Explain says in the reader's words (the console's Chinese) why a request
// failed; the fetcher's own sentence follows for whoever digs further. what
// names the page asked for (首页, 栏目列表 …) when the site answered with an
// error status; empty means 页面.
func Explain(what string, err error) string {
	var (
		se    *StatusError
		re    *RobotsError
		rf    *RefusedError
		be    *BlockedError
		large *ErrTooLarge
		op    *net.OpError
		dns   *net.DNSError
	)
	switch {
	case errors.As(err, &se):
		if what == "" {
			what = "页面"
		}
		return ExplainStatus(what, se.Status)
	case errors.Is(err, ErrCaptcha):
		return "网站要求输入验证码，已停止访问该网站，需有人查看并在“主机”页解除后再试"
	case errors.As(err, &re) && re.Unreachable:
		// The fetcher's sentence is English with UTC times; the reader
		// gets the retry time on the console's clock instead.
		s := "无法读取该网站的 robots.txt（网站连不上或出错），按礼貌规则暂不访问"
		if !re.RetryAt.IsZero() {
			s += "，" + re.RetryAt.In(zone.Display()).Format("2006-01-02 15:04") + " 后再试"
		}
		return s
	case errors.As(err, &re):
		return "该网站的 robots.txt 不允许访问此页：" + re.Error()
	case errors.As(err, &rf):
		return "地址被安全检查拒绝（例如内网地址）：" + rf.Error()
	case errors.As(err, &be):
		return "该网站正处于退避或熔断中，暂不访问：" + be.Error()
	case errors.Is(err, ErrNoBrowser):
		return "该网站需要用浏览器访问（Cookie 挑战），但本机没有可用的 Chromium"
	case errors.Is(err, ErrChallengeNotCleared):
		return "浏览器也没能通过该网站的 Cookie 挑战"
	case errors.Is(err, ErrTimeout):
		return "请求超时，网站可能无法访问"
	case errors.As(err, &large):
		return "页面过大，已停止读取"
	case errors.Is(err, ErrTooManyRedirects):
		return "重定向次数过多"
	case errors.Is(err, context.Canceled):
		return "已取消"
	case errors.As(err, &dns):
		return "找不到该域名，请检查网址是否写错：" + err.Error()
	case errors.As(err, &op):
		return "无法连接该网站：" + err.Error()
	}
	return "读取失败：" + err.Error()
}

// ExplainStatus says what an HTTP error status means for the page asked.
func ExplainStatus(what string, status int) string {
	switch {
	case status == 404:
		return fmt.Sprintf("%s不存在（HTTP 404）", what)
	case status == 401 || status == 403:
		return fmt.Sprintf("%s拒绝访问（HTTP %d）", what, status)
	case status == 412:
		return fmt.Sprintf("%s返回 Cookie 挑战（HTTP 412），需要浏览器访问", what)
	case status >= 500:
		return fmt.Sprintf("%s出错（HTTP %d），请稍后重试", what, status)
	}
	return fmt.Sprintf("%s返回 HTTP %d", what, status)
}
