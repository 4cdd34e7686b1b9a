// Package export writes articles for RAG as JSON Lines: the
// fields RAG filters and reads, the ids that tie a line to its source, and
// the attachments' stored paths and hashes. It pages through the store with
// a cursor so repeated exports are incremental and stable.
package export

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Line is one exported article. Every line has every key, so a reader
// never has to tell a missing key from an empty value: the values an article
// may lack (dept_id, native_post_id, publish_time, source_raw, metadata,
// text_path) are null then, and attachments is [] when there are none.
type Line struct {
	ID                 int64            `json:"id"`
	SiteID             int64            `json:"site_id"`
	SiteCode           string           `json:"site_code"`
	SiteRole           string           `json:"site_role"`
	TargetID           int64            `json:"target_id"`
	TargetCode         string           `json:"target_code"`
	DeptID             *int64           `json:"dept_id"`
	NativePostID       *string          `json:"native_post_id"`
	URL                string           `json:"url"`
	URLHash            string           `json:"url_hash"`
	Title              string           `json:"title"`
	PublishTime        *time.Time       `json:"publish_time"`
	ChannelName        string           `json:"channel_name"`
	ChannelPath        string           `json:"channel_path"`
	ContentCategory    string           `json:"content_category"`
	ContentSubcategory string           `json:"content_subcategory"`
	Publisher          string           `json:"publisher"`
	IndexNo            string           `json:"index_no"`
	DocNo              string           `json:"doc_no"`
	PublishDate        string           `json:"publish_date"`
	EffectiveDate      string           `json:"effective_date"`
	TopicWords         string           `json:"topic_words"`
	OpenCategory       string           `json:"open_category"`
	SourceRaw          *string          `json:"source_raw"`
	Metadata           json.RawMessage  `json:"metadata"`
	ContentText        string           `json:"content_text"`
	TextPath           *string          `json:"text_path"`
	Status             string           `json:"status"`
	FetchStrategy      string           `json:"fetch_strategy"`
	FetchedAt          time.Time        `json:"fetched_at"`
	UpdatedAt          time.Time        `json:"updated_at"`
	Attachments        []AttachmentLine `json:"attachments"`
}

// AttachmentLine is an exported attachment. An attachment listed but not
// stored (a summary-access site) has null size_bytes, file_path and sha256.
type AttachmentLine struct {
	Name   string  `json:"file_name"`
	Ext    string  `json:"file_ext"`
	Size   *int64  `json:"size_bytes"`
	Path   *string `json:"file_path"`
	SHA256 *string `json:"sha256"`
	URL    string  `json:"url"`
}

// Options select what to export.
type Options struct {
	Filter store.ExportFilter // SinceCursor, Status, DeptID, Category, SiteRole
	Max    int                // stop after this many lines; 0 = everything
	Mark   bool               // stamp exported_to_rag_at (RAG pulled it)
	Now    time.Time
}

// Write exports every matching article after the cursor to w, one JSON
// object per line, and returns the count and the cursor to resume from.
func Write(ctx context.Context, st *store.Store, opts Options, w io.Writer) (n int, next string, err error) {
	sites := map[int64]*model.Site{}
	targets := map[int64]*model.Target{}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	f := opts.Filter
	next = f.SinceCursor
	for {
		if opts.Max > 0 {
			f.Limit = min(1000, opts.Max-n)
			if f.Limit <= 0 {
				return n, next, nil
			}
		} else {
			f.Limit = 1000
		}
		f.SinceCursor = next
		rows, cursor, err := st.ExportArticles(ctx, f)
		if err != nil {
			return n, next, err
		}
		if len(rows) == 0 {
			return n, next, nil
		}
		ids := make([]int64, 0, len(rows))
		for i := range rows {
			a := &rows[i]
			line, err := toLine(ctx, st, a, sites, targets)
			if err != nil {
				return n, next, err
			}
			if err := enc.Encode(line); err != nil {
				return n, next, fmt.Errorf("write export: %w", err)
			}
			ids = append(ids, a.ID)
			n++
		}
		if opts.Mark {
			if err := st.MarkExported(ctx, ids, opts.Now); err != nil {
				return n, next, err
			}
		}
		next = cursor
	}
}

func toLine(ctx context.Context, st *store.Store, a *model.Article, sites map[int64]*model.Site, targets map[int64]*model.Target) (*Line, error) {
	site := sites[a.SiteID]
	if site == nil {
		s, err := st.SiteByID(ctx, a.SiteID)
		if err != nil {
			return nil, fmt.Errorf("export: site %d: %w", a.SiteID, err)
		}
		site, sites[a.SiteID] = s, s
	}
	target := targets[a.TargetID]
	if target == nil {
		t, err := st.TargetByID(ctx, a.TargetID)
		if err != nil {
			return nil, fmt.Errorf("export: target %d: %w", a.TargetID, err)
		}
		target, targets[a.TargetID] = t, t
	}
	l := &Line{
		ID: a.ID, SiteID: a.SiteID, SiteCode: site.SiteCode, SiteRole: site.SiteRole,
		TargetID: a.TargetID, TargetCode: target.TargetCode, DeptID: a.DeptID,
		NativePostID: orNull(a.NativePostID), URL: a.URL, URLHash: a.URLHash, Title: a.Title,
		PublishTime: a.PublishTime, ChannelName: a.ChannelName, ChannelPath: a.ChannelPath,
		ContentCategory: a.ContentCategory, ContentSubcategory: a.ContentSubcategory,
		Publisher: a.Publisher, IndexNo: a.IndexNo, DocNo: a.DocNo, PublishDate: a.PublishDate,
		EffectiveDate: a.EffectiveDate, TopicWords: a.TopicWords, OpenCategory: a.OpenCategory,
		SourceRaw: orNull(a.SourceRaw), Metadata: a.MetadataJSON, ContentText: a.ContentText, TextPath: orNull(a.TextPath),
		Status: a.Status, FetchStrategy: a.FetchStrategy, FetchedAt: a.FetchedAt, UpdatedAt: a.UpdatedAt,
		Attachments: []AttachmentLine{},
	}
	if len(a.MetadataJSON) == 0 {
		l.Metadata = nil // an empty RawMessage is not JSON; absent is null
	}
	for _, at := range a.Attachments {
		al := AttachmentLine{Name: at.FileName, Ext: at.FileExt, Path: orNull(at.FilePath), SHA256: orNull(at.FileHash), URL: at.URL}
		if at.FilePath != "" {
			al.Size = &at.SizeBytes
		}
		l.Attachments = append(l.Attachments, al)
	}
	return l, nil
}

// orNull keeps an empty value out of a line as null rather than "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
