// Package target owns changing a crawl target: the checks on every input,
// the dry-run gate (a target with a sample article is saved only when the
// validator reads it green), the overrides that keep a person's change to
// a YAML target through `config sync`, subscribing catalog columns, and the
// audit entry each change writes in the same transaction. The console, the
// API and the command line all change targets through it.
package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Validator is the dry-run: (*crawl.Crawler).Validate, or anything that
// reads a target's list page and sample article the same way.
type Validator func(ctx context.Context, site *model.Site, t *model.Target, entry, sample string) (*crawl.Validation, error)

// Service changes targets. Store is required; Validate is needed to save a
// target that has a sample article URL (without it such a save is refused,
// never waved through); Location is the time zone schedules are read in
// (nil: the local zone).
type Service struct {
	Store    *store.Store
	Validate Validator
	// List reads a catalog column's newest list page for its preview; nil
	// turns the preview off.
	List     ColumnLister
	Location *time.Location
}

// Errors callers tell apart with errors.Is.
var (
	// ErrInvalid: an input was refused; the error is an *InputError that
	// names each field.
	ErrInvalid = errors.New("invalid target input")
	// ErrDryRunFailed: the dry-run of the sample article was not green;
	// the Result carries what it found.
	ErrDryRunFailed = errors.New("dry-run not green: not saved")
	// ErrNotFound: no target (or catalog column) with that code or id.
	ErrNotFound = store.ErrNotFound
	// ErrConflict: someone else saved the target while this change was
	// being checked; reload it and try again.
	ErrConflict = errors.New("the target was changed by someone else meanwhile: reload it and try again")
	// ErrCodeTaken: an *InputError whose target_code another target has;
	// it also matches ErrInvalid.
	ErrCodeTaken = errors.New("target code taken")
)

// FieldError is one refused input.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	taken   bool   // the target_code is another target's
}

// InputError lists every refused input of one request.
type InputError struct {
	Problems []FieldError `json:"problems"`
}

func (e *InputError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return strings.Join(parts, "; ")
}

// Is makes an *InputError match ErrInvalid, and ErrCodeTaken when one of
// its problems is a target_code already in use.
func (e *InputError) Is(target error) bool {
	if target == ErrCodeTaken {
		return slices.ContainsFunc(e.Problems, func(p FieldError) bool { return p.taken })
	}
	return target == ErrInvalid
}

// codeTaken is the problem of a target_code another target has.
func codeTaken(code string) FieldError {
	return FieldError{Field: "target_code", Message: fmt.Sprintf("%s 已存在：换一个编码", code), taken: true}
}

// problems collects field errors while checking one request.
type problems []FieldError

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &InputError{Problems: p}
}

// Input is a new target. For a site with a CMS adapter give DeptPath and
// ColumnID (the entry URL and the binding follow from them); for a
// template site give EntryURL and DeptBinding (with LocalDeptID when
// mapped).
type Input struct {
	SiteCode            string `json:"site_code"`
	TargetCode          string `json:"target_code"` // empty on a CMS site: <site>_<dept>_<column>
	TargetName          string `json:"target_name"`
	EntryURL            string `json:"entry_url,omitempty"`
	SampleArticleURL    string `json:"sample_article_url,omitempty"`
	DeptPath            string `json:"dept_path,omitempty"`
	ColumnID            string `json:"column_id,omitempty"`
	DeptBinding         string `json:"dept_binding,omitempty"`
	LocalDeptID         *int64 `json:"local_dept_id,omitempty"`
	ChannelName         string `json:"channel_name,omitempty"`
	ChannelPath         string `json:"channel_path,omitempty"`
	ContentCategory     string `json:"content_category,omitempty"`
	ContentSubcategory  string `json:"content_subcategory,omitempty"`
	Schedule            string `json:"schedule,omitempty"` // daily | weekly | monthly | a cron expression; empty: daily
	ExpectedCadenceDays int    `json:"expected_cadence_days,omitempty"`
	IntervalSec         int    `json:"interval_sec,omitempty"`
	Enabled             bool   `json:"enabled"`
}

// Patch changes some fields of a target; nil leaves a field as it is.
// DeptBinding and LocalDeptID change together.
type Patch struct {
	TargetName          *string `json:"target_name,omitempty"`
	EntryURL            *string `json:"entry_url,omitempty"`
	SampleArticleURL    *string `json:"sample_article_url,omitempty"`
	DeptBinding         *string `json:"dept_binding,omitempty"`
	LocalDeptID         *int64  `json:"local_dept_id,omitempty"`
	ChannelName         *string `json:"channel_name,omitempty"`
	ChannelPath         *string `json:"channel_path,omitempty"`
	ContentCategory     *string `json:"content_category,omitempty"`
	ContentSubcategory  *string `json:"content_subcategory,omitempty"`
	Schedule            *string `json:"schedule,omitempty"`
	ExpectedCadenceDays *int    `json:"expected_cadence_days,omitempty"`
	IntervalSec         *int    `json:"interval_sec,omitempty"`
	Enabled             *bool   `json:"enabled,omitempty"`
}

// Result is what a save did, or would do (Preview…): the target as saved,
// the dry-run when there was one, warnings to show, and the fields changed.
type Result struct {
	Target   *model.Target `json:"target"`
	Saved    bool          `json:"saved"`
	DryRun   *DryRun       `json:"dry_run,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	Changed  []string      `json:"changed,omitempty"`
}

// auditView is a target as the audit trail records it before and after.
type auditView struct {
	TargetCode          string `json:"target_code"`
	TargetName          string `json:"target_name"`
	SiteID              int64  `json:"site_id"`
	SiteDepartmentID    *int64 `json:"site_department_id,omitempty"`
	EntryURL            string `json:"entry_url"`
	SampleArticleURL    string `json:"sample_article_url,omitempty"`
	DeptBinding         string `json:"dept_binding,omitempty"`
	DeptID              *int64 `json:"dept_id,omitempty"`
	ColumnID            string `json:"column_id,omitempty"`
	ChannelName         string `json:"channel_name,omitempty"`
	ChannelPath         string `json:"channel_path,omitempty"`
	ContentCategory     string `json:"content_category,omitempty"`
	ContentSubcategory  string `json:"content_subcategory,omitempty"`
	ScheduleCron        string `json:"schedule_cron"`
	ExpectedCadenceDays int    `json:"expected_cadence_days"`
	IntervalSec         int    `json:"interval_sec"`
	Enabled             bool   `json:"enabled"`
	Source              string `json:"source"`
	RegistryID          *int64 `json:"registry_id,omitempty"`
}

func auditJSON(t *model.Target) json.RawMessage {
	if t == nil {
		return nil
	}
	b, _ := json.Marshal(auditView{
		TargetCode: t.TargetCode, TargetName: t.TargetName, SiteID: t.SiteID, SiteDepartmentID: t.SiteDepartmentID,
		EntryURL: t.EntryURL, SampleArticleURL: t.SampleArticleURL, DeptBinding: t.DeptBinding, DeptID: t.DeptID,
		ColumnID: t.ColumnID, ChannelName: t.ChannelName, ChannelPath: t.ChannelPath,
		ContentCategory: t.ContentCategory, ContentSubcategory: t.ContentSubcategory, ScheduleCron: t.ScheduleCron,
		ExpectedCadenceDays: t.ExpectedCadenceDays, IntervalSec: t.IntervalSec, Enabled: t.Enabled,
		Source: t.Source, RegistryID: t.RegistryID,
	})
	return b
}

func checkActor(actor string) error {
	if strings.TrimSpace(actor) == "" {
		return fmt.Errorf("a change needs the actor who makes it")
	}
	return nil
}

// targetReader is the store or a transaction in it.
type targetReader interface {
	TargetByCode(ctx context.Context, code string) (*model.Target, error)
}

// targetByCode reads a target through r and wraps a missing one in a
// message a person can act on.
func targetByCode(ctx context.Context, r targetReader, code string) (*model.Target, error) {
	tg, err := r.TargetByCode(ctx, code)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("target %q does not exist (see `zhizhi target list`): %w", code, ErrNotFound)
	}
	return tg, err
}
