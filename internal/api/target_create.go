package api

import (
	"errors"
	"fmt"
	"net/http"

	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// targetCreateRequest is openapi.yaml's TargetCreate: the service's Input
// with the site named by id, like everywhere in the API, and enabled
// unless the caller says otherwise.
type targetCreateRequest struct {
	SiteID              int64  `json:"site_id"`
	TargetCode          string `json:"target_code"`
	TargetName          string `json:"target_name"`
	EntryURL            string `json:"entry_url"`
	SampleArticleURL    string `json:"sample_article_url"`
	DeptPath            string `json:"dept_path"`
	ColumnID            string `json:"column_id"`
	DeptBinding         string `json:"dept_binding"`
	LocalDeptID         *int64 `json:"local_dept_id"`
	ChannelName         string `json:"channel_name"`
	ChannelPath         string `json:"channel_path"`
	ContentCategory     string `json:"content_category"`
	ContentSubcategory  string `json:"content_subcategory"`
	Schedule            string `json:"schedule"`
	ExpectedCadenceDays int    `json:"expected_cadence_days"`
	IntervalSec         int    `json:"interval_sec"`
	Enabled             *bool  `json:"enabled"`
}

// createInput reads the body of a create (or its preview) into the
// service's Input.
func (h *handler) createInput(w http.ResponseWriter, r *http.Request) (target.Input, error) {
	var req targetCreateRequest
	if err := newQuery(r).check(); err != nil {
		return target.Input{}, err
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return target.Input{}, err
	}
	refuse := func(msg string) error {
		return &target.InputError{Problems: []target.FieldError{{Field: "site_code", Message: msg}}}
	}
	if req.SiteID <= 0 {
		return target.Input{}, refuse("必填：目标所属站点的 id（见 GET /api/v1/sites）")
	}
	site, err := h.st.SiteByID(r.Context(), req.SiteID)
	if errors.Is(err, store.ErrNotFound) {
		return target.Input{}, refuse(fmt.Sprintf("站点 %d 不存在（见 GET /api/v1/sites）", req.SiteID))
	}
	if err != nil {
		return target.Input{}, err
	}
	in := target.Input{SiteCode: site.SiteCode, TargetCode: req.TargetCode, TargetName: req.TargetName,
		EntryURL: req.EntryURL, SampleArticleURL: req.SampleArticleURL, DeptPath: req.DeptPath, ColumnID: req.ColumnID,
		DeptBinding: req.DeptBinding, LocalDeptID: req.LocalDeptID, ChannelName: req.ChannelName,
		ChannelPath: req.ChannelPath, ContentCategory: req.ContentCategory, ContentSubcategory: req.ContentSubcategory,
		Schedule: req.Schedule, ExpectedCadenceDays: req.ExpectedCadenceDays, IntervalSec: req.IntervalSec, Enabled: true}
	if req.Enabled != nil {
		in.Enabled = *req.Enabled
	}
	return in, nil
}

// createField names the service's fields as the request body does.
func createField(f string) string {
	if f == "site_code" {
		return "site_id"
	}
	return f
}

// targetCreate saves a new target behind the dry-run gate: with a sample
// article it is saved only when the dry-run is green (else 422 with it).
func (h *handler) targetCreate(w http.ResponseWriter, r *http.Request) {
	in, err := h.createInput(w, r)
	if err != nil {
		h.failTarget(w, r, nil, err, createField)
		return
	}
	ctx := r.Context()
	res, err := h.targets.Create(ctx, in, principal(r).Actor())
	if err != nil {
		h.failTarget(w, r, res, err, createField)
		return
	}
	saved, err := h.st.TargetByCode(ctx, res.Target.TargetCode)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusCreated, targetSavedView{Target: targetOf(saved), Saved: true,
		DryRun: dryRunOf(res.DryRun), Warnings: orEmpty(res.Warnings), Changed: []string{}})
}
