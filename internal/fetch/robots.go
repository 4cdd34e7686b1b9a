package fetch

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"zhizhi/internal/robotstxt"
)

// ProductToken is the name zhizhi answers to in robots.txt user-agent lines.
const ProductToken = "zhizhi"

// RobotsMaxRedirects is how many redirects the fetcher follows for
// robots.txt (RFC 9309 §2.3.1.2).
const RobotsMaxRedirects = 5

// RobotsTTL is how long a fetched robots.txt may be cached (RFC 9309 §2.4).
const RobotsTTL = 24 * time.Hour

// RobotsExpired reports whether a robots.txt fetched at fetchedAt must be
// fetched again at now.
func RobotsExpired(fetchedAt, now time.Time) bool {
	return !now.Before(fetchedAt.Add(RobotsTTL))
}

// RobotsForStatus turns the outcome of fetching robots.txt into rules, per
// RFC 9309 §2.3.1: 2xx parses the body; 4xx means no robots.txt, so all is
// allowed; 5xx, a network error or anything else is fail-closed.
//
// Two choices are stricter than the RFC requires, because zhizhi stops when
// in doubt: 429 is treated as "unreachable" rather than "unavailable", and a
// 3xx that reaches here (the redirect chain was longer than
// RobotsMaxRedirects or had no Location) disallows all.
func RobotsForStatus(status int, body []byte, fetchErr error, agent string) *robotstxt.Robots {
	switch {
	case fetchErr != nil:
		return robotstxt.DisallowAll(robotsUnreachable(failureCause(0, fetchErr)))
	case status >= 200 && status < 300:
		return robotstxt.Parse(body, agent)
	case status == 429 || status >= 500:
		return robotstxt.DisallowAll(robotsUnreachable(failureCause(status, nil)))
	case status >= 400 && status < 500:
		return robotstxt.AllowAll(fmt.Sprintf("robots.txt answered %d; allow all", status))
	default:
		return robotstxt.DisallowAll(fmt.Sprintf("robots.txt answered %d; disallow all (fail-closed)", status))
	}
}

// robotsUnreachable is the reason given for every request while an
// origin's robots.txt cannot be read; cause says how the fetch failed.
func robotsUnreachable(cause string) string {
	return cause + " — robots.txt unreachable, not crawling this host (fail-closed)"
}

// failureCause says in a few words how a fetch failed, for people: the
// wrapped chain of a dial error is long and says the same thing.
func failureCause(status int, err error) string {
	var dns *net.DNSError
	switch {
	case err == nil:
		return fmt.Sprintf("HTTP %d", status)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, ErrTimeout):
		return "timed out"
	case errors.As(err, &dns):
		return "host name not found"
	}
	return err.Error()
}
