package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// readWork answers the read_work tool: the part of the work's text asked
// for, fenced.
func (t *tools) readWork(ctx context.Context, _ *sdk.CallToolRequest, in ReadWorkInput) (*sdk.CallToolResult, *WorkOutput, error) {
	in.ID = strings.TrimSpace(in.ID)
	switch {
	case in.ID == "":
		return nil, nil, errors.New(`read_work: give the id of a work, as search returns it, e.g. {"id": "w_5f3a9c"}`)
	case in.Revision < 0:
		return nil, nil, fmt.Errorf("read_work: revision %d: revisions count from 1; omit it for the one the release holds", in.Revision)
	case in.Offset < 0:
		return nil, nil, fmt.Errorf("read_work: offset %d: start at 0 or later", in.Offset)
	case in.MaxChars == 0:
		in.MaxChars = DefaultMaxChars
	case in.MaxChars < 1 || in.MaxChars > MaxMaxChars:
		return nil, nil, fmt.Errorf("read_work: max_chars %d is out of range: ask for 1 to %d characters", in.MaxChars, MaxMaxChars)
	}
	w, err := t.work(ctx, in.ID, in.Revision)
	if err != nil {
		return nil, nil, fmt.Errorf("read_work: %w", err)
	}
	text := []rune(w.Text)
	w.TotalChars = len(text)
	if in.Offset > len(text) || (in.Offset == len(text) && in.Offset > 0) {
		return nil, nil, fmt.Errorf("read_work: offset %d is past the end of %s's text, which has %d characters", in.Offset, w.ID, len(text))
	}
	end := min(in.Offset+in.MaxChars, len(text))
	w.Text, w.Offset, w.NextOffset = string(text[in.Offset:end]), in.Offset, 0
	if end < len(text) {
		w.NextOffset = end
	}

	head := fmt.Sprintf("Work %s (revision %d) of release %s: characters %d to %d of %d.", w.ID, w.Revision, w.Release, in.Offset, end, len(text))
	var b strings.Builder
	writeWork(&b, w)
	tail := ""
	if w.NextOffset > 0 {
		tail = fmt.Sprintf(`The text continues: read_work {"id": %q, "revision": %d, "offset": %d}.`, w.ID, w.Revision, w.NextOffset)
	}
	return fenced(head, b.String(), tail), w, nil
}

// work asks the Backend for a work and checks the answer.
func (t *tools) work(ctx context.Context, id string, revision int) (*WorkOutput, error) {
	w, err := t.b.Work(t.ctx(ctx), id, revision)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errors.New("the corpus gave no answer; try again, and tell the operator if it persists")
	}
	w.Marking = marking()
	return w, nil
}

// writeWork writes a work's metadata and text.
func writeWork(b *strings.Builder, w *WorkOutput) {
	writeMeta(b, w.WorkMeta)
	field(b, "retrieved", w.Retrieved)
	field(b, "rights", w.Rights)
	b.WriteString("\n")
	b.WriteString(w.Text)
}

// readWorkResource answers zhizhi://works/{id}: the whole work, fenced.
func (t *tools) readWorkResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	id := ""
	if err == nil && u.Scheme == "zhizhi" && u.Host == "works" {
		id = strings.TrimPrefix(u.Path, "/")
	}
	if id == "" || strings.Contains(id, "/") {
		return nil, fmt.Errorf("%s: a work's URI is zhizhi://works/ID, with ID as search returns it", uri)
	}
	w, err := t.work(ctx, id, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	var b strings.Builder
	writeWork(&b, w)
	f := newFence()
	head := fmt.Sprintf("Work %s (revision %d) of release %s.\n", w.ID, w.Revision, w.Release)
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
		URI: uri, MIMEType: "text/plain", Text: head + f.wrap(b.String()),
		Meta: sdk.Meta{MetaUntrusted: true, MetaFence: f.nonce, MetaTrust: TrustNote},
	}}}, nil
}
