// Package charset owns turning what a government site sends into UTF-8:
// choosing the encoding of an HTML or text body (byte order mark,
// Content-Type, <meta>, detection) and noticing when a declared charset is
// contradicted by the bytes. It does no I/O, so the fuzzer builds it alone.
package charset

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	htmlcharset "golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

// MetaScanLimit is how far into an HTML document a <meta> charset
// declaration is looked for. HTML asks for 1024 bytes; Chinese portals often
// put long comments and scripts first, so we look further.
const MetaScanLimit = 4096

// DecodeHTML transcodes an HTML body to UTF-8 before anything parses it
// . The charset comes from, in order: a byte order mark, the
// Content-Type header, a <meta> declaration in the first MetaScanLimit
// bytes, then detection. A declaration the bytes contradict (GB18030
// declared, UTF-8 sent, or the reverse) loses to the bytes: see
// Note. GBK, GB2312 and their aliases are decoded as GB18030, their
// superset, because Chinese sites label GB18030 text with the older names.
// The result is always valid UTF-8: undecodable bytes become U+FFFD.
// charsetName is the lower-case name of the encoding used.
func DecodeHTML(body []byte, contentType string) (out []byte, charsetName string, err error) {
	enc, name, rest, _ := htmlCharset(body, contentType)
	out, err = decodeWith(enc, rest)
	if err != nil {
		return nil, name, fmt.Errorf("decode html as %s: %w", name, err)
	}
	return out, name, nil
}

// Note says, for a body DecodeHTML would decode against its declared
// charset, what was declared and what the bytes are ("declared gb18030,
// body is utf-8"); "" when the declaration held or nothing was declared.
// Stored with the article, it tells a reader the site mislabels its pages.
func Note(body []byte, contentType string) string {
	_, _, _, note := htmlCharset(body, contentType)
	return note
}

// htmlCharset chooses the encoding of an HTML body; see DecodeHTML.
func htmlCharset(body []byte, contentType string) (enc encoding.Encoding, name string, rest []byte, note string) {
	enc, name, rest = sniffBOM(body)
	if enc != nil {
		return enc, name, rest, ""
	}
	rest = body
	enc, name = charsetFromContentType(contentType)
	if enc == nil {
		enc, name = metaCharset(body)
		// A page cannot be UTF-16 if its ASCII meta tag was readable; HTML
		// says to treat that claim as UTF-8.
		if strings.HasPrefix(name, "utf-16") {
			enc, name = unicode.UTF8, "utf-8"
		}
	}
	if enc == nil {
		enc, name = detectCharset(body)
		return enc, name, rest, ""
	}
	enc, name, note = checkDeclared(enc, name, body)
	return enc, name, rest, note
}

// DecodeText transcodes a JSON or plain-text body to UTF-8: byte order mark,
// then Content-Type, then detection (no <meta> scan). A declared charset the
// bytes contradict loses to the bytes, as for HTML.
func DecodeText(body []byte, contentType string) (out []byte, charsetName string, err error) {
	enc, name, rest := sniffBOM(body)
	if enc == nil {
		rest = body
		enc, name = charsetFromContentType(contentType)
		if enc == nil {
			enc, name = detectCharset(body)
		} else {
			enc, name, _ = checkDeclared(enc, name, body)
		}
	}
	out, err = decodeWith(enc, rest)
	if err != nil {
		return nil, name, fmt.Errorf("decode text as %s: %w", name, err)
	}
	return out, name, nil
}

// checkDeclared overrules a declared charset that the bytes disprove.
// Chinese portals copy templates between servers and CMSs, so a GBK page
// behind a server that says "charset=utf-8", or a UTF-8 page whose template
// still says gb2312, are common; decoding by the label would store mojibake.
// Only proof counts: Chinese text that is valid UTF-8 is UTF-8 (GBK bytes
// almost never are), and bytes that are not UTF-8 but decode as GB18030
// without a single bad character are GB18030. Anything less keeps the label.
func checkDeclared(enc encoding.Encoding, name string, body []byte) (encoding.Encoding, string, string) {
	if name == "utf-8" {
		if !utf8.Valid(trimPartialRune(body)) && cleanGB18030(body) && gbHasHan(body) {
			return simplifiedchinese.GB18030, "gb18030", "declared utf-8, body is gb18030"
		}
		return enc, name, ""
	}
	if utf8.Valid(trimPartialRune(body)) && hasHan(body) {
		return unicode.UTF8, "utf-8", "declared " + name + ", body is utf-8"
	}
	return enc, name, ""
}

// hasHan reports whether UTF-8 b holds a Chinese character.
func hasHan(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= 0x4e00 && r <= 0x9fff || r >= 0x3400 && r <= 0x4dbf || r >= 0x20000 && r <= 0x2ffff {
			return true
		}
		b = b[n:]
	}
	return false
}

// gbHasHan reports whether GB18030 b holds a Chinese character.
func gbHasHan(b []byte) bool {
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(b)
	return err == nil && hasHan(out)
}

// sniffBOM returns the encoding a byte order mark announces and the body
// without it, or nil.
func sniffBOM(b []byte) (encoding.Encoding, string, []byte) {
	switch {
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		return unicode.UTF8, "utf-8", b[3:]
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "utf-16le", b[2:]
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "utf-16be", b[2:]
	}
	return nil, "", nil
}

// charsetFromContentType reads the charset parameter of a Content-Type
// header; an unknown label counts as none.
func charsetFromContentType(ct string) (encoding.Encoding, string) {
	if ct == "" {
		return nil, ""
	}
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		// A sloppy header ("text/html;charset=gbk;") still names a charset.
		i := indexCharsetParam(ct)
		if i < 0 {
			return nil, ""
		}
		v := ct[i+len("charset="):]
		if j := strings.IndexAny(v, ";, "); j >= 0 {
			v = v[:j]
		}
		return lookupCharset(strings.Trim(v, `"'`))
	}
	return lookupCharset(params["charset"])
}

// indexCharsetParam finds "charset=" in s, ignoring ASCII case. (Lower-
// casing s first would shift the offsets of non-ASCII bytes.)
func indexCharsetParam(s string) int {
	const want = "charset="
	for i := 0; i+len(want) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(want)], want) {
			return i
		}
	}
	return -1
}

// lookupCharset maps a label to an encoding with the WHATWG label table,
// folding the GB family into GB18030.
func lookupCharset(label string) (encoding.Encoding, string) {
	label = strings.ToLower(strings.TrimSpace(label))
	if label == "" {
		return nil, ""
	}
	enc, err := htmlindex.Get(label)
	if err != nil || enc == nil {
		return nil, ""
	}
	if enc == simplifiedchinese.GBK || enc == simplifiedchinese.GB18030 {
		return simplifiedchinese.GB18030, "gb18030"
	}
	if enc == encoding.Replacement {
		// Labels such as hz-gb-2312 or iso-2022-kr: HTML decodes them to a
		// single U+FFFD; we would rather try our own detection.
		return nil, ""
	}
	name, err := htmlindex.Name(enc)
	if err != nil {
		name = label
	}
	return enc, name
}

// metaCharset finds <meta charset> or <meta http-equiv="content-type"
// content="…charset=…"> in the head of the document.
func metaCharset(body []byte) (encoding.Encoding, string) {
	if len(body) > MetaScanLimit {
		body = body[:MetaScanLimit]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil, ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content string
			httpEquiv := false
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch strings.ToLower(string(k)) {
				case "charset":
					cs = string(v)
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
				}
			}
			if cs == "" && httpEquiv {
				if i := indexCharsetParam(content); i >= 0 {
					cs = content[i+len("charset="):]
					if j := strings.IndexAny(cs, "; "); j >= 0 {
						cs = cs[:j]
					}
					cs = strings.Trim(cs, `"'`)
				}
			}
			if enc, n := lookupCharset(cs); enc != nil {
				return enc, n
			}
		}
	}
}

// detectCharset guesses when nothing declares the charset: valid UTF-8 is
// UTF-8; bytes that decode cleanly as GB18030 are GB18030 (the likeliest
// legacy encoding on Chinese government sites); otherwise HTML's own
// detection decides.
func detectCharset(body []byte) (encoding.Encoding, string) {
	if utf8.Valid(trimPartialRune(body)) {
		return unicode.UTF8, "utf-8"
	}
	if cleanGB18030(body) {
		return simplifiedchinese.GB18030, "gb18030"
	}
	enc, name, _ := htmlcharset.DetermineEncoding(body, "")
	if enc == simplifiedchinese.GBK || enc == simplifiedchinese.GB18030 {
		return simplifiedchinese.GB18030, "gb18030"
	}
	return enc, strings.ToLower(name)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b: a
// body cut at a size limit must still be recognised as UTF-8, or its
// Chinese text would be read as GB18030 mojibake.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// cleanGB18030 reports whether body decodes as GB18030 without replacement
// characters. A truncated last character (the body was cut at a limit) is
// forgiven.
func cleanGB18030(body []byte) bool {
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(body)
	if err != nil {
		return false
	}
	n := bytes.Count(out, []byte("\uFFFD"))
	if n == 0 {
		return true
	}
	return n == 1 && bytes.HasSuffix(out, []byte("\uFFFD"))
}

// decodeWith transcodes b and guarantees valid UTF-8 output.
func decodeWith(enc encoding.Encoding, b []byte) ([]byte, error) {
	if enc == nil || enc == unicode.UTF8 || enc == encoding.Nop {
		return bytes.ToValidUTF8(b, []byte("\uFFFD")), nil
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return nil, err
	}
	return bytes.ToValidUTF8(out, []byte("\uFFFD")), nil
}
