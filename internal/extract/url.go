package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"zhizhi/internal/urlpath"
)

// NormalizeURL puts a URL in the one form that dedupe keys hash, changing
// nothing a server could read differently (RFC 3986 §6.2.2): scheme and
// host lower-cased, default port, user info and fragment dropped, dot
// segments removed, an empty path made "/", percent-encoding made canonical
// (unreserved characters decoded, hex digits upper-cased, other bytes
// encoded). Reserved characters stay as written: "%2F" is not "/", "//" is
// not "/", the order of query parameters is kept and "?flag" stays "?flag".
// Only tracking parameters (utm_*, spm) are dropped.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("normalize url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("normalize url %q: scheme must be http or https", raw)
	}
	if u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("normalize url %q: no host", raw)
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	p := urlpath.RemoveDotSegments(canonicalEscapes(u.EscapedPath()))
	if p == "" {
		p = "/"
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	b.WriteString(p)
	if q := normalizeQuery(u.RawQuery); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// canonicalEscapes decodes percent-escapes of unreserved characters,
// upper-cases the hex of the others and escapes bytes that may not appear
// raw in a URL (non-ASCII, spaces, controls).
func canonicalEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			}
			i += 2
		case c < 0x21 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' || c == '%':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// normalizeQuery drops tracking parameters and canonicalizes escapes,
// keeping every other parameter as written and in order.
func normalizeQuery(q string) string {
	if q == "" {
		return ""
	}
	var kept []string
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "utm_") || lk == "spm" {
			continue
		}
		kept = append(kept, canonicalEscapes(part))
	}
	return strings.Join(kept, "&")
}

// URLHash is the dedupe key of a URL: SHA-256 of its normalized form, hex.
func URLHash(raw string) (normalized, hash string, err error) {
	n, err := NormalizeURL(raw)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(n))
	return n, hex.EncodeToString(sum[:]), nil
}

// Resolve makes ref absolute against base.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", ref, err)
	}
	return base.ResolveReference(r), nil
}
