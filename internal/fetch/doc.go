// Package fetch owns zhizhi's polite HTTP: the robots.txt matcher (RFC 9309),
// the per-host limiter, backoff and circuit breaker, the SSRF guard with its
// resolve map, size/time/redirect limits and charset decoding. Every rule that
// depends on time reads an injected Clock so tests never sleep for real, and
// every politeness state lives in a plain struct mirroring model.HostState so
// the store can persist it and a restart forgives nothing.
package fetch
