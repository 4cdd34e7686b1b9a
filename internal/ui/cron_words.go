package ui

import (
	"fmt"
	"strconv"
	"strings"
)

var weekdayNames = []string{"日", "一", "二", "三", "四", "五", "六", "日"}

// cronWords says a five-field cron schedule in words for the forms the
// targets use ("17 2 * * *" → 每天 02:17). A form it does not know is
// shown as it is, labelled, rather than guessed at.
func cronWords(expr string) string {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return expr
	}
	min, hour, dom, mon, dow := f[0], f[1], f[2], f[3], f[4]
	m, errM := strconv.Atoi(min)
	h, errH := strconv.Atoi(hour)
	clock := ""
	if errM == nil && errH == nil && m >= 0 && m < 60 && h >= 0 && h < 24 {
		clock = fmt.Sprintf("%02d:%02d", h, m)
	}
	switch {
	case clock != "" && dom == "*" && mon == "*" && dow == "*":
		return "每天 " + clock
	case clock != "" && dom == "*" && mon == "*" && dow == "1-5":
		return "工作日 " + clock
	case clock != "" && dom == "*" && mon == "*":
		if d, err := strconv.Atoi(dow); err == nil && d >= 0 && d <= 7 {
			return "每周" + weekdayNames[d] + " " + clock
		}
	case clock != "" && mon == "*" && dow == "*":
		if d, err := strconv.Atoi(dom); err == nil && d >= 1 && d <= 31 {
			return fmt.Sprintf("每月 %d 日 %s", d, clock)
		}
	case errM == nil && m >= 0 && m < 60 && strings.HasPrefix(hour, "*/") && dom == "*" && mon == "*" && dow == "*":
		if n, err := strconv.Atoi(hour[2:]); err == nil && n > 0 {
			return fmt.Sprintf("每 %d 小时（第 %d 分）", n, m)
		}
	case strings.HasPrefix(min, "*/") && hour == "*" && dom == "*" && mon == "*" && dow == "*":
		if n, err := strconv.Atoi(min[2:]); err == nil && n > 0 {
			return fmt.Sprintf("每 %d 分钟", n)
		}
	}
	return "自定义（cron " + expr + "）"
}
