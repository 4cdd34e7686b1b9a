// Package fetch owns zhizhi's polite HTTP. Client.Do is the one way out:
// every request, whatever its purpose or tier, passes the SSRF guard and
// its resolve map, robots.txt (RFC 9309, our own matcher; one file per
// scheme, host and port, cached in robots_state for 24 h and revalidated
// with a conditional GET every RobotsRecheck, so a tightened file applies
// within minutes, or at the next request after ForgetRobots or in a new
// process; a file that cannot be fetched closes the host and is retried
// after RobotsRetryDelay), the host's backoff
// and breaker (and a remembered CAPTCHA), the host limiter (token bucket,
// one in flight per host, four overall; the bucket and the one-in-flight
// rule shared through the store by every process on the database), size
// and time limits, then url_state (validators, content hash, next check)
// and a crawl_log row committed at once. Hosts whose policy or answer asks
// for it go through the browser tier once; its cookies are then reused by
// direct requests. Every rule that depends on time reads an injected Clock
// so tests never sleep for real, and politeness state lives in the store
// so a restart forgives nothing.
package fetch
