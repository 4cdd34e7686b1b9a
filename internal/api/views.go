package api

import (
	"encoding/json"
	"time"

	"zhizhi/internal/articlejson"
	"zhizhi/internal/model"
)

// The JSON shapes of openapi.yaml's schemas. They are spelled out here
// rather than put as tags on the model types so that the API changes only
// when someone means it to.

type siteView struct {
	ID                   int64           `json:"id"`
	SiteCode             string          `json:"site_code"`
	SiteName             string          `json:"site_name"`
	BaseURL              string          `json:"base_url"`
	SiteRole             string          `json:"site_role"`
	CMSAdapter           *string         `json:"cms_adapter"`
	AdapterParams        json.RawMessage `json:"adapter_params"`
	DefaultFetchStrategy *string         `json:"default_fetch_strategy"`
	RespectRobots        bool            `json:"respect_robots"`
	YAMLPath             *string         `json:"yaml_path"`
	Access               string          `json:"access"`
	Owned                bool            `json:"owned"`
	Enabled              bool            `json:"enabled"`
	Remark               string          `json:"remark"`
	CreatedAt            time.Time       `json:"created_at"`
	UpdatedAt            time.Time       `json:"updated_at"`
}

func siteOf(s *model.Site) siteView {
	v := siteView{ID: s.ID, SiteCode: s.SiteCode, SiteName: s.SiteName, BaseURL: s.BaseURL, SiteRole: s.SiteRole,
		CMSAdapter: orNull(s.CMSAdapter), AdapterParams: s.AdapterParams,
		DefaultFetchStrategy: orNull(s.DefaultFetchStrategy), RespectRobots: s.RespectRobots,
		YAMLPath: orNull(s.YAMLPath), Access: s.Access, Owned: s.Owned, Enabled: s.Enabled, Remark: s.Remark,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if len(v.AdapterParams) == 0 {
		v.AdapterParams = nil
	}
	return v
}

type siteDepartmentView struct {
	ID              int64      `json:"id"`
	SiteID          int64      `json:"site_id"`
	DeptPath        string     `json:"dept_path"`
	LocalDeptID     *int64     `json:"local_dept_id"`
	DeptBinding     string     `json:"dept_binding"`
	DeptDisplayName string     `json:"dept_display_name"`
	DetectStatus    string     `json:"detect_status"`
	LastProbedAt    *time.Time `json:"last_probed_at"`
	Enabled         bool       `json:"enabled"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

func siteDepartmentOf(d *model.SiteDepartment) siteDepartmentView {
	return siteDepartmentView{ID: d.ID, SiteID: d.SiteID, DeptPath: d.DeptPath, LocalDeptID: d.LocalDeptID,
		DeptBinding: d.DeptBinding, DeptDisplayName: d.DeptDisplayName, DetectStatus: d.DetectStatus,
		LastProbedAt: d.LastProbedAt, Enabled: d.Enabled, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

type departmentView struct {
	DeptID       int64      `json:"dept_id"`
	DeptName     string     `json:"dept_name"`
	ParentDeptID *int64     `json:"parent_dept_id"`
	DeptLevel    *int       `json:"dept_level"`
	DeptCode     string     `json:"dept_code"`
	ShortName    string     `json:"short_name"`
	FullName     string     `json:"full_name"`
	State        int        `json:"state"`
	OrderID      *int       `json:"order_id"`
	UpdatedAt    *time.Time `json:"updated_at"`
}

func departmentOf(d *model.Department) departmentView {
	return departmentView{DeptID: d.DeptID, DeptName: d.DeptName, ParentDeptID: d.ParentDeptID,
		DeptLevel: d.DeptLevel, DeptCode: d.DeptCode, ShortName: d.ShortName, FullName: d.FullName,
		State: d.State, OrderID: d.OrderID, UpdatedAt: d.UpdatedAt}
}

// targetSettings are the settings of a target, stored or as it would be
// saved; the views of both embed them.
type targetSettings struct {
	SiteID              int64   `json:"site_id"`
	SiteDepartmentID    *int64  `json:"site_department_id"`
	TargetCode          string  `json:"target_code"`
	TargetName          string  `json:"target_name"`
	EntryURL            string  `json:"entry_url"`
	SampleArticleURL    string  `json:"sample_article_url"`
	DeptBinding         *string `json:"dept_binding"`
	DeptID              *int64  `json:"dept_id"`
	ColumnID            string  `json:"column_id"`
	ChannelName         string  `json:"channel_name"`
	ChannelPath         string  `json:"channel_path"`
	ContentCategory     string  `json:"content_category"`
	ContentSubcategory  string  `json:"content_subcategory"`
	ScheduleCron        string  `json:"schedule_cron"`
	ExpectedCadenceDays int     `json:"expected_cadence_days"`
	IntervalSec         int     `json:"interval_sec"`
	Enabled             bool    `json:"enabled"`
}

func targetSettingsOf(t *model.Target) targetSettings {
	return targetSettings{SiteID: t.SiteID, SiteDepartmentID: t.SiteDepartmentID, TargetCode: t.TargetCode,
		TargetName: t.TargetName, EntryURL: t.EntryURL, SampleArticleURL: t.SampleArticleURL,
		DeptBinding: orNull(t.DeptBinding), DeptID: t.DeptID, ColumnID: t.ColumnID, ChannelName: t.ChannelName,
		ChannelPath: t.ChannelPath, ContentCategory: t.ContentCategory, ContentSubcategory: t.ContentSubcategory,
		ScheduleCron: t.ScheduleCron, ExpectedCadenceDays: t.ExpectedCadenceDays, IntervalSec: t.IntervalSec,
		Enabled: t.Enabled}
}

type targetView struct {
	ID int64 `json:"id"`
	targetSettings
	Source          string     `json:"source"`
	LastCrawledAt   *time.Time `json:"last_crawled_at"`
	LastArticleTime *time.Time `json:"last_article_time"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

func targetOf(t *model.Target) targetView {
	return targetView{ID: t.ID, targetSettings: targetSettingsOf(t), Source: t.Source,
		LastCrawledAt: t.LastCrawledAt, LastArticleTime: t.LastArticleTime, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// exportMark is when an export last marked an article. The API shows it
// beside the article's shape (articlejson), which an export line is too and
// so cannot carry it: the same cursor gives the same line before and after
// the mark.
type exportMark struct {
	ExportedToRAGAt *time.Time `json:"exported_to_rag_at"`
}

// articleItem is an article in a list: the first part of articleDetail.
type articleItem struct {
	articlejson.Summary
	exportMark
}

type articleDetail struct {
	articlejson.Article
	exportMark
}

type crawlLogView struct {
	ID         int64     `json:"id"`
	SiteID     *int64    `json:"site_id"`
	TargetID   *int64    `json:"target_id"`
	Host       string    `json:"host"`
	URL        string    `json:"url"`
	Purpose    string    `json:"purpose"`
	Method     string    `json:"method"`
	Strategy   string    `json:"strategy"`
	HTTPStatus *int      `json:"http_status"`
	Bytes      int64     `json:"bytes"`
	BytesSaved int64     `json:"bytes_saved"`
	DurationMS *int      `json:"duration_ms"`
	Success    bool      `json:"success"`
	ErrorClass string    `json:"error_class"`
	ErrorMsg   string    `json:"error_msg"`
	OccurredAt time.Time `json:"occurred_at"`
}

func crawlLogOf(l *model.CrawlLog) crawlLogView {
	return crawlLogView{ID: l.ID, SiteID: l.SiteID, TargetID: l.TargetID, Host: l.Host, URL: l.ArticleURL,
		Purpose: l.Purpose, Method: l.Method, Strategy: l.Strategy, HTTPStatus: l.HTTPStatus, Bytes: l.Bytes,
		BytesSaved: l.BytesSaved, DurationMS: l.DurationMS, Success: l.Success, ErrorClass: l.ErrorClass,
		ErrorMsg: l.ErrorMsg, OccurredAt: l.OccurredAt}
}

type columnView struct {
	ID                 int64     `json:"id"`
	AdapterID          string    `json:"adapter_id"`
	SiteID             int64     `json:"site_id"`
	ColumnID           string    `json:"column_id"`
	ColumnName         string    `json:"column_name"`
	ColumnPath         string    `json:"column_path"`
	AdminLevel         string    `json:"admin_level"`
	TopicTags          []string  `json:"topic_tags"`
	PostCount          int       `json:"post_count"`
	LastSeenAt         time.Time `json:"last_seen_at"`
	SubscribedTargetID *int64    `json:"subscribed_target_id"`
	Active             bool      `json:"active"`
}

func columnOf(c *model.ColumnRegistry) columnView {
	v := columnView{ID: c.ID, AdapterID: c.AdapterID, SiteID: c.SiteID, ColumnID: c.ColumnID,
		ColumnName: c.ColumnName, ColumnPath: c.ColumnPath, AdminLevel: c.AdminLevel, TopicTags: c.TopicTags,
		PostCount: c.PostCount, LastSeenAt: c.LastSeenAt, SubscribedTargetID: c.SubscribedTargetID, Active: c.Active}
	if v.TopicTags == nil {
		v.TopicTags = []string{}
	}
	return v
}

// page is a list answer with the cursor of the next page; next_cursor is
// null on the last page.
type page[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// list is a list answer that is never paged (it is small by nature).
type list[T any] struct {
	Items []T `json:"items"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
