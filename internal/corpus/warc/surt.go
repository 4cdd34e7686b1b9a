package warc

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/idna"
)

// SURT returns the Sort-friendly URI Reordering Transform of an http(s)
// URL, the urlkey of CDX and CDXJ indexes, in the form pywb and warcio
// write it:
//
//   - a URL without a scheme is taken as http://; the scheme, user info and
//     fragment are dropped, and so is the port when it is the scheme's
//     default (80, 443);
//   - the host is lowercased, an internationalised host becomes its
//     punycode (A-label) form, a leading "www." (or www2., www3. …) is
//     dropped, and its labels are reversed and joined by commas, then ")";
//   - the path (at least "/") follows; bytes outside printable ASCII are
//     percent-encoded as UTF-8, and the whole key is lowercased, including
//     path, query and percent-escapes (so %E6 and %e6 are one key);
//   - query arguments are sorted and follow a "?".
//
// "http://www.Example.com:80/A/b?z=1&a=2#top" becomes
// "com,example)/a/b?a=2&z=1". A URL with another scheme is returned
// lowercased and otherwise unchanged.
func SURT(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("surt: empty URL")
	}
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
	case otherScheme.MatchString(lower):
		return lower, nil
	default:
		s = "http://" + s
	}
	u, err := url.Parse(encodeNonASCII(s))
	if err != nil {
		return "", fmt.Errorf("surt: %q is not a URL: %w", raw, err)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", fmt.Errorf("surt: %q has no host", raw)
	}
	if strings.Contains(host, ":") {
		// An IPv6 literal is kept in brackets, not reversed.
		host = "[" + host + "]"
	} else if ascii, err := idna.Lookup.ToASCII(unescapeHost(host)); err == nil {
		host = ascii
	} else {
		return "", fmt.Errorf("surt: host of %q: %w", raw, err)
	}
	var b strings.Builder
	if strings.HasPrefix(host, "[") {
		b.WriteString(host)
	} else {
		labels := strings.Split(stripWWW(host), ".")
		slices.Reverse(labels)
		b.WriteString(strings.Join(labels, ","))
	}
	if port := u.Port(); port != "" && !(port == "80" && u.Scheme == "http") && !(port == "443" && u.Scheme == "https") {
		b.WriteString(":" + port)
	}
	b.WriteString(")")
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		args := strings.Split(u.RawQuery, "&")
		slices.Sort(args)
		b.WriteString("?" + strings.Join(args, "&"))
	}
	return strings.ToLower(b.String()), nil
}

// otherScheme matches a URL that starts with a scheme other than http(s)
// ("mailto:", "ftp://"), and not a bare host with a port ("a.cn:8080/").
var otherScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:([^0-9]|$)`)

// surtHost is the part of a SURT key before ")", the reversed host and
// port.
func surtHost(key string) string {
	h, _, _ := strings.Cut(key, ")")
	return h
}

func stripWWW(host string) string {
	if !strings.HasPrefix(host, "www") {
		return host
	}
	i := 3
	for i < len(host) && host[i] >= '0' && host[i] <= '9' {
		i++
	}
	if i < len(host) && host[i] == '.' {
		return host[i+1:]
	}
	return host
}

func unescapeHost(h string) string {
	if u, err := url.PathUnescape(h); err == nil {
		return u
	}
	return h
}

// encodeNonASCII percent-encodes bytes outside printable ASCII (and
// spaces), as UTF-8 bytes, leaving existing escapes alone.
func encodeNonASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
