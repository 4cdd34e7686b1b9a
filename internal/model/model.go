// Package model holds the plain structs that the other packages share: the
// sites, departments, targets, articles, attachments and logs the collector keeps,
// plus the runtime state tables. It has no behaviour beyond
// validation of enumerations; all SQL lives in internal/store.
package model

import (
	"encoding/json"
	"time"
)

// Site roles.
const (
	RoleQingyuanLocal = "qingyuan_local"
	RoleCountyLocal   = "county_local"
	RoleProvinceRef   = "province_ref"
	RoleNationRef     = "nation_ref"
)

// SiteRoles lists every valid site_role.
var SiteRoles = []string{RoleQingyuanLocal, RoleCountyLocal, RoleProvinceRef, RoleNationRef}

// Access policies. A site with no configuration is summary.
const (
	AccessFull    = "full"
	AccessSummary = "summary"
)

// Fetch strategies. The seed names the tiers after its Python tools; we keep
// its stored values (httpx = direct HTTP, playwright = headless browser) so
// the article output contract holds, and accept direct/browser in
// configuration.
const (
	StrategyDirect  = "httpx"
	StrategyBrowser = "playwright"
)

// Department binding semantics. pending exists only at runtime.
const (
	BindingPending     = "pending"
	BindingMapped      = "mapped"
	BindingCityLevel   = "city_level"
	BindingCrossDept   = "cross_dept"
	BindingExternalRef = "external_ref"
)

// DeptBindings lists every valid dept_binding value.
var DeptBindings = []string{BindingPending, BindingMapped, BindingCityLevel, BindingCrossDept, BindingExternalRef}

// Article statuses. RAG reads only ready.
const (
	StatusRaw    = "raw"
	StatusReady  = "ready"
	StatusFailed = "failed"
)

// Target sources: declared in a site YAML or created in the admin.
const (
	SourceYAML  = "yaml"
	SourceAdmin = "admin"
)

// Detect statuses of a site department.
const (
	DetectPending = "pending"
	DetectOK      = "ok"
	DetectFailed  = "failed"
)

// Request purposes recorded in crawl_log.
const (
	PurposeRobots     = "robots"
	PurposeList       = "list"
	PurposeDetail     = "detail"
	PurposeAttachment = "attachment"
	PurposeProbe      = "probe"
	PurposeIndex      = "index"
)

// Site is a row of crawl_site.
// A site's rights profile for the corpus (corpus.rights in its YAML):
// public_info may be published in a release; reference is kept but never
// released; unknown (the default) holds its works back until a person
// decides.
const (
	RightsPublicInfo = "public_info"
	RightsReference  = "reference"
	RightsUnknown    = "unknown"
)

// RightsProfiles lists the values of a site's corpus rights profile.
var RightsProfiles = []string{RightsPublicInfo, RightsReference, RightsUnknown}

type Site struct {
	ID                     int64
	SiteCode               string
	SiteName               string
	BaseURL                string
	SiteRole               string
	CMSAdapter             string          // empty when the site uses yaml_path
	AdapterParams          json.RawMessage // nil unless CMSAdapter is set
	DefaultFetchStrategy   string
	StrategyOverrideReason string
	RespectRobots          bool
	YAMLPath               string // empty when the site uses cms_adapter
	Access                 string // full | summary
	Owned                  bool   // politeness limits may be loosened
	Enabled                bool
	Remark                 string
	AttachmentOCR          bool   // read scanned pages of PDF attachments with OCR (attachments.ocr)
	CorpusRights           string // public_info | reference | unknown (corpus.rights); empty means unknown
	CreatedAt              time.Time
	UpdatedAt              time.Time
}

// SiteDepartment is a row of site_department: a CMS dept_path bound to a
// local department.
type SiteDepartment struct {
	ID               int64
	SiteID           int64
	DeptPath         string
	LocalDeptID      *int64
	DeptBinding      string
	DeptDisplayName  string
	DetectStatus     string
	LastProbedAt     *time.Time
	LastClassifyJSON json.RawMessage
	Enabled          bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Target is a row of crawl_target: one column entry on one site.
type Target struct {
	ID                  int64
	SiteID              int64
	SiteDepartmentID    *int64
	TargetCode          string
	TargetName          string
	EntryURL            string
	SampleArticleURL    string
	DeptID              *int64
	ColumnID            string // gkmlpt column id; empty for template sites
	ParserOverride      json.RawMessage
	ChannelName         string
	ChannelPath         string
	ContentCategory     string
	ContentSubcategory  string
	ScheduleCron        string
	ExpectedCadenceDays int
	IntervalSec         int
	Enabled             bool
	Source              string // yaml | admin
	// DeptBinding is the binding the target was declared or created with
	// (mapped, city_level, cross_dept, external_ref); for a target under a
	// site department it is the department's. Empty only for a row no sync
	// has written since the column was added.
	DeptBinding     string
	RegistryID      *int64 // the column registry row a subscribed target was made from
	CreatedBy       string // the actor who created a console target; empty for YAML
	LastCrawledAt   *time.Time
	LastArticleTime *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Department is a row of local_department, a snapshot of the OA subset
// .
type Department struct {
	DeptID       int64
	DeptName     string
	ParentDeptID *int64
	DeptLevel    *int
	DeptCode     string
	ShortName    string
	FullName     string
	State        int
	OrderID      *int
	UpdatedAt    *time.Time
}

// Article is a row of article: the normalized output contract the crawl
// pipeline promises.
type Article struct {
	ID                 int64
	SiteID             int64
	TargetID           int64
	DeptID             *int64
	NativePostID       string // empty when the CMS exposes none; never invented
	URL                string
	URLHash            string
	Title              string
	PublishTime        *time.Time // UTC
	SourceRaw          string
	ChannelName        string
	ChannelPath        string
	ContentCategory    string
	ContentSubcategory string
	IndexNo            string
	DocNo              string
	Publisher          string
	PublishDate        string // YYYY-MM-DD or empty
	EffectiveDate      string // YYYY-MM-DD or empty
	TopicWords         string
	OpenCategory       string
	MetadataJSON       json.RawMessage // {"raw": {label: value, ...}, ...}
	ContentText        string
	RawHTMLPath        string
	TextPath           string
	HasAttachment      bool
	Status             string
	StatusReason       string
	FetchStrategy      string
	FetchedAt          time.Time
	ExportedToRAGAt    *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Attachments        []Attachment
	// Card, when set, is saved with the article in the same transaction.
	Card *SummaryCard
}

// Attachment is a row of attachment.
type Attachment struct {
	ID           int64
	ArticleID    int64
	URL          string
	FileName     string
	FileExt      string
	SizeBytes    int64
	FilePath     string
	FileHash     string // sha256 hex
	DownloadedAt time.Time
	// A PDF's text as internal/pdf read it: all pages' text, the file's
	// class (text | scanned | mixed | empty), its pages, and why there is
	// no text when there is none. Empty for other files.
	Text      string
	TextClass string
	PageCount int
	TextError string
}

// CrawlLog is a row of crawl_log: one request, whatever its purpose or tier.
type CrawlLog struct {
	ID         int64
	SiteID     *int64
	TargetID   *int64
	Host       string
	ArticleURL string // the requested URL
	Purpose    string
	Method     string
	Strategy   string // httpx | playwright
	HTTPStatus *int
	Bytes      int64
	BytesSaved int64 // body bytes a 304 spared (the size of the last full body)
	DurationMS *int
	Success    bool
	ErrorClass string
	ErrorMsg   string
	OccurredAt time.Time
}

// ColumnRegistry is a row of master_column_registry.
type ColumnRegistry struct {
	ID                 int64
	AdapterID          string
	SiteID             int64
	SiteDepartmentID   *int64 // the dept whose index listed it; nil keeps the stored one
	ColumnID           string
	ColumnName         string
	ColumnPath         string
	AdminLevel         string // city | county | township
	TopicTags          []string
	PostCount          int
	LastSeenAt         time.Time
	SubscribedTargetID *int64
	Active             bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// URLState is a row of url_state: what we know of one URL for conditional
// and adaptive re-fetching.
type URLState struct {
	URLHash         string
	URL             string
	ETag            string
	LastModified    string
	ContentHash     string
	Simhash         uint64
	LastCheckedAt   *time.Time
	LastChangedAt   *time.Time
	ChangeIntervals []int64 // observed intervals between changes, seconds
	ContentLength   int64   // size of the last full body, for the bytes a 304 saves
	NextCheckAt     *time.Time
}

// HostState is a row of host_state: per-host politeness state that survives
// restarts.
type HostState struct {
	Host              string
	ConsecutiveErrors int
	BackoffUntil      *time.Time
	BreakerUntil      *time.Time
	BreakerTrips      []time.Time
	NeedsReview       bool
	UpdatedAt         time.Time

	// BlockReason says why a host is stopped beyond the breaker's count:
	// "captcha" holds until a person clears it. Empty otherwise.
	BlockReason string
	// The host's token bucket as the last request left it: BucketTokens
	// at BucketAt (when that request took its token); nil BucketAt: never
	// asked. Shared by every process on the database.
	BucketTokens float64
	BucketAt     *time.Time
}

// RobotsState is a row of robots_state: the robots.txt of one origin
// (scheme, host and port, as RFC 9309 scopes it) as last fetched, and the
// run of failed fetches, so that its retry backoff survives a restart.
type RobotsState struct {
	Origin string // "https://www.gd.gov.cn:443": the port always written
	Host   string // the host name, to list and clear by host
	// Status of the last answer; 0 when the fetch failed on the network.
	Status       int
	Body         []byte // the file as served (capped); nil for a failure
	FetchedAt    time.Time
	ETag         string
	LastModified string
	// Failures counts consecutive fetches that failed (network error, 5xx,
	// 429) since FailingSince; LastError says how the last one failed.
	// Zero after a fetch that gave an answer.
	Failures     int
	FailingSince *time.Time
	LastError    string
	UpdatedAt    time.Time
}

// Cookie is a row of the cookie pool for a site.
type Cookie struct {
	ID        int64
	SiteID    *int64
	Host      string
	Name      string
	Value     string
	Path      string
	Source    string // browser | direct
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// Contains reports whether v is one of values.
func Contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}
