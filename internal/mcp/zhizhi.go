package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"zhizhi/internal/acquire"
	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/search"
)

// Zhizhi is the Backend over the corpus's active release and the
// acquisition API.
type Zhizhi struct {
	Corpus *corpus.Service
	// Acquire is the acquisition API's own mux (acquire.API.Handler): it
	// reads the caller from the request's context, so a fetch runs as the
	// agent's key, within its budget, through the polite client. Nil: the
	// fetch tool answers that fetching is not available here.
	Acquire http.Handler
}

var _ Backend = (*Zhizhi)(nil)

func (z *Zhizhi) active(ctx context.Context) (*corpus.Release, error) {
	r, err := z.Corpus.Active(ctx)
	if errors.Is(err, corpus.ErrNoActive) {
		return nil, errors.New("no corpus release is active yet: an administrator builds, verifies and activates one (zhizhi release build)")
	}
	if err != nil {
		return nil, errors.New("the corpus could not be read just now; try again later")
	}
	return r, nil
}

func meta(e *corpus.WorkEntry) WorkMeta {
	var a corpus.Attrs
	_ = json.Unmarshal(e.Attrs, &a)
	dept := a.DeptName
	return WorkMeta{ID: e.ID, Revision: e.Rev, Title: e.Title, Publisher: e.Publisher, Dept: dept, Channel: a.Channel,
		DocNo: e.DocNo, Published: e.PublishDate, URL: e.URL}
}

// Search answers from the active release.
func (z *Zhizhi) Search(ctx context.Context, in SearchInput) (*SearchOutput, error) {
	r, err := z.active(ctx)
	if err != nil {
		return nil, err
	}
	q := search.Query{Text: in.Query, Channel: in.Channel, Publisher: in.Publisher, DocNo: in.DocNo, From: in.From,
		To: in.To, Limit: in.Limit}
	if in.Dept != "" {
		// Agents name a department; the index filters by its code.
		q.DeptCode = deptCode(r, in.Dept)
	}
	res, err := r.Search(ctx, q)
	var qe *search.QueryError
	if errors.As(err, &qe) {
		return nil, fmt.Errorf("the query was refused: %s", qe.Msg)
	}
	if err != nil {
		return nil, errors.New("the search failed; try again later")
	}
	out := &SearchOutput{Release: r.Version, Total: res.Total, Hits: []SearchHit{}}
	for _, h := range res.Hits {
		e, ok := r.Work(h.ID)
		if !ok {
			continue
		}
		out.Hits = append(out.Hits, SearchHit{WorkMeta: meta(e), Snippet: h.Snippet})
	}
	return out, nil
}

// deptCode finds the code of a department by its name or code among the
// release's works; the name itself when none matches (no hits then).
func deptCode(r *corpus.Release, dept string) string {
	for i := range r.Entries {
		var a corpus.Attrs
		_ = json.Unmarshal(r.Entries[i].Attrs, &a)
		if a.DeptName == dept || a.DeptCode == dept {
			return a.DeptCode
		}
	}
	return dept
}

// Work returns a work of the active release; only the revision it holds.
func (z *Zhizhi) Work(ctx context.Context, id string, revision int) (*WorkOutput, error) {
	r, err := z.active(ctx)
	if err != nil {
		return nil, err
	}
	e, ok := r.Work(id)
	if !ok {
		return nil, fmt.Errorf("work %s is not in the active release %s; search finds the works it holds", id, r.Version)
	}
	if revision != 0 && revision != e.Rev {
		return nil, fmt.Errorf("the active release %s holds revision %d of work %s, not %d", r.Version, e.Rev, id, revision)
	}
	text, err := r.Text(e)
	if err != nil {
		return nil, errors.New("the work's text could not be read; an administrator should run zhizhi release verify")
	}
	return &WorkOutput{Release: r.Version, WorkMeta: meta(e), Retrieved: e.FetchedAt.Format(time.RFC3339),
		Rights: "政府信息公开（public government information）", Text: text}, nil
}

// Cite formats a work's citation as the active release holds it.
func (z *Zhizhi) Cite(ctx context.Context, in CiteInput) (*CiteOutput, error) {
	r, err := z.active(ctx)
	if err != nil {
		return nil, err
	}
	e, ok := r.Work(in.ID)
	if !ok {
		return nil, fmt.Errorf("work %s is not in the active release %s", in.ID, r.Version)
	}
	if in.Revision != 0 && in.Revision != e.Rev {
		return nil, fmt.Errorf("the active release %s holds revision %d of work %s, not %d", r.Version, e.Rev, in.ID, in.Revision)
	}
	c, err := r.Citation(in.ID, in.Format)
	if err != nil {
		return nil, fmt.Errorf("the citation could not be made: %v", err)
	}
	return &CiteOutput{Release: r.Version, ID: e.ID, Revision: e.Rev, Format: in.Format, Citation: c, URL: e.URL}, nil
}

// Fetch gets a page through the acquisition API as p.
func (z *Zhizhi) Fetch(ctx context.Context, p *auth.Principal, in FetchInput) (*FetchOutput, error) {
	if z.Acquire == nil {
		return nil, errors.New("fetching is not available from this zhizhi; ask the operator to run zhizhi serve")
	}
	body, _ := json.Marshal(map[string]any{"url": in.URL, "formats": in.Formats, "onlyMainContent": true})
	req := httptest.NewRequestWithContext(auth.WithPrincipal(ctx, p), http.MethodPost, "/v1/fetch", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	z.Acquire.ServeHTTP(rec, req)
	var ans struct {
		Success bool              `json:"success"`
		Data    *acquire.Document `json:"data"`
		Error   string            `json:"error"`
		Code    string            `json:"code"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		return nil, errors.New("the acquisition API gave an answer that could not be read")
	}
	if !ans.Success || ans.Data == nil {
		return nil, fmt.Errorf("fetch refused (%s): %s", ans.Code, ans.Error)
	}
	d := ans.Data
	out := &FetchOutput{URL: in.URL, FinalURL: d.Acquisition.FinalURL, StatusCode: d.Metadata.StatusCode,
		ContentType: d.Metadata.ContentType, FetchedAt: d.Acquisition.FetchedAt, CacheState: d.Metadata.CacheState,
		Title: d.Metadata.Title, Publisher: d.Metadata.Publisher, DocNo: d.Metadata.DocNo, Published: d.Metadata.PublishDate}
	if d.Markdown != nil {
		out.Markdown = *d.Markdown
	}
	if d.Text != nil {
		out.Text = *d.Text
	}
	return out, nil
}
