// Package zone owns the one place a time zone is built: the zone people
// read times in (ZHIZHI_TIMEZONE, Asia/Shanghai by default) and China
// Standard Time, the fixed zone of Chinese government dates and of the
// ledger's sealed days. It has no dependencies so that every package,
// store included, can take its zone from here.
package zone

import (
	"fmt"
	"os"
	"sync"
	"time"

	_ "time/tzdata" // a zone name resolves on a host without /usr/share/zoneinfo
)

// Default is the zone people read times in when ZHIZHI_TIMEZONE is
// unset.
const Default = "Asia/Shanghai"

// Env names the environment variable that sets the zone every
// human-facing time (CLI tables, console, portal, alerts) is shown in and
// schedules are read in. Machine output (JSON, exports, the API) is RFC 3339
// with its offset and does not depend on it.
const Env = "ZHIZHI_TIMEZONE"

var zones sync.Map // name → *time.Location

// Load returns the zone called name, or an error that says what to use.
func Load(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	// time.LoadLocation takes "" and "UTC" as UTC and "Local" as the host's
	// zone; only an explicit name is accepted here, so a typo is not shown
	// as someone else's clock.
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("%s %q is not a time zone (use a name like Asia/Shanghai or UTC)", Env, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a time zone (use a name like Asia/Shanghai or UTC)", Env, name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// FromEnv is the zone ZHIZHI_TIMEZONE names, Asia/Shanghai when it is unset.
func FromEnv() (*time.Location, error) {
	name := os.Getenv(Env)
	if name == "" {
		name = Default
	}
	return Load(name)
}

// Display is FromEnv for a caller that cannot refuse (an alert being
// written): a bad name, which the command line refuses at start, falls back
// to Asia/Shanghai rather than to the host's zone.
func Display() *time.Location {
	if loc, err := FromEnv(); err == nil {
		return loc
	}
	return Shanghai
}

// Shanghai is China Standard Time, fixed at +08:00 (China has had no
// daylight saving since 1991). It is not a display preference: it is the
// zone Chinese government pages and OA exports write their dates in, and
// the zone the ledger's sealed days are cut in, whatever ZHIZHI_TIMEZONE
// says.
var Shanghai = func() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil { // cannot happen with time/tzdata linked in
		return time.FixedZone("CST", 8*3600)
	}
	return loc
}()
