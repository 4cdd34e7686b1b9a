package cli

import (
	"time"

	"zhizhi/internal/config/zone"
)

// wallText writes t for a person in the zone ZHIZHI_TIMEZONE names (the
// console's zone), followed by the zone's abbreviation ("CST", "UTC",
// "JST"), so a time read in a terminal is never taken for another zone's.
// JSON output keeps RFC 3339 with its offset and never goes through here.
func wallText(t time.Time, layout string) string {
	return t.In(zone.Display()).Format(layout + " MST")
}
