package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"zhizhi/internal/export"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Bounds of an export page over the API; `zhizhi export` streams more.
const (
	defaultExportPage = 100
	maxExportPage     = 500
)

type exportRequest struct {
	Since    string `json:"since"`
	Status   string `json:"status"`
	DeptID   *int64 `json:"dept_id"`
	Category string `json:"category"`
	SiteRole string `json:"site_role"`
	Limit    *int   `json:"limit"`
	Mark     *bool  `json:"mark"`
}

type exportResponse struct {
	Articles   []json.RawMessage `json:"articles"`
	Count      int               `json:"count"`
	NextCursor string            `json:"next_cursor"`
	// More: the page was full, so asking again with next_cursor may return
	// more; a shorter page means caught up for now.
	More bool `json:"more"`
}

// exportCreate hands RAG the next page of the incremental export: the same
// lines, the same cursor and the same marking of exported_to_rag_at as
// `zhizhi export`, so a client may switch between the two.
func (h *handler) exportCreate(w http.ResponseWriter, r *http.Request) {
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	var req exportRequest
	if err := decodeJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	opts := export.Options{Filter: store.ExportFilter{SinceCursor: req.Since, Status: req.Status, DeptID: req.DeptID,
		Category: req.Category, SiteRole: req.SiteRole}, Max: defaultExportPage, Mark: true, Now: h.now().UTC()}
	switch {
	case req.Since != "" && !store.ValidExportCursor(req.Since):
		h.fail(w, r, invalid("since: not an export cursor; pass next_cursor from the previous export unchanged, or leave it out to start at the beginning"))
		return
	case req.Status != "" && !model.Contains(articleStatus, req.Status):
		h.fail(w, r, invalid("status %q: use raw, ready or failed", req.Status))
		return
	case req.SiteRole != "" && !model.Contains(siteRoles, req.SiteRole):
		h.fail(w, r, invalid("site_role %q: use one of %v", req.SiteRole, siteRoles))
		return
	case req.DeptID != nil && *req.DeptID <= 0:
		h.fail(w, r, invalid("dept_id: use an id from 1"))
		return
	case req.Limit != nil && (*req.Limit < 1 || *req.Limit > maxExportPage):
		h.fail(w, r, invalid("limit: use a whole number from 1 to %d", maxExportPage))
		return
	}
	if req.Limit != nil {
		opts.Max = *req.Limit
	}
	if req.Mark != nil {
		opts.Mark = *req.Mark
	}
	var buf bytes.Buffer
	n, next, err := export.Write(r.Context(), h.st, opts, &buf)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := exportResponse{Articles: make([]json.RawMessage, 0, n), Count: n, NextCursor: next, More: n == opts.Max}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		out.Articles = append(out.Articles, json.RawMessage(bytes.Clone(sc.Bytes())))
	}
	if err := sc.Err(); err != nil {
		h.fail(w, r, err)
		return
	}
	if opts.Mark && n > 0 {
		err := h.st.RecordAudit(r.Context(), &store.AuditEntry{Actor: principal(r).Actor(), Action: "article.export",
			ObjectType: "article", Detail: fmt.Sprintf("导出并标记 %d 篇文章；起点 %q，下一起点 %q", n, req.Since, next)})
		if err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.ok(w, r, out)
}
