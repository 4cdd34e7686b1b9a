package api

import (
	"time"

	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/target"
)

// The JSON shapes of the target-editing answers (openapi.yaml's DryRun,
// TargetDraft, TargetSaved, TargetPreview, TargetState, FieldSource and
// Subscription).

type dryRunView struct {
	Green      bool            `json:"green"`
	Checks     []checkView     `json:"checks"`
	Validation *validationView `json:"validation"`
	Error      *string         `json:"error"`
}

type checkView struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

type validationView struct {
	Site           string            `json:"site"`
	Entry          string            `json:"entry_url"`
	Sample         string            `json:"sample_url"`
	ListItems      int               `json:"list_items"`
	ListFirst      []string          `json:"list_first"`
	NextPage       string            `json:"next_page"`
	Title          string            `json:"title"`
	PublishTime    string            `json:"publish_time"`
	ContentChars   int               `json:"content_chars"`
	ContentHead    string            `json:"content_head"`
	Attributes     map[string]string `json:"attributes"`
	Canonical      map[string]string `json:"canonical"`
	Attachments    []string          `json:"attachments"`
	SelectorsMiss  []string          `json:"selectors_missed"`
	Problems       []string          `json:"problems"`
	Green          bool              `json:"green"`
	FetchStrategy  string            `json:"fetch_strategy"`
	SampleFromList bool              `json:"sample_from_list"`
}

// dryRunOf is nil for no dry-run (a target without a sample article).
func dryRunOf(d *target.DryRun) *dryRunView {
	if d == nil {
		return nil
	}
	v := &dryRunView{Green: d.Green, Checks: []checkView{}, Error: orNull(d.Error)}
	for _, c := range d.Checks {
		v.Checks = append(v.Checks, checkView{Name: c.Name, OK: c.OK, Detail: c.Detail})
	}
	if d.Validation != nil {
		v.Validation = validationOf(d.Validation)
	}
	return v
}

func validationOf(x *crawl.Validation) *validationView {
	return &validationView{Site: x.Site, Entry: x.Entry, Sample: x.Sample, ListItems: x.ListItems,
		ListFirst: orEmpty(x.ListFirst), NextPage: x.NextPage, Title: x.Title, PublishTime: x.PublishTime,
		ContentChars: x.ContentChars, ContentHead: x.ContentHead, Attributes: orEmptyMap(x.Attributes),
		Canonical: orEmptyMap(x.Canonical), Attachments: orEmpty(x.Attachments), SelectorsMiss: orEmpty(x.SelectorsMiss),
		Problems: orEmpty(x.Problems), Green: x.Green, FetchStrategy: x.FetchStrategy, SampleFromList: x.SampleFromList}
}

// targetDraftView is a target as it would be saved: no id yet for a new
// one, no timestamps.
type targetDraftView struct {
	ID *int64 `json:"id"`
	targetSettings
}

func targetDraftOf(t *model.Target) targetDraftView {
	v := targetDraftView{targetSettings: targetSettingsOf(t)}
	if t.ID != 0 {
		id := t.ID
		v.ID = &id
	}
	return v
}

type targetSavedView struct {
	Target   targetView  `json:"target"`
	Saved    bool        `json:"saved"`
	DryRun   *dryRunView `json:"dry_run"`
	Warnings []string    `json:"warnings"`
	Changed  []string    `json:"changed"`
}

type targetPreviewView struct {
	Target   targetDraftView `json:"target"`
	DryRun   *dryRunView     `json:"dry_run"`
	Warnings []string        `json:"warnings"`
	Changed  []string        `json:"changed"`
}

func targetPreviewOf(res *target.Result) targetPreviewView {
	return targetPreviewView{Target: targetDraftOf(res.Target), DryRun: dryRunOf(res.DryRun),
		Warnings: orEmpty(res.Warnings), Changed: orEmpty(res.Changed)}
}

type targetStateView struct {
	Target  targetView `json:"target"`
	Changed bool       `json:"changed"`
}

type fieldSourceView struct {
	Field     string     `json:"field"`
	Value     string     `json:"value"`
	Source    string     `json:"source"`
	ChangedBy *string    `json:"changed_by"`
	ChangedAt *time.Time `json:"changed_at"`
	YAMLValue *string    `json:"yaml_value"`
}

type subscriptionView struct {
	RegistryID int64   `json:"registry_id"`
	SiteCode   string  `json:"site_code"`
	ColumnID   string  `json:"column_id"`
	ColumnName string  `json:"column_name"`
	TargetID   *int64  `json:"target_id"`
	TargetCode *string `json:"target_code"`
	Status     string  `json:"status"`
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
