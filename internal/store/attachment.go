package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

const attachmentColumns = `id, article_id, url, file_name, file_ext, size_bytes, file_path, file_hash, downloaded_at,
	text_content, text_class, page_count, text_error`

func scanAttachment(row interface{ Scan(...any) error }) (*model.Attachment, error) {
	var a model.Attachment
	err := row.Scan(&a.ID, &a.ArticleID, strCol{&a.URL}, &a.FileName, strCol{&a.FileExt}, &a.SizeBytes,
		strCol{&a.FilePath}, strCol{&a.FileHash}, timeCol{&a.DownloadedAt}, &a.Text, &a.TextClass, &a.PageCount, &a.TextError)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// ReplaceAttachments makes atts the attachments of the article, in one
// transaction, and keeps has_attachment in step. Identical lists write
// nothing. For a summary-access site, attachments may be listed (name, URL)
// but never stored: an entry with a file path or hash is refused with
// ErrSummaryContent.
func (s *Store) ReplaceAttachments(ctx context.Context, articleID int64, atts []model.Attachment) error {
	err := s.WithTx(ctx, func(tx *Tx) error {
		_, err := tx.replaceAttachments(ctx, articleID, atts)
		return err
	})
	if err != nil {
		return fmt.Errorf("replace attachments of article %d: %w", articleID, err)
	}
	return nil
}

// replaceAttachments is ReplaceAttachments inside a transaction; it reports
// whether the list changed.
func (tx *Tx) replaceAttachments(ctx context.Context, articleID int64, atts []model.Attachment) (changed bool, err error) {
	var siteID int64
	if err := tx.c.queryRow(ctx, `SELECT site_id FROM article WHERE id = ?`, articleID).Scan(&siteID); err != nil {
		return false, notFound(err)
	}
	access, err := tx.siteAccess(ctx, siteID)
	if err != nil {
		return false, err
	}
	if access != model.AccessFull {
		for _, a := range atts {
			if a.FilePath != "" || a.FileHash != "" {
				return false, ErrSummaryContent
			}
		}
	}
	old, err := tx.attachments(ctx, []int64{articleID})
	if err != nil {
		return false, err
	}
	if sameAttachments(old[articleID], atts) {
		return false, nil
	}
	if _, err := tx.c.exec(ctx, `DELETE FROM attachment WHERE article_id = ?`, articleID); err != nil {
		return false, err
	}
	for i := range atts {
		a := &atts[i]
		a.ArticleID = articleID
		id, err := tx.c.insertID(ctx, `INSERT INTO attachment (article_id, url, file_name, file_ext,
			size_bytes, file_path, file_hash, downloaded_at, text_content, text_class, page_count, text_error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			articleID, nullStr(a.URL), a.FileName, nullStr(a.FileExt), a.SizeBytes, nullStr(a.FilePath),
			nullStr(a.FileHash), tx.s.tsPtr(&a.DownloadedAt), a.Text, a.TextClass, a.PageCount, a.TextError)
		if err != nil {
			return false, err
		}
		a.ID = id
	}
	_, err = tx.c.exec(ctx, `UPDATE article SET has_attachment = ? WHERE id = ? AND has_attachment <> ?`,
		len(atts) > 0, articleID, len(atts) > 0)
	return true, err
}

func sameAttachments(a, b []model.Attachment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.URL != y.URL || x.FileName != y.FileName || x.FileExt != y.FileExt || x.SizeBytes != y.SizeBytes ||
			x.FilePath != y.FilePath || x.FileHash != y.FileHash ||
			x.Text != y.Text || x.TextClass != y.TextClass || x.PageCount != y.PageCount || x.TextError != y.TextError ||
			!x.DownloadedAt.Equal(y.DownloadedAt.UTC().Truncate(time.Microsecond)) {
			return false
		}
	}
	return true
}

// attachments loads the attachments of the given articles, in id order.
func (s *Store) attachments(ctx context.Context, articleIDs []int64) (map[int64][]model.Attachment, error) {
	return attachmentsOf(ctx, s.conn(), articleIDs)
}

func (t *Tx) attachments(ctx context.Context, articleIDs []int64) (map[int64][]model.Attachment, error) {
	return attachmentsOf(ctx, t.c, articleIDs)
}

func attachmentsOf(ctx context.Context, c conn, articleIDs []int64) (map[int64][]model.Attachment, error) {
	out := make(map[int64][]model.Attachment, len(articleIDs))
	if len(articleIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(articleIDs))
	for i, id := range articleIDs {
		args[i] = id
	}
	rows, err := c.query(ctx, `SELECT `+attachmentColumns+` FROM attachment
		WHERE article_id IN (`+placeholders(len(args))+`) ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("load attachments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return nil, fmt.Errorf("load attachments: %w", err)
		}
		out[a.ArticleID] = append(out[a.ArticleID], *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load attachments: %w", err)
	}
	return out, nil
}

// ArticleAttachments returns the attachments of an article, in id order.
func (s *Store) ArticleAttachments(ctx context.Context, articleID int64) ([]model.Attachment, error) {
	atts, err := s.attachments(ctx, []int64{articleID})
	if err != nil {
		return nil, fmt.Errorf("attachments of article %d: %w", articleID, err)
	}
	return atts[articleID], nil
}
