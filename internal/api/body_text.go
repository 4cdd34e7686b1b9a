package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"zhizhi/internal/pages"
)

// multilineFields are the body fields that are prose a person may write
// over several lines (a card's summary, a reason), as the console's
// textareas are: tab, newline and carriage return pass there.
var multilineFields = map[string]bool{"summary": true, "reason": true}

// badBodyText returns the place (such as "urls[1]") of the first string in
// a JSON body, or key of one of its objects, that holds a control
// character, and whether there is one. Such text is never meant and is
// refused before anything reads it; a body that is not JSON is left to the
// decoder to refuse.
func badBodyText(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	return badText("", "", v)
}

func badText(place, key string, v any) (string, bool) {
	switch v := v.(type) {
	case string:
		if !pages.PlainText(v, multilineFields[key]) {
			return place, true
		}
	case []any:
		for i, e := range v {
			if p, bad := badText(fmt.Sprintf("%s[%d]", place, i), key, e); bad {
				return p, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if place != "" {
				p = place + "." + k
			}
			if !pages.PlainText(k, false) {
				return p, true
			}
			if p, bad := badText(p, k, v[k]); bad {
				return p, true
			}
		}
	}
	return "", false
}

// printable is place as it can be shown in an answer: a key that itself
// holds a control character is not repeated.
func printable(place string) string {
	if !pages.PlainText(place, false) {
		return "a key of the body"
	}
	return place
}
