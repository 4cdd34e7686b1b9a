package pages

import (
	"net/url"
	"sort"
	"unicode"
	"unicode/utf8"
)

// PlainText reports whether s is text a person could have typed: valid
// UTF-8 without control characters (C0, DEL, C1). A NUL or an escape in a
// search word is never meant, and left in it a filter can stop filtering
// (a NUL cut the card search short and every card matched). multiline lets
// tab, newline and carriage return through, as a textarea sends them.
func PlainText(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsControl(r) {
			continue
		}
		if multiline && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		return false
	}
	return true
}

// BadParam returns the first name (in name order) among v whose name or any
// value is not PlainText, and whether there is one. The console, the portal
// and the API all check their query parameters with it, so a control
// character is refused the same way everywhere.
func BadParam(v url.Values, multiline bool) (string, bool) {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !PlainText(name, false) {
			return name, true
		}
		for _, val := range v[name] {
			if !PlainText(val, multiline) {
				return name, true
			}
		}
	}
	return "", false
}

// BadParamMessage says in the readers' words which parameter was refused and
// what to do.
func BadParamMessage(name string) string {
	if !PlainText(name, false) {
		name = "（无法显示）"
	} else {
		name = "「" + name + "」"
	}
	return "查询参数" + name + "含有控制字符或无效编码，无法处理。请删去这些字符后重试。"
}
