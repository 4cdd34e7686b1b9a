package onboard

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"zhizhi/internal/model"
)

// Suggestion is the wizard's guess at a dept row's binding, with its
// reason and the local departments it considered.
type Suggestion struct {
	Binding     string      `json:"binding"` // pending when there is no clear guess
	LocalDeptID *int64      `json:"local_dept_id,omitempty"`
	Reason      string      `json:"reason,omitempty"`
	Candidates  []Candidate `json:"candidates,omitempty"`
}

// Candidate is a local department a dept row may map to.
type Candidate struct {
	DeptID int64  `json:"dept_id"`
	Name   string `json:"name"`
	// Match says how the name matched: 名称一致, 简称, 包含.
	Match string `json:"match"`
	score int
	// rank orders matches of one score: fewer characters left out is
	// closer (清远市发改局 is nearer 清远市发展和改革局 than
	// 清远市清城区发展和改革局).
	rank int
}

// Match strengths, best first.
const (
	scoreExact    = 3
	scoreAbbrev   = 2
	scoreContains = 1
)

// maxCandidates is how many departments a suggestion lists.
const maxCandidates = 5

// cityLevelWords mark a dept sub-site that is the government's own
// disclosure catalogue rather than one department's.
var cityLevelWords = []string{"市政府信息公开", "政府信息公开", "市本级"}

// Directory is the local departments (local_department) the rows bind to.
type Directory struct {
	byID  map[int64]model.Department
	depts []model.Department
}

// NewDirectory indexes depts (Store.ListDepartments).
func NewDirectory(depts []model.Department) *Directory {
	d := &Directory{byID: map[int64]model.Department{}, depts: depts}
	for _, dept := range depts {
		d.byID[dept.DeptID] = dept
	}
	return d
}

// Department returns the department with id, if there is one.
func (d *Directory) Department(id int64) (model.Department, bool) {
	dept, ok := d.byID[id]
	return dept, ok
}

// Suggest guesses the binding of a dept sub-site named displayName: a
// name that is, or abbreviates, exactly one local department is mapped to
// it; the government's own disclosure catalogue (by its words, or a name
// that is the government itself, a department without parent) is
// city_level; anything else stays pending with the candidates listed.
func (d *Directory) Suggest(displayName string) Suggestion {
	cands := d.match(displayName)
	s := Suggestion{Binding: model.BindingPending, Candidates: cands}
	unique := len(cands) == 1 || len(cands) > 1 && cands[1].rank < cands[0].rank
	if unique && cands[0].score >= scoreAbbrev {
		top := cands[0]
		dept := d.byID[top.DeptID]
		if dept.ParentDeptID != nil {
			id := top.DeptID
			s.Binding, s.LocalDeptID = model.BindingMapped, &id
			s.Reason = fmt.Sprintf("%s：%s（%d）", top.Match, top.Name, top.DeptID)
			return s
		}
		if top.score == scoreExact {
			s.Binding, s.Reason = model.BindingCityLevel,
				fmt.Sprintf("名称即本级政府“%s”，建议标为市本级；如要挂到该部门请改选 mapped", dept.DeptName)
			return s
		}
	}
	for _, w := range cityLevelWords {
		if strings.Contains(normalizeName(displayName), w) {
			s.Binding, s.Reason = model.BindingCityLevel, fmt.Sprintf("名称含“%s”，是政府本级的信息公开目录", w)
			return s
		}
	}
	switch {
	case len(cands) == 0:
		s.Reason = "没有名称相近的本地部门，请手动选择"
	case !unique:
		s.Reason = "有多个名称相近的本地部门，请选择"
	default:
		s.Reason = "只有部分名称相近的本地部门，请确认"
	}
	return s
}

// unitEndings end the name of a government body; a disclosure catalogue's
// title is such a name followed by 政府信息公开 or 信息公开.
var unitEndings = []string{"局", "委", "办", "室", "院", "所", "会", "中心", "政府", "厅", "部", "署", "站", "队"}

// trimDisclosure removes the 政府信息公开 / 信息公开(目录) a catalogue's
// title adds to a body's name: 清远市教育局政府信息公开 → 清远市教育局,
// 清远市人民政府信息公开 → 清远市人民政府.
func trimDisclosure(name string) string {
	name = strings.TrimSpace(name)
	for _, tail := range []string{"目录", "平台", "专栏"} {
		name = strings.TrimSuffix(name, tail)
	}
	if rest, ok := strings.CutSuffix(name, "政府信息公开"); ok && hasUnitEnding(rest) {
		return rest
	}
	if rest, ok := strings.CutSuffix(name, "信息公开"); ok && hasUnitEnding(rest) {
		return rest
	}
	return name
}

func hasUnitEnding(s string) bool {
	for _, e := range unitEndings {
		if strings.HasSuffix(s, e) && len([]rune(s)) > len([]rune(e)) {
			return true
		}
	}
	return false
}

// Search lists departments whose name, short name or full name contains
// or abbreviates q, best first: the search box of the department choice.
func (d *Directory) Search(q string, limit int) []Candidate {
	c := d.match(q)
	if limit > 0 && len(c) > limit {
		c = c[:limit]
	}
	return c
}

// match returns up to maxCandidates departments matching name, best first.
func (d *Directory) match(name string) []Candidate {
	forms := []string{normalizeName(name)}
	if t := normalizeName(trimDisclosure(name)); t != forms[0] {
		forms = append(forms, t)
	}
	if forms[0] == "" {
		return nil
	}
	var out []Candidate
	for _, dept := range d.depts {
		if dept.State == 0 {
			continue // withdrawn: not offered, though a choice of it is still valid
		}
		best, rank := 0, 0
		for _, cand := range []string{dept.DeptName, dept.FullName, dept.ShortName} {
			c := normalizeName(cand)
			for _, n := range forms {
				sc := nameScore(n, c)
				if sc == 0 {
					continue
				}
				r := sc*1000 - abs(len([]rune(c))-len([]rune(n)))
				if r > rank {
					best, rank = sc, r
				}
			}
		}
		if best == 0 {
			continue
		}
		out = append(out, Candidate{DeptID: dept.DeptID, Name: dept.DeptName, Match: matchWords[best], score: best, rank: rank})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].rank != out[j].rank {
			return out[i].rank > out[j].rank
		}
		return out[i].DeptID < out[j].DeptID
	})
	if len(out) > maxCandidates {
		out = out[:maxCandidates]
	}
	return out
}

var matchWords = map[int]string{scoreExact: "名称一致", scoreAbbrev: "简称", scoreContains: "包含"}

// nameScore rates how name (a dept sub-site's name) matches dept (a local
// department's name), both normalized: equal; an abbreviation (清远市发改局
// of 清远市发展和改革局: the same first and last character, the rest in
// order, at least half the length); or one containing the other.
func nameScore(name, dept string) int {
	if dept == "" {
		return 0
	}
	if name == dept {
		return scoreExact
	}
	rn, rd := []rune(name), []rune(dept)
	if len(rn) >= 3 && len(rn) < len(rd) && 2*len(rn) >= len(rd) &&
		rn[0] == rd[0] && rn[len(rn)-1] == rd[len(rd)-1] && subsequence(rn, rd) {
		return scoreAbbrev
	}
	if len(rn) >= 2 && len(rd) >= 2 && (strings.Contains(dept, name) || strings.Contains(name, dept)) {
		return scoreContains
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func subsequence(short, long []rune) bool {
	i := 0
	for _, r := range long {
		if i < len(short) && short[i] == r {
			i++
		}
	}
	return i == len(short)
}

// normalizeName drops white space, punctuation and any parenthesized
// remark (清远市统计局（多部门）→ 清远市统计局).
func normalizeName(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '(', '（', '[', '【':
			depth++
			continue
		case ')', '）', ']', '】':
			if depth > 0 {
				depth--
			}
			continue
		}
		if depth > 0 || unicode.IsSpace(r) || unicode.IsPunct(r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SuggestAll fills every dept row's Suggested and, where the person has
// not chosen yet (Binding empty or pending), starts the choice at it.
func (d *Directory) SuggestAll(sites []Site) {
	for i := range sites {
		for j := range sites[i].Depts {
			row := &sites[i].Depts[j]
			row.Suggested = d.Suggest(row.DisplayName)
			if row.Binding == "" || row.Binding == model.BindingPending {
				row.Binding = row.Suggested.Binding
				row.LocalDeptID = row.Suggested.LocalDeptID
			}
		}
	}
}
