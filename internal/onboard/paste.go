package onboard

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// MaxSites is how many base URLs one paste may hold: each costs a few
// polite requests, so a bigger batch would keep the page waiting for long.
const MaxSites = 200

// Line is one accepted line of the paste: its line number and the base URL
// as scheme://host (lower case, no trailing slash).
type Line struct {
	Line    int    `json:"line"`
	BaseURL string `json:"base_url"`
}

// LineProblem is a refused line: its number, its text and why, in words
// the person reads on the page.
type LineProblem struct {
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Problem string `json:"problem"`
}

func (p LineProblem) String() string {
	return fmt.Sprintf("第 %d 行 %q：%s", p.Line, p.Text, p.Problem)
}

// hostRe is an ASCII host name or IPv4 address; an internationalized name
// must be pasted in its xn-- form, which is what the site files hold.
var hostRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// ParseBaseURLs reads the pasted text: one base URL a line, blank lines
// and repeats skipped, white space (full-width too) trimmed. Every line
// that is not an http(s) URL of a host alone comes back as a problem with
// its line number; the good lines are kept either way.
func ParseBaseURLs(text string) ([]Line, []LineProblem) {
	var (
		lines    []Line
		problems []LineProblem
		seen     = map[string]bool{}
	)
	text = strings.TrimPrefix(text, "\ufeff")
	for i, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		n := i + 1
		s := strings.TrimSpace(strings.Trim(raw, " \t\r\u3000"))
		if s == "" {
			continue
		}
		base, problem := normalizeBaseURL(s)
		if problem != "" {
			problems = append(problems, LineProblem{Line: n, Text: s, Problem: problem})
			continue
		}
		if seen[base] {
			continue
		}
		if len(lines) == MaxSites {
			problems = append(problems, LineProblem{Line: n, Text: s,
				Problem: fmt.Sprintf("一次最多接入 %d 个站点，请把其余站点分批粘贴", MaxSites)})
			continue
		}
		seen[base] = true
		lines = append(lines, Line{Line: n, BaseURL: base})
	}
	return lines, problems
}

// normalizeBaseURL returns scheme://host[:port] of s, or why s is not a
// base URL.
func normalizeBaseURL(s string) (string, string) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "不是有效的网址，请写成 http://www.example.gov.cn 的形式"
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "" || u.Host == "" && u.Opaque == "" && !strings.Contains(s, "://"):
		return "", "缺少 http:// 或 https://，请写完整网址，例如 http://www.example.gov.cn"
	case scheme != "http" && scheme != "https":
		return "", fmt.Sprintf("只接受 http:// 或 https:// 网址（这里是 %s:）", u.Scheme)
	case u.Host == "":
		return "", "网址缺少域名，请写成 http://www.example.gov.cn 的形式"
	case u.User != nil:
		return "", "网址不能带用户名或密码"
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Sprintf("只写协议和域名（%s://%s），部门路径由向导扫描得出", scheme, strings.ToLower(u.Host))
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !hostRe.MatchString(host) {
		return "", fmt.Sprintf("域名 %q 不合法（中文域名请写成 xn-- 开头的形式）", u.Hostname())
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	} else if strings.HasSuffix(u.Host, ":") {
		return "", "端口号为空，请去掉冒号或写上端口"
	}
	return scheme + "://" + host, ""
}
