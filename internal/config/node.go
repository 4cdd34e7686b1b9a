package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// forbiddenKeys are never written by hand: the system assigns a target's
// cron from a hash of its target_code.
var forbiddenKeys = []string{"schedule", "schedule_cron", "cron"}

const cronFix = "remove it: zhizhi assigns each target's schedule itself, from a hash of its target_code"

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAMLFile reads one YAML document from path. A read or syntax error is
// reported with its line and nil is returned; an empty file yields nil
// without a problem so the caller can say what it expected.
func parseYAMLFile(r *reporter, path string) (*yaml.Node, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		r.errorf(Pos{File: path}, "check the file exists and is readable", "cannot read file: %v", err)
		return nil, false
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		r.errorf(yamlErrorPos(path, err), "fix the YAML syntax (indent with spaces, quote values holding ': ' or '#')",
			"malformed YAML: %s", yamlErrorText(err))
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		r.errorf(Pos{File: path, Line: extra.Line, Column: extra.Column}, "keep one document per file (remove the '---')",
			"a second YAML document")
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0], true
	}
	return nil, true
}

func yamlErrorPos(path string, err error) Pos {
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Pos{File: path, Line: line, Column: 1}
	}
	return Pos{File: path, Line: 1, Column: 1}
}

func yamlErrorText(err error) string {
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// resolve follows YAML aliases so anchors work anywhere.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!bool":
			return "a boolean"
		case "!!float":
			return "a number"
		case "!!null":
			return "empty"
		}
		return "a scalar"
	}
	return "something else"
}

// mapping is one decoded YAML mapping: its keys checked against a schema,
// with positions kept so every later check can point at the source.
type mapping struct {
	r     *reporter
	file  string
	node  *yaml.Node
	what  string // e.g. "site", "target gd_zcwj"
	keys  map[string]*yaml.Node
	vals  map[string]*yaml.Node
	alias map[string]string // canonical key → key as written, when an alias was used
}

// readMapping checks n is a mapping whose keys are all in known (or an
// alias of one) and not repeated. Unknown keys are reported with the closest
// known key. aliases maps an accepted spelling to its canonical key.
// It never returns nil: a wrong node yields an empty mapping, so callers need
// no nil checks and only one problem is reported.
func (r *reporter) readMapping(file string, n *yaml.Node, what string, known []string, aliases map[string]string) *mapping {
	m := &mapping{r: r, file: file, node: n, what: what,
		keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}, alias: map[string]string{}}
	n = resolve(n)
	if n == nil {
		return m
	}
	m.node = n
	if n.Kind != yaml.MappingNode {
		if n.ShortTag() != "!!null" {
			r.errorf(m.pos(n), "write it as `key: value` lines", "%s must be a mapping, got %s", what, kindName(n))
		}
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			r.errorf(m.pos(k), "write the keys out", "merge keys (<<) are not supported in %s", what)
			continue
		}
		name := k.Value
		if k.Kind != yaml.ScalarNode {
			r.errorf(m.pos(k), "use plain names as keys", "a key of %s is %s", what, kindName(k))
			continue
		}
		canon := name
		if a, ok := aliases[name]; ok {
			canon = a
		}
		if slices.Contains(forbiddenKeys, name) {
			r.errorf(m.pos(k), cronFix, "%s is written by hand in %s", name, what)
			continue
		}
		if !slices.Contains(known, canon) {
			fix := "remove it"
			if c := closest(name, known); c != "" {
				fix = fmt.Sprintf("did you mean %s?", c)
			} else {
				fix = "remove it; known keys: " + strings.Join(known, ", ")
			}
			r.errorf(m.pos(k), fix, "unknown key %q in %s", name, what)
			continue
		}
		if prev, dup := m.keys[canon]; dup {
			r.errorf(m.pos(k), fmt.Sprintf("keep one (the first is at line %d)", prev.Line), "key %s repeated in %s", name, what)
			continue
		}
		m.keys[canon] = k
		m.vals[canon] = v
		if canon != name {
			m.alias[canon] = name
		}
	}
	return m
}

func (m *mapping) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: m.file}
	}
	return Pos{File: m.file, Line: n.Line, Column: n.Column}
}

// start is where the mapping begins: missing keys are reported there.
func (m *mapping) start() Pos { return m.pos(m.node) }

func (m *mapping) has(key string) bool { _, ok := m.vals[key]; return ok }

// keyPos is the position of key, or of the mapping when key is absent.
func (m *mapping) keyPos(key string) Pos {
	if k, ok := m.keys[key]; ok {
		return m.pos(k)
	}
	return m.start()
}

// valPos is the position of key's value, or of the mapping when absent.
func (m *mapping) valPos(key string) Pos {
	if v, ok := m.vals[key]; ok {
		return m.pos(v)
	}
	return m.start()
}

// name is the key as the user wrote it (an alias, or the canonical name).
func (m *mapping) name(key string) string {
	if a, ok := m.alias[key]; ok {
		return a
	}
	return key
}

func (m *mapping) positions() Positions {
	ps := make(Positions, len(m.keys))
	for k, n := range m.keys {
		ps[k] = m.pos(n)
	}
	return ps
}

func (m *mapping) missing(key, example string) {
	m.r.errorf(m.start(), fmt.Sprintf("add `%s: %s`", key, example), "%s is missing required key %s", m.what, key)
}

// str returns a scalar string value. Numbers are accepted as their text
// (column ids are often written unquoted); booleans, lists and mappings are
// wrong types. When required and absent or empty, it says so.
func (m *mapping) str(key string, required bool, example string) string {
	v, ok := m.vals[key]
	if !ok {
		if required {
			m.missing(key, example)
		}
		return ""
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!bool" {
		m.r.errorf(m.pos(v), fmt.Sprintf("write it as a string, e.g. `%s: %s`", m.name(key), example),
			"%s of %s must be a string, got %s", m.name(key), m.what, kindName(v))
		return ""
	}
	if v.ShortTag() == "!!null" || strings.TrimSpace(v.Value) == "" {
		if required {
			m.r.errorf(m.pos(v), fmt.Sprintf("fill it in, e.g. `%s: %s`", m.name(key), example), "%s of %s is empty", m.name(key), m.what)
		}
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// integer returns an integer value; ok is false when absent or wrong.
func (m *mapping) integer(key string) (n int64, ok bool) {
	v, present := m.vals[key]
	if !present {
		return 0, false
	}
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" {
		n, err := strconv.ParseInt(v.Value, 0, 64)
		if err == nil {
			return n, true
		}
	}
	m.r.errorf(m.pos(v), "write a whole number without quotes", "%s of %s must be an integer, got %s %q", m.name(key), m.what, kindName(v), v.Value)
	return 0, false
}

// boolean returns a boolean value, def when absent.
func (m *mapping) boolean(key string, def bool) bool {
	v, ok := m.vals[key]
	if !ok {
		return def
	}
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		b, err := strconv.ParseBool(strings.ToLower(v.Value))
		if err == nil {
			return b
		}
	}
	m.r.errorf(m.pos(v), "write true or false", "%s of %s must be true or false, got %s %q", m.name(key), m.what, kindName(v), v.Value)
	return def
}

// strList returns a list of strings; a single string is accepted as a list
// of one.
func (m *mapping) strList(key string) []string {
	v, ok := m.vals[key]
	if !ok {
		return nil
	}
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
		return []string{v.Value}
	}
	if v.Kind != yaml.SequenceNode {
		m.r.errorf(m.pos(v), "write a list, e.g. [\"a\", \"b\"]", "%s of %s must be a list of strings, got %s", m.name(key), m.what, kindName(v))
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for _, item := range v.Content {
		item = resolve(item)
		if item.Kind != yaml.ScalarNode || item.ShortTag() == "!!null" || item.ShortTag() == "!!bool" {
			m.r.errorf(m.pos(item), "write each item as a string", "an item of %s in %s must be a string, got %s", m.name(key), m.what, kindName(item))
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

// seq returns the items of a list value.
func (m *mapping) seq(key string) []*yaml.Node {
	v, ok := m.vals[key]
	if !ok {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		if v.ShortTag() != "!!null" {
			m.r.errorf(m.pos(v), "write a list: one `- ` item per entry", "%s of %s must be a list, got %s", m.name(key), m.what, kindName(v))
		}
		return nil
	}
	out := make([]*yaml.Node, len(v.Content))
	for i, n := range v.Content {
		out[i] = resolve(n)
	}
	return out
}

// oneOf checks a string value against the allowed values.
func (m *mapping) oneOf(key, val string, allowed []string) bool {
	if val == "" || slices.Contains(allowed, val) {
		return true
	}
	fix := "use one of: " + strings.Join(allowed, ", ")
	if c := closest(val, allowed); c != "" {
		fix = fmt.Sprintf("did you mean %s? (one of: %s)", c, strings.Join(allowed, ", "))
	}
	m.r.errorf(m.valPos(key), fix, "%s %q is not a valid value", m.name(key), val)
	return false
}
