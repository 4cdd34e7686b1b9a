package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cite answers the cite tool.
func (t *tools) cite(ctx context.Context, _ *sdk.CallToolRequest, in CiteInput) (*sdk.CallToolResult, *CiteOutput, error) {
	in.ID, in.Format = strings.TrimSpace(in.ID), strings.ToLower(strings.TrimSpace(in.Format))
	if in.Format == "" {
		in.Format = CiteFormats[0]
	}
	switch {
	case in.ID == "":
		return nil, nil, errors.New(`cite: give the id of a work, as search returns it, e.g. {"id": "w_5f3a9c"}`)
	case in.Revision < 0:
		return nil, nil, fmt.Errorf("cite: revision %d: revisions count from 1; omit it for the one the release holds", in.Revision)
	case !slices.Contains(CiteFormats, in.Format):
		return nil, nil, fmt.Errorf("cite: format %q: choose %s", in.Format, strings.Join(CiteFormats, ", "))
	}
	out, err := t.b.Cite(t.ctx(ctx), in)
	if err != nil {
		return nil, nil, fmt.Errorf("cite: %w", err)
	}
	if out == nil {
		return nil, nil, errors.New("cite: the corpus gave no answer; try again, and tell the operator if it persists")
	}
	if out.Format == "" {
		out.Format = in.Format
	}
	out.Marking = marking()
	head := fmt.Sprintf("Citation of work %s (revision %d) of release %s, %s:", out.ID, out.Revision, out.Release, out.Format)
	return fenced(head, out.Citation, ""), out, nil
}
