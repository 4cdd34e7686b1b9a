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

	"zhizhi/internal/articlejson"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Line is one exported article: the article's one JSON shape, the same
// object GET /api/v1/articles/{id} answers. Every line has every key, so a
// reader never has to tell a missing key from an empty value: the values an
// article may lack are null then, and attachments is [] when there are none.
type Line = articlejson.Article

// AttachmentLine is an exported attachment.
type AttachmentLine = articlejson.Attachment

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
	l := articlejson.Of(a, site, target)
	return &l, nil
}
