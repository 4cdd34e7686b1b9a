package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"zhizhi/internal/model"
)

// Outcomes of UpsertArticle.
const (
	OutcomeCreated   = "created"
	OutcomeUpdated   = "updated"
	OutcomeUnchanged = "unchanged"
)

const articleColumns = `a.id, a.site_id, a.target_id, a.dept_id, a.native_post_id, a.url, a.url_hash, a.title,
	a.publish_time, a.source_raw, a.channel_name, a.channel_path, a.content_category, a.content_subcategory,
	a.index_no, a.doc_no, a.publisher, a.publish_date, a.effective_date, a.topic_words, a.open_category,
	a.metadata_json, a.content_text, a.raw_html_path, a.text_path, a.has_attachment, a.status,
	a.status_reason, a.fetch_strategy, a.fetched_at, a.exported_to_rag_at, a.created_at, a.updated_at`

func scanArticle(row interface{ Scan(...any) error }) (*model.Article, error) {
	var a model.Article
	err := row.Scan(&a.ID, &a.SiteID, &a.TargetID, &a.DeptID, strCol{&a.NativePostID}, &a.URL, &a.URLHash,
		&a.Title, nullTimeCol{&a.PublishTime}, strCol{&a.SourceRaw}, strCol{&a.ChannelName},
		strCol{&a.ChannelPath}, strCol{&a.ContentCategory}, strCol{&a.ContentSubcategory},
		strCol{&a.IndexNo}, strCol{&a.DocNo}, strCol{&a.Publisher}, dateCol{&a.PublishDate},
		dateCol{&a.EffectiveDate}, strCol{&a.TopicWords}, strCol{&a.OpenCategory}, jsonCol{&a.MetadataJSON},
		strCol{&a.ContentText}, strCol{&a.RawHTMLPath}, strCol{&a.TextPath}, &a.HasAttachment, &a.Status,
		strCol{&a.StatusReason}, strCol{&a.FetchStrategy}, timeCol{&a.FetchedAt},
		nullTimeCol{&a.ExportedToRAGAt}, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// URLHash returns the url_hash of an already normalised URL: the SHA-256 of
// its bytes in lower-case hex.
func URLHash(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:])
}

// UpsertArticle stores an article with these dedupe rules:
// with a native_post_id the row (site_id, native_post_id) is the article,
// and a changed URL moves url and url_hash on that same row; without one,
// url_hash is the key. A URLHash left empty is computed from URL. An article
// of a summary-access site carrying full text, raw HTML or a text file is
// refused with ErrSummaryContent. Only a real change writes the row (and
// moves updated_at, so the export cursor sees it again); fetched_at alone
// does not count as a change. A changed article loses its
// exported_to_rag_at, because the RAG side has not seen this version.
// Attachments are written separately with ReplaceAttachments, or together
// with the article by SaveArticle.
func (s *Store) UpsertArticle(ctx context.Context, a *model.Article) (id int64, outcome string, err error) {
	if a.URLHash == "" {
		a.URLHash = URLHash(a.URL)
	}
	if a.Status == "" {
		a.Status = model.StatusRaw
	}
	err = s.WithTx(ctx, func(tx *Tx) error {
		var err error
		id, outcome, err = tx.upsertArticle(ctx, a)
		return err
	})
	if err != nil {
		return 0, "", fmt.Errorf("upsert article %s: %w", a.URL, err)
	}
	return id, outcome, nil
}

// UpsertArticle is Store.UpsertArticle inside a caller's transaction.
func (t *Tx) UpsertArticle(ctx context.Context, a *model.Article) (id int64, outcome string, err error) {
	if a.URLHash == "" {
		a.URLHash = URLHash(a.URL)
	}
	if a.Status == "" {
		a.Status = model.StatusRaw
	}
	return t.upsertArticle(ctx, a)
}

func (t *Tx) upsertArticle(ctx context.Context, a *model.Article) (int64, string, error) {
	access, err := t.siteAccess(ctx, a.SiteID)
	if err != nil {
		return 0, "", err
	}
	if access != model.AccessFull && (a.ContentText != "" || a.RawHTMLPath != "" || a.TextPath != "") {
		return 0, "", ErrSummaryContent
	}
	// Article writers take turns, and each takes its updated_at while it
	// holds the turn, so commit order is updated_at order and the export
	// cursor (updated_at, id) cannot step past a row that commits later
	// with an earlier stamp. SQLite's write transactions already take
	// turns (BEGIN IMMEDIATE); PostgreSQL's need a transaction-scoped
	// advisory lock.
	if t.s.dialect == DialectPostgres {
		if _, err := t.c.exec(ctx, `SELECT pg_advisory_xact_lock(?, 1)`, articleWriteLock); err != nil {
			return 0, "", fmt.Errorf("wait for the article write turn: %w", err)
		}
	}
	old, err := t.findArticle(ctx, a)
	if err != nil {
		return 0, "", err
	}
	now := t.s.articleStamp()
	if old == nil {
		id, err := t.c.insertID(ctx, `INSERT INTO article (site_id, target_id, dept_id, native_post_id, url,
			url_hash, title, publish_time, source_raw, channel_name, channel_path, content_category,
			content_subcategory, index_no, doc_no, publisher, publish_date, effective_date, topic_words,
			open_category, metadata_json, content_text, raw_html_path, text_path, has_attachment, status,
			status_reason, fetch_strategy, fetched_at, exported_to_rag_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append(t.articleArgs(a), nil, t.s.ts(now), t.s.ts(now))...)
		if err != nil {
			return 0, "", err
		}
		a.ID, a.CreatedAt, a.UpdatedAt, a.ExportedToRAGAt = id, now, now, nil
		return id, OutcomeCreated, nil
	}
	// A row found by url_hash keeps the native id it already has.
	if a.NativePostID == "" {
		a.NativePostID = old.NativePostID
	}
	a.ID, a.CreatedAt = old.ID, old.CreatedAt
	if sameArticle(old, a) {
		a.UpdatedAt, a.ExportedToRAGAt, a.FetchedAt = old.UpdatedAt, old.ExportedToRAGAt, old.FetchedAt
		return old.ID, OutcomeUnchanged, nil
	}
	_, err = t.c.exec(ctx, `UPDATE article SET site_id = ?, target_id = ?, dept_id = ?, native_post_id = ?,
		url = ?, url_hash = ?, title = ?, publish_time = ?, source_raw = ?, channel_name = ?, channel_path = ?,
		content_category = ?, content_subcategory = ?, index_no = ?, doc_no = ?, publisher = ?,
		publish_date = ?, effective_date = ?, topic_words = ?, open_category = ?, metadata_json = ?,
		content_text = ?, raw_html_path = ?, text_path = ?, has_attachment = ?, status = ?, status_reason = ?,
		fetch_strategy = ?, fetched_at = ?, exported_to_rag_at = ?, updated_at = ? WHERE id = ?`,
		append(t.articleArgs(a), nil, t.s.ts(now), old.ID)...)
	if err != nil {
		return 0, "", err
	}
	a.UpdatedAt, a.ExportedToRAGAt = now, nil
	return old.ID, OutcomeUpdated, nil
}

// articleWriteLock is the advisory lock class of article writes ("zhar").
const articleWriteLock = 0x7a686172

// articleStamp is now, made strictly later than the last stamp this store
// handed out (two writes in one microsecond, or a clock step back, would
// otherwise tie or reorder the export cursor).
func (s *Store) articleStamp() time.Time {
	s.stampMu.Lock()
	defer s.stampMu.Unlock()
	t := s.now()
	if !t.After(s.lastStamp) {
		t = s.lastStamp.Add(time.Microsecond)
	}
	s.lastStamp = t
	return t
}

// articleArgs lists the written columns from site_id to fetched_at.
func (t *Tx) articleArgs(a *model.Article) []any {
	return []any{a.SiteID, a.TargetID, a.DeptID, nullStr(a.NativePostID), a.URL, a.URLHash, a.Title,
		t.s.tsPtr(a.PublishTime), nullStr(a.SourceRaw), nullStr(a.ChannelName), nullStr(a.ChannelPath),
		nullStr(a.ContentCategory), nullStr(a.ContentSubcategory), nullStr(a.IndexNo), nullStr(a.DocNo),
		nullStr(a.Publisher), nullStr(a.PublishDate), nullStr(a.EffectiveDate), nullStr(a.TopicWords),
		nullStr(a.OpenCategory), jsonArg(a.MetadataJSON), nullStr(a.ContentText), nullStr(a.RawHTMLPath),
		nullStr(a.TextPath), a.HasAttachment, a.Status, nullStr(a.StatusReason), nullStr(a.FetchStrategy),
		t.s.ts(a.FetchedAt)}
}

// findArticle finds the stored row a is a new version of, or nil.
func (t *Tx) findArticle(ctx context.Context, a *model.Article) (*model.Article, error) {
	if a.NativePostID != "" {
		old, err := scanArticle(t.c.queryRow(ctx, `SELECT `+articleColumns+` FROM article a
			WHERE a.site_id = ? AND a.native_post_id = ?`, a.SiteID, a.NativePostID))
		if err == nil {
			return old, nil
		}
		if notFound(err) != ErrNotFound {
			return nil, err
		}
	}
	old, err := scanArticle(t.c.queryRow(ctx, `SELECT `+articleColumns+` FROM article a WHERE a.url_hash = ?`, a.URLHash))
	if err != nil {
		if notFound(err) == ErrNotFound {
			return nil, nil
		}
		return nil, err
	}
	// The URL is known under another identity. The same site's row without a
	// native id is this article seen before its id was known: adopt it.
	// Anything else is a different article holding the URL; let UNIQUE(url_hash)
	// refuse the insert rather than merge two posts.
	if a.NativePostID != "" && (old.SiteID != a.SiteID || old.NativePostID != "") {
		return nil, nil
	}
	return old, nil
}

func (t *Tx) siteAccess(ctx context.Context, siteID int64) (string, error) {
	var access string
	err := t.c.queryRow(ctx, `SELECT access FROM crawl_site WHERE id = ?`, siteID).Scan(&access)
	if err != nil {
		return "", fmt.Errorf("site %d: %w", siteID, notFound(err))
	}
	return access, nil
}

// sameArticle compares what a crawl can change; fetched_at and the export
// stamp do not count.
func sameArticle(a, b *model.Article) bool {
	x, y := *a, *b
	for _, v := range []*model.Article{&x, &y} {
		v.FetchedAt, v.ExportedToRAGAt, v.CreatedAt, v.UpdatedAt, v.Attachments = time.Time{}, nil, time.Time{}, time.Time{}, nil
		v.MetadataJSON = json.RawMessage(canonicalJSON(v.MetadataJSON))
		if v.PublishTime != nil {
			pt := v.PublishTime.UTC().Truncate(time.Microsecond)
			v.PublishTime = &pt
		}
	}
	return reflect.DeepEqual(x, y)
}

// ArticleByURLHash returns the article with urlHash, or ErrNotFound.
func (s *Store) ArticleByURLHash(ctx context.Context, urlHash string) (*model.Article, error) {
	a, err := scanArticle(s.conn().queryRow(ctx, `SELECT `+articleColumns+` FROM article a WHERE a.url_hash = ?`, urlHash))
	if err != nil {
		return nil, fmt.Errorf("article by url hash %s: %w", urlHash, notFound(err))
	}
	return a, nil
}

// ArticleByNativeID returns the article (siteID, nativePostID), or ErrNotFound.
func (s *Store) ArticleByNativeID(ctx context.Context, siteID int64, nativePostID string) (*model.Article, error) {
	a, err := scanArticle(s.conn().queryRow(ctx, `SELECT `+articleColumns+` FROM article a
		WHERE a.site_id = ? AND a.native_post_id = ?`, siteID, nativePostID))
	if err != nil {
		return nil, fmt.Errorf("article %d/%s: %w", siteID, nativePostID, notFound(err))
	}
	return a, nil
}

// ArticleByID returns the article with id and its attachments, or ErrNotFound.
func (s *Store) ArticleByID(ctx context.Context, id int64) (*model.Article, error) {
	a, err := scanArticle(s.conn().queryRow(ctx, `SELECT `+articleColumns+` FROM article a WHERE a.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("article %d: %w", id, notFound(err))
	}
	atts, err := s.attachments(ctx, []int64{id})
	if err != nil {
		return nil, fmt.Errorf("article %d: %w", id, err)
	}
	a.Attachments = atts[id]
	return a, nil
}

// SaveArticle stores an article, its attachments and the frontier entry
// it came from in one transaction, so an article is never seen without
// the attachments it was stored with, and a link is marked fetched exactly
// when its article is stored. A changed attachment list is a new version
// of the article: updated_at moves (the export cursor sees it again) and
// exported_to_rag_at is cleared. frontierID 0 marks no entry.
func (s *Store) SaveArticle(ctx context.Context, a *model.Article, atts []model.Attachment, frontierID int64, mark FrontierMark) (id int64, outcome string, err error) {
	if a.URLHash == "" {
		a.URLHash = URLHash(a.URL)
	}
	if a.Status == "" {
		a.Status = model.StatusRaw
	}
	a.HasAttachment = len(atts) > 0
	err = s.WithTx(ctx, func(tx *Tx) error {
		var err error
		id, outcome, err = tx.upsertArticle(ctx, a)
		if err != nil {
			return err
		}
		if a.Card != nil {
			a.Card.SiteID = a.SiteID
			if err := tx.saveCard(ctx, id, a.Card); err != nil {
				return err
			}
		}
		changed, err := tx.replaceAttachments(ctx, id, atts)
		if err != nil {
			return fmt.Errorf("attachments: %w", err)
		}
		if changed && outcome == OutcomeUnchanged {
			now := s.articleStamp()
			if _, err := tx.c.exec(ctx, `UPDATE article SET updated_at = ?, exported_to_rag_at = NULL WHERE id = ?`,
				s.ts(now), id); err != nil {
				return err
			}
			a.UpdatedAt, a.ExportedToRAGAt, outcome = now, nil, OutcomeUpdated
		}
		if frontierID != 0 {
			return tx.markFrontier(ctx, frontierID, mark, &id)
		}
		return nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("save article %s: %w", a.URL, err)
	}
	a.Attachments = atts
	return id, outcome, nil
}

// BlobRefs returns every blob path a row refers to: raw HTML, text and
// attachment files, the raw bodies of the acquisition API's snapshots, and
// the corpus's snapshots and release files.
func (s *Store) BlobRefs(ctx context.Context) (map[string]bool, error) {
	rows, err := s.conn().query(ctx, `SELECT raw_html_path FROM article WHERE raw_html_path IS NOT NULL
		UNION SELECT text_path FROM article WHERE text_path IS NOT NULL
		UNION SELECT file_path FROM attachment WHERE file_path IS NOT NULL
		UNION SELECT raw_path FROM fetch_snapshot
		UNION SELECT warc_path FROM corpus_snapshot UNION SELECT text_path FROM corpus_snapshot
		UNION SELECT manifest_path FROM corpus_snapshot UNION SELECT manifest_path FROM corpus_release
		UNION SELECT blob_path FROM corpus_release_file`)
	if err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("blob references: %w", err)
		}
		out[p] = true
	}
	return out, rows.Err()
}
