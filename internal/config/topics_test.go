package config

import (
	"slices"
	"testing"
)

func TestTopicsTags(t *testing.T) {
	topics := NewTopics([]string{"规划计划", "规章文件", "发展"}, map[string][]string{
		"规划计划": {"规划计划", "规划与计划", "发展规划", "五年规划"},
		"规章文件": {"规章文件", "规章制度", "规范性文件"},
		"发展":   {"发展规划"}, // lint refuses this; Tags still answers in file order
	})
	tests := []struct {
		name, column string
		want         []string
	}{
		{"exact synonym", "规划与计划", []string{"规划计划"}},
		{"trailing space", "规划计划 ", []string{"规划计划"}},
		{"ideographic spaces", "\u3000规章\u3000制度\u3000", []string{"规章文件"}},
		{"tag name itself", "发展", []string{"发展"}},
		{"two tags in file order", "发展规划", []string{"规划计划", "发展"}},
		{"no match", "招聘公告", nil},
		{"substring is not a match", "规划", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := topics.Tags(tc.column); !slices.Equal(got, tc.want) {
				t.Errorf("Tags(%q) = %v, want %v", tc.column, got, tc.want)
			}
		})
	}
}

func TestTopicsLoadedFromFile(t *testing.T) {
	b, _ := Load("testdata/lint_good")
	if got := b.Topics.Tags("规划计划 "); !slices.Equal(got, []string{"规划计划"}) {
		t.Errorf("Tags = %v", got)
	}
	if got := b.Topics.List(); !slices.Equal(got, []string{"规划计划", "规章文件", "招聘信息"}) {
		t.Errorf("List = %v", got)
	}
}
