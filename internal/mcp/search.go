package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// search answers the search tool.
func (t *tools) search(ctx context.Context, _ *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, *SearchOutput, error) {
	in, err := checkSearch(in)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	out, err := t.b.Search(t.ctx(ctx), in)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	if out == nil {
		return nil, nil, errors.New("search: the corpus gave no answer; try again, and tell the operator if it persists")
	}
	if out.Hits == nil {
		out.Hits = []SearchHit{}
	}
	out.Marking = marking()

	head := fmt.Sprintf("Release %s: %s", out.Release, count(out.Total, "match", "matches"))
	switch {
	case out.Total == 0:
		head = fmt.Sprintf("Release %s: no work matches.", out.Release)
	case len(out.Hits) < out.Total:
		head += fmt.Sprintf(", showing the first %d.", len(out.Hits))
	default:
		head += "."
	}
	var b strings.Builder
	for i, h := range out.Hits {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%d] id: %s (revision %d)\n", i+1, h.ID, h.Revision)
		writeMeta(&b, h.WorkMeta)
		field(&b, "snippet", h.Snippet)
	}
	tail := ""
	if len(out.Hits) > 0 {
		tail = fmt.Sprintf(`Read a work with read_work {"id": %q}; cite it with cite {"id": %q}.`, out.Hits[0].ID, out.Hits[0].ID)
	}
	return fenced(head, b.String(), tail), out, nil
}

// checkSearch trims in, fills the default limit and refuses what the
// corpus cannot answer.
func checkSearch(in SearchInput) (SearchInput, error) {
	for _, f := range []*string{&in.Query, &in.Dept, &in.Channel, &in.Publisher, &in.DocNo, &in.From, &in.To} {
		*f = strings.TrimSpace(*f)
	}
	if in.Query == "" && in.Dept == "" && in.Channel == "" && in.Publisher == "" && in.DocNo == "" && in.From == "" && in.To == "" {
		return in, errors.New("give a query (e.g. 高标准农田) or a filter (dept, channel, publisher, docno, from, to)")
	}
	var from, to time.Time
	for _, d := range []struct {
		name string
		s    string
		t    *time.Time
	}{{"from", in.From, &from}, {"to", in.To, &to}} {
		if d.s == "" {
			continue
		}
		v, err := time.Parse(time.DateOnly, d.s)
		if err != nil {
			return in, fmt.Errorf("%s %q is not a date: write it as YYYY-MM-DD, e.g. 2024-03-01", d.name, d.s)
		}
		*d.t = v
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return in, fmt.Errorf("from %s is after to %s: swap them", in.From, in.To)
	}
	switch {
	case in.Limit == 0:
		in.Limit = DefaultLimit
	case in.Limit < 1 || in.Limit > MaxLimit:
		return in, fmt.Errorf("limit %d is out of range: ask for 1 to %s works", in.Limit, strconv.Itoa(MaxLimit))
	}
	return in, nil
}

// count is "1 match" or "2 matches".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
