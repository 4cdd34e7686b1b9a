package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a place in a configuration file. Line and Column count from 1; a
// zero Line means the problem concerns the whole file (or directory).
type Pos struct {
	File   string
	Line   int
	Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Positions maps the keys of one YAML mapping to where each key was written.
type Positions map[string]Pos

// Problem is one finding of lint: what is wrong, where, and what to do.
type Problem struct {
	Pos     Pos
	What    string
	Fix     string
	Warning bool
}

// String formats the problem as `path:line:column: what — fix`, the form
// editors and CI logs understand.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Pos.String())
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.What)
	if p.Fix != "" {
		b.WriteString(" — ")
		b.WriteString(p.Fix)
	}
	return b.String()
}

// HasErrors reports whether any problem is an error rather than a warning.
func HasErrors(ps []Problem) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return !p.Warning })
}

// Errors returns only the problems that are errors.
func Errors(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// sortProblems orders problems by file, line and column so the output reads
// top to bottom like the files do.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.What, b.What),
		)
	})
}

// reporter collects problems while files are decoded.
type reporter struct {
	problems []Problem
	resolve  map[string]string // Options.Resolve
}

func (r *reporter) errorf(pos Pos, fix, format string, args ...any) {
	r.problems = append(r.problems, Problem{Pos: pos, What: fmt.Sprintf(format, args...), Fix: fix})
}

func (r *reporter) warnf(pos Pos, fix, format string, args ...any) {
	r.problems = append(r.problems, Problem{Pos: pos, What: fmt.Sprintf(format, args...), Fix: fix, Warning: true})
}

// closest returns the candidate nearest to s by edit distance, or "" when
// nothing is near enough to be a plausible typo.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len([]rune(s))/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Refusal is what a command says when dir does not load for its errors
// (the first five, then how to see them all), or "" when problems holds
// none.
func Refusal(dir string, problems []Problem) string {
	errs := Errors(problems)
	if len(errs) == 0 {
		return ""
	}
	msg := fmt.Sprintf("configuration %s has %d error(s) — run `zhizhi config lint` and fix them:", dir, len(errs))
	for i, p := range errs {
		if i == 5 {
			msg += "\n  …"
			break
		}
		msg += "\n  " + p.String()
	}
	return msg
}
