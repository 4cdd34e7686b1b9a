package adapter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// lookup follows a dotted path ("data.list", "items.0.title") through
// decoded JSON. An empty path is the value itself.
func lookup(v any, path string) (any, bool) {
	if path == "" || path == "." {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			nv, ok := x[part]
			if !ok {
				return nil, false
			}
			v = nv
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// scalar renders a JSON scalar as text; objects and arrays give "".
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	default:
		return ""
	}
}

// decodeJSON decodes a JSON document keeping numbers exact. A body that is
// HTML (a challenge or error page where JSON was expected) gets a clear
// error instead of a parser complaint.
func decodeJSON(body []byte) (any, error) {
	trimmed := strings.TrimLeft(string(body[:min(len(body), 512)]), " \t\r\n\ufeff")
	if strings.HasPrefix(trimmed, "<") {
		return nil, fmt.Errorf("expected JSON, got an HTML page (a challenge or error page?)")
	}
	d := json.NewDecoder(strings.NewReader(strings.TrimPrefix(string(body), "\ufeff")))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("expected JSON: %w", err)
	}
	return v, nil
}
