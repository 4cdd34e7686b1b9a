package ui

import (
	"strings"

	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// detectLabel says a site department's probe state in words.
func detectLabel(s string) string {
	switch s {
	case model.DetectPending:
		return "待探测"
	case model.DetectOK:
		return "探测成功"
	case model.DetectFailed:
		return "探测失败"
	}
	return s
}

// runnerLabel says who ran a crawl: "cli" is the command line, "serve
// host-pid" a worker of the service on that host.
func runnerLabel(r string) string {
	switch {
	case r == "cli":
		return "命令行"
	case strings.HasPrefix(r, "serve "):
		return "后台服务 " + strings.TrimPrefix(r, "serve ")
	}
	return r
}

// errorClasses name the kinds of failure crawl_log records (its
// error_class), as the staff call them.
var errorClasses = map[string]string{
	fetch.ClassRobots:     "robots.txt 不允许或无法读取",
	fetch.ClassSSRF:       "地址被安全检查拒绝",
	fetch.ClassBreaker:    "熔断中",
	fetch.ClassBackoff:    "退避中",
	fetch.ClassCaptcha:    "验证码拦截",
	fetch.ClassChallenge:  "Cookie 挑战",
	fetch.ClassNoBrowser:  "需要浏览器但本机没有",
	fetch.ClassBrowser:    "浏览器访问失败",
	fetch.ClassBlocked:    "浏览器子请求被拦下",
	fetch.ClassTimeout:    "请求超时",
	fetch.ClassTooLarge:   "页面过大",
	fetch.ClassRedirects:  "重定向过多",
	fetch.ClassCanceled:   "已取消",
	fetch.ClassNetwork:    "网络错误",
	fetch.ClassHTTPStatus: "网站返回错误状态",
	"http_5xx":            "网站出错（5xx）",
	"http_4xx":            "网站拒绝或找不到（4xx）",
}

// errorClassLabel says an error class in words; one this table does not
// know is shown as recorded.
func errorClassLabel(class string) string {
	if s, ok := errorClasses[class]; ok {
		return s
	}
	return class
}
