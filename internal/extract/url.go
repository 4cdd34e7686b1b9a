package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
)

// NormalizeURL puts a URL in the one form that dedupe keys hash: scheme
// and host lower-cased, default port and fragment dropped, dot segments
// resolved, an empty path made "/", percent-encoding made canonical,
// tracking parameters (utm_*, spm) dropped and the rest sorted by key
// (stable for equal keys).
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("normalize url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("normalize url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("normalize url %q: no host", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.User = nil
	u.Fragment = ""
	u.RawFragment = ""
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	trailing := strings.HasSuffix(p, "/")
	p = path.Clean(p)
	if trailing && p != "/" {
		p += "/"
	}
	u.RawPath = ""
	if dp, err := url.PathUnescape(p); err == nil {
		u.Path = dp
	} else {
		u.Path = p
	}
	if u.RawQuery != "" {
		u.RawQuery = normalizeQuery(u.RawQuery)
	}
	u.ForceQuery = false
	return u.String(), nil
}

func normalizeQuery(q string) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		lk := strings.ToLower(dk)
		if strings.HasPrefix(lk, "utm_") || lk == "spm" {
			continue
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		pairs = append(pairs, kv{dk, dv})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].k < pairs[j].k })
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.v))
	}
	return b.String()
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
