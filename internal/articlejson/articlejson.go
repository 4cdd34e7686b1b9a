// Package articlejson owns the one JSON shape of an article that zhizhi
// hands out. A line of `zhizhi export`, an article of the API's export and
// the REST API's article (GET /api/v1/articles/{id}, which adds only when an
// export last marked it) are the same object, built by the same function,
// so a client may read any of them with one type; the API's list item is
// its first part (Summary), by embedding.
//
// The shape is spelled out here rather than put as tags on the model types
// so that it changes only when someone means it to: openapi.yaml
// (ArticleDetail, Article, Attachment) and docs/export.md describe it.
package articlejson

import (
	"encoding/json"
	"time"

	"zhizhi/internal/model"
)

// Summary is an article without what only its own page needs (the body
// text, metadata, attachments, the site's and target's codes): an item of
// the API's article lists. Every key is always there; a value the article
// lacks is null. When an export last marked the article (the API's
// exported_to_rag_at) is not part of it: an export line is the same for the
// same cursor before and after the export marks it.
type Summary struct {
	ID                 int64      `json:"id"`
	SiteID             int64      `json:"site_id"`
	TargetID           int64      `json:"target_id"`
	DeptID             *int64     `json:"dept_id"`
	NativePostID       *string    `json:"native_post_id"`
	URL                string     `json:"url"`
	Title              string     `json:"title"`
	PublishTime        *time.Time `json:"publish_time"`
	PublishDate        *string    `json:"publish_date"`
	EffectiveDate      *string    `json:"effective_date"`
	ChannelName        string     `json:"channel_name"`
	ChannelPath        string     `json:"channel_path"`
	ContentCategory    string     `json:"content_category"`
	ContentSubcategory string     `json:"content_subcategory"`
	IndexNo            string     `json:"index_no"`
	DocNo              string     `json:"doc_no"`
	Publisher          string     `json:"publisher"`
	TopicWords         string     `json:"topic_words"`
	OpenCategory       string     `json:"open_category"`
	HasAttachment      bool       `json:"has_attachment"`
	Status             string     `json:"status"`
	StatusReason       string     `json:"status_reason"`
	FetchStrategy      string     `json:"fetch_strategy"`
	FetchedAt          time.Time  `json:"fetched_at"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
}

// Article is the whole article: its Summary and the rest.
type Article struct {
	Summary
	SiteCode    string          `json:"site_code"`
	SiteRole    string          `json:"site_role"`
	TargetCode  string          `json:"target_code"`
	URLHash     string          `json:"url_hash"`
	SourceRaw   *string         `json:"source_raw"`
	Metadata    json.RawMessage `json:"metadata"`
	ContentText string          `json:"content_text"`
	TextPath    *string         `json:"text_path"`
	Attachments []Attachment    `json:"attachments"`
}

// Attachment is an article's attachment. One listed but not stored (a
// summary-access site) has null size_bytes, file_path, sha256 and
// downloaded_at.
type Attachment struct {
	ID           int64      `json:"id"`
	URL          string     `json:"url"`
	FileName     string     `json:"file_name"`
	FileExt      string     `json:"file_ext"`
	SizeBytes    *int64     `json:"size_bytes"`
	FilePath     *string    `json:"file_path"`
	SHA256       *string    `json:"sha256"`
	Stored       bool       `json:"stored"`
	DownloadedAt *time.Time `json:"downloaded_at"`
	// A PDF's text as the crawler read it (every page; scanned pages only
	// where the site has OCR on), its class and page count; null for other
	// files and for PDFs not read. TextError says why a PDF has no (or
	// partial) text.
	Text      *string `json:"text"`
	TextClass *string `json:"text_class"`
	PageCount *int    `json:"page_count"`
	TextError *string `json:"text_error"`
}

// SummaryOf is the list item of a.
func SummaryOf(a *model.Article) Summary {
	return Summary{ID: a.ID, SiteID: a.SiteID, TargetID: a.TargetID, DeptID: a.DeptID,
		NativePostID: orNull(a.NativePostID), URL: a.URL, Title: a.Title, PublishTime: a.PublishTime,
		PublishDate: orNull(a.PublishDate), EffectiveDate: orNull(a.EffectiveDate), ChannelName: a.ChannelName,
		ChannelPath: a.ChannelPath, ContentCategory: a.ContentCategory, ContentSubcategory: a.ContentSubcategory,
		IndexNo: a.IndexNo, DocNo: a.DocNo, Publisher: a.Publisher, TopicWords: a.TopicWords,
		OpenCategory: a.OpenCategory, HasAttachment: a.HasAttachment, Status: a.Status,
		StatusReason: a.StatusReason, FetchStrategy: a.FetchStrategy, FetchedAt: a.FetchedAt,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// Of is the whole of a, which came from site and was found in target.
func Of(a *model.Article, site *model.Site, target *model.Target) Article {
	v := Article{Summary: SummaryOf(a), SiteCode: site.SiteCode, SiteRole: site.SiteRole, TargetCode: target.TargetCode,
		URLHash: a.URLHash, SourceRaw: orNull(a.SourceRaw), Metadata: a.MetadataJSON, ContentText: a.ContentText,
		TextPath: orNull(a.TextPath), Attachments: []Attachment{}}
	if len(v.Metadata) == 0 {
		v.Metadata = nil // an empty RawMessage is not JSON; absent is null
	}
	for _, at := range a.Attachments {
		av := Attachment{ID: at.ID, URL: at.URL, FileName: at.FileName, FileExt: at.FileExt,
			FilePath: orNull(at.FilePath), SHA256: orNull(at.FileHash), Stored: at.FilePath != ""}
		if at.FilePath != "" {
			size := at.SizeBytes
			av.SizeBytes = &size
		}
		if !at.DownloadedAt.IsZero() {
			d := at.DownloadedAt
			av.DownloadedAt = &d
		}
		if at.TextClass != "" || at.TextError != "" {
			n := at.PageCount
			av.Text, av.TextClass, av.PageCount = &at.Text, orNull(at.TextClass), &n
			av.TextError = orNull(at.TextError)
		}
		v.Attachments = append(v.Attachments, av)
	}
	return v
}

// orNull keeps an empty value out of the JSON as null rather than "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
