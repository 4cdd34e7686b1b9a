package pages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"
)

// PlainText reports whether s is text a person could have typed: valid
// UTF-8 without control characters (C0, DEL, C1). A NUL or an escape in a
// search word is never meant, and left in it a filter can stop filtering
// (a NUL cut the card search short and every card matched). multiline lets
// tab, newline and carriage return through, as a textarea sends them.
func PlainText(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsControl(r) {
			continue
		}
		if multiline && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		return false
	}
	return true
}

// BadParam returns the first name (in name order) among v whose name or any
// value is not PlainText, and whether there is one. The console, the portal
// and the API all check their query parameters with it, so a control
// character is refused the same way everywhere.
func BadParam(v url.Values, multiline bool) (string, bool) {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !PlainText(name, false) {
			return name, true
		}
		for _, val := range v[name] {
			if !PlainText(val, multiline) {
				return name, true
			}
		}
	}
	return "", false
}

// BadParamMessage says in the readers' words which parameter was refused and
// what to do.
func BadParamMessage(name string) string {
	if !PlainText(name, false) {
		name = "（无法显示）"
	} else {
		name = "「" + name + "」"
	}
	return "查询参数" + name + "含有控制字符或无效编码，无法处理。请删去这些字符后重试。"
}

// BadJSONText returns the place (such as "urls[1]") of the first string in
// a JSON document, or key of one of its objects, that is not PlainText, and
// whether there is one; strings under the keys multiline names may hold
// tab and line breaks. Every JSON body the API and the acquisition API take
// is checked with it, so a control character is refused the same way
// everywhere. A document that is not JSON is left to the decoder to refuse.
func BadJSONText(body []byte, multiline map[string]bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	return badJSONValue("", "", v, multiline)
}

func badJSONValue(place, key string, v any, multiline map[string]bool) (string, bool) {
	switch v := v.(type) {
	case string:
		if !PlainText(v, multiline[key]) {
			return place, true
		}
	case []any:
		for i, e := range v {
			if p, bad := badJSONValue(fmt.Sprintf("%s[%d]", place, i), key, e, multiline); bad {
				return p, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if place != "" {
				p = place + "." + k
			}
			if !PlainText(k, false) {
				return p, true
			}
			if p, bad := badJSONValue(p, k, v[k], multiline); bad {
				return p, true
			}
		}
	}
	return "", false
}

// PrintablePlace is a place BadJSONText returned as it can be shown in an
// answer: a key that itself holds a control character is not repeated.
func PrintablePlace(place string) string {
	if !PlainText(place, false) {
		return "a key of the body"
	}
	return place
}
