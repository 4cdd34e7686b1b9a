package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Topics is config/topic_synonyms.yaml: topic tag → column-name synonyms
// , used to tag columns in master_column_registry.
type Topics struct {
	order    []string            // tags in file order
	synonyms map[string][]string // tag → synonyms as written
	index    map[string][]string // normalized name → tags
}

// NewTopics builds Topics from tag → synonyms. Tags keep the order given.
func NewTopics(tags []string, synonyms map[string][]string) Topics {
	t := Topics{synonyms: map[string][]string{}, index: map[string][]string{}}
	for _, tag := range tags {
		if _, dup := t.synonyms[tag]; dup {
			continue
		}
		t.order = append(t.order, tag)
		t.synonyms[tag] = append([]string(nil), synonyms[tag]...)
		t.add(tag, tag)
		for _, s := range synonyms[tag] {
			t.add(s, tag)
		}
	}
	return t
}

func (t *Topics) add(name, tag string) {
	k := normalizeTopic(name)
	if k == "" || slices.Contains(t.index[k], tag) {
		return
	}
	t.index[k] = append(t.index[k], tag)
}

// normalizeTopic removes every white-space rune, including the ideographic
// space U+3000 that Chinese sites pad names with, so "规划计划 " and
// "规划　计划" match "规划计划".
func normalizeTopic(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u3000' || r == '\ufeff' {
			return -1
		}
		return r
	}, s)
}

// Tags returns the topic tags whose name or synonyms match columnName once
// white space is removed, in the order the tags appear in the file.
func (t Topics) Tags(columnName string) []string {
	tags := t.index[normalizeTopic(columnName)]
	if len(tags) == 0 {
		return nil
	}
	out := make([]string, 0, len(tags))
	for _, tag := range t.order {
		if slices.Contains(tags, tag) {
			out = append(out, tag)
		}
	}
	return out
}

// List returns every tag in file order.
func (t Topics) List() []string { return slices.Clone(t.order) }

// Synonyms returns the synonyms listed under tag.
func (t Topics) Synonyms(tag string) []string { return slices.Clone(t.synonyms[tag]) }

// readTopics decodes topic_synonyms.yaml: a mapping of tag → list of
// strings, where no synonym may belong to two tags.
func (r *reporter) readTopics(path string, root *yaml.Node) Topics {
	root = resolve(root)
	if root == nil {
		return NewTopics(nil, nil)
	}
	if root.Kind != yaml.MappingNode {
		r.errorf(Pos{File: path, Line: root.Line, Column: root.Column}, "write `tag:` lines each followed by a list of synonyms",
			"topic_synonyms must be a mapping of tag to synonyms, got %s", kindName(root))
		return NewTopics(nil, nil)
	}
	var order []string
	syn := map[string][]string{}
	owner := map[string]string{} // normalized synonym → tag
	ownerAt := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := resolve(root.Content[i]), resolve(root.Content[i+1])
		kp := Pos{File: path, Line: k.Line, Column: k.Column}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			r.errorf(kp, "use the topic name as the key", "topic tag must be a string, got %s", kindName(k))
			continue
		}
		tag := strings.TrimSpace(k.Value)
		if _, dup := syn[tag]; dup {
			r.errorf(kp, "merge the two lists", "topic %s appears twice", tag)
			continue
		}
		if v.Kind != yaml.SequenceNode {
			r.errorf(Pos{File: path, Line: v.Line, Column: v.Column}, "write a list: one `- synonym` per line",
				"synonyms of topic %s must be a list of strings, got %s", tag, kindName(v))
			continue
		}
		order = append(order, tag)
		syn[tag] = []string{}
		claim := func(name string, line int, p Pos) {
			n := normalizeTopic(name)
			if prev, ok := owner[n]; ok && prev != tag {
				r.errorf(p, fmt.Sprintf("keep it under one tag (it is also under %s at line %d)", prev, ownerAt[n]),
					"synonym %q is listed under two topics, %s and %s", name, prev, tag)
				return
			}
			owner[n], ownerAt[n] = tag, line
		}
		claim(tag, k.Line, kp)
		for _, item := range v.Content {
			item = resolve(item)
			ip := Pos{File: path, Line: item.Line, Column: item.Column}
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" || strings.TrimSpace(item.Value) == "" {
				r.errorf(ip, "write each synonym as text", "a synonym of topic %s must be a string, got %s", tag, kindName(item))
				continue
			}
			claim(item.Value, item.Line, ip)
			syn[tag] = append(syn[tag], item.Value)
		}
	}
	return NewTopics(order, syn)
}
