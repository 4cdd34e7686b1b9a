// Package urlpath owns the RFC 3986 path rules that URL normalisation
// (extract) and robots.txt matching (robotstxt) must agree on, so that the
// page a rule judges is the page that is stored. It imports nothing heavy:
// the robots.txt parser is fuzzed with it.
package urlpath

import "strings"

// RemoveDotSegments is RFC 3986 §5.2.4: "." and ".." segments go, every
// other segment (empty ones too) stays.
func RemoveDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}
