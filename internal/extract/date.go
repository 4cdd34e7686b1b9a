package extract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"zhizhi/internal/config/zone"
)

// Shanghai is the time zone of source pages unless they say otherwise.
var Shanghai = zone.Shanghai

// dateRe reads a date and an optional time of day. The time may follow the
// date after white space, a "T" or a hyphen: gov.cn's firstpublishedtime
// meta is written "2025-03-05-10:23:00". A zone offset is read only after a
// time, so the hyphen before a time is never taken for a negative offset.
var dateRe = regexp.MustCompile(`(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?` +
	`(?:(?:\s*-\s*|[\sT]*)(\d{1,2})\s*[:时]\s*(\d{1,2})(?:\s*[:分]\s*(\d{1,2}))?(?:\.\d+)?\s*秒?` +
	`\s*(Z|[+-]\d{2}:?\d{2})?)?`)

var compactRe = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?$`)

// ParseDate reads the first date in s, in any spelling the portals use
// (2024-03-05, 2024/3/5, 2024.3.5, 2024年3月5日, each with or without a time,
// 20240305, Unix seconds or milliseconds). Times without a zone are
// Asia/Shanghai. hasTime tells whether the text carried a time of day.
func ParseDate(s string) (t time.Time, hasTime bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false, fmt.Errorf("parse date: empty")
	}
	if m := dateRe.FindStringSubmatch(s); m != nil {
		y, mo, d, hh, mm, ss, hasTime := dateFields(m)
		loc := Shanghai
		if z := m[7]; z != "" {
			if loc = zoneOf(z); loc == nil {
				return time.Time{}, false, fmt.Errorf("parse date: %q has no valid zone offset", s)
			}
		}
		return build(y, mo, d, hh, mm, ss, loc, s, hasTime)
	}
	if m := compactRe.FindStringSubmatch(s); m != nil {
		y, mo, d, hh, mm, ss, hasTime := dateFields(m)
		return build(y, mo, d, hh, mm, ss, Shanghai, s, hasTime)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		switch {
		case n > 1e11 && n < 1e14: // milliseconds
			return time.UnixMilli(n).UTC(), true, nil
		case n > 1e8 && n < 1e11: // seconds
			return time.Unix(n, 0).UTC(), true, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("parse date: %q is not a date", s)
}

// dateFields reads year, month, day and the optional hour, minute and
// second from submatches 1–6 of dateRe or compactRe.
func dateFields(m []string) (y, mo, d, hh, mm, ss int, hasTime bool) {
	y, _ = strconv.Atoi(m[1])
	mo, _ = strconv.Atoi(m[2])
	d, _ = strconv.Atoi(m[3])
	if m[4] != "" {
		hasTime = true
		hh, _ = strconv.Atoi(m[4])
		mm, _ = strconv.Atoi(m[5])
		if m[6] != "" {
			ss, _ = strconv.Atoi(m[6])
		}
	}
	return y, mo, d, hh, mm, ss, hasTime
}

func build(y, mo, d, hh, mm, ss int, loc *time.Location, src string, hasTime bool) (time.Time, bool, error) {
	if y < 1949 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60 {
		return time.Time{}, false, fmt.Errorf("parse date: %q is out of range", src)
	}
	t := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, loc)
	if t.Day() != d { // 2月30日 and the like
		return time.Time{}, false, fmt.Errorf("parse date: %q is not a calendar date", src)
	}
	return t.UTC(), hasTime, nil
}

// zoneOf reads "Z", "+08:00" or "+0800"; nil when the offset is beyond
// what any zone uses (±14 h).
func zoneOf(z string) *time.Location {
	if z == "Z" {
		return time.UTC
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	h, _ := strconv.Atoi(digits[:2])
	m, _ := strconv.Atoi(digits[2:])
	if h > 14 || m > 59 {
		return nil
	}
	return time.FixedZone(z, sign*(h*3600+m*60))
}

// DateOnly reads a date and returns it as YYYY-MM-DD in the source's own
// calendar (Asia/Shanghai), the form of the article's date columns.
func DateOnly(s string) (string, error) {
	t, _, err := ParseDate(s)
	if err != nil {
		return "", err
	}
	return t.In(Shanghai).Format("2006-01-02"), nil
}
