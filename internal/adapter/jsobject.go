package adapter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseJSObject reads a JavaScript object or array literal as real portals
// write it in inline scripts: single or double quotes, unquoted keys,
// trailing commas, comments. Numbers stay strings (json.Number style) so
// ids never lose digits. It returns map[string]any, []any, string, bool or
// nil values.
func ParseJSObject(src string) (any, int, error) {
	p := &jsParser{s: src}
	p.skip()
	v, err := p.value(0)
	if err != nil {
		return nil, p.i, err
	}
	return v, p.i, nil
}

type jsParser struct {
	s string
	i int
}

const maxJSDepth = 64

func (p *jsParser) errf(format string, args ...any) error {
	return fmt.Errorf("js object at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsParser) skip() {
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case strings.HasPrefix(p.s[p.i:], "//"):
			if j := strings.IndexByte(p.s[p.i:], '\n'); j >= 0 {
				p.i += j + 1
			} else {
				p.i = len(p.s)
			}
		case strings.HasPrefix(p.s[p.i:], "/*"):
			if j := strings.Index(p.s[p.i+2:], "*/"); j >= 0 {
				p.i += j + 4
			} else {
				p.i = len(p.s)
			}
		default:
			return
		}
	}
}

func (p *jsParser) value(depth int) (any, error) {
	if depth > maxJSDepth {
		return nil, p.errf("nested too deep")
	}
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		w := p.ident()
		switch w {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null", "undefined":
			return nil, nil
		case "":
			return nil, p.errf("unexpected %q", c)
		}
		return nil, p.errf("unexpected identifier %q", w)
	}
}

func (p *jsParser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	for {
		p.skip()
		if p.i >= len(p.s) {
			return nil, p.errf("unterminated object")
		}
		if p.s[p.i] == '}' {
			p.i++
			return m, nil
		}
		var key string
		if c := p.s[p.i]; c == '"' || c == '\'' {
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			key = k
		} else if key = p.ident(); key == "" {
			num, err := p.number()
			if err != nil {
				return nil, p.errf("expected a key")
			}
			key = num.(string)
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errf("expected ':' after key %q", key)
		}
		p.i++
		p.skip()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key] = v
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
}

func (p *jsParser) array(depth int) (any, error) {
	p.i++ // [
	var out []any
	for {
		p.skip()
		if p.i >= len(p.s) {
			return nil, p.errf("unterminated array")
		}
		if p.s[p.i] == ']' {
			p.i++
			if out == nil {
				out = []any{}
			}
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
}

func (p *jsParser) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			p.i++
			e := p.s[p.i]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b', 'f', 'v', '0':
			case 'u':
				if p.i+4 < len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i+1:p.i+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						p.i += 4
						break
					}
				}
				b.WriteByte('u')
			case 'x':
				if p.i+2 < len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i+1:p.i+3], 16, 8); err == nil {
						b.WriteRune(rune(r))
						p.i += 2
						break
					}
				}
				b.WriteByte('x')
			default:
				b.WriteByte(e)
			}
			p.i++
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
	return "", p.errf("unterminated string")
}

func (p *jsParser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-.0123456789eExXabcdefABCDEF", p.s[p.i]) >= 0 {
		p.i++
	}
	n := p.s[start:p.i]
	if _, err := strconv.ParseFloat(n, 64); err != nil {
		if _, err := strconv.ParseInt(n, 0, 64); err != nil {
			return nil, p.errf("bad number %q", n)
		}
	}
	return n, nil
}

func (p *jsParser) ident() string {
	start := p.i
	for p.i < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		if r == '_' || r == '$' || unicode.IsLetter(r) || (p.i > start && unicode.IsDigit(r)) {
			p.i += size
			continue
		}
		break
	}
	return p.s[start:p.i]
}
