package store

import (
	"context"
	"fmt"
)

// CorpusCandidatesPage returns up to limit candidates in status (all when
// empty) with ids below beforeID (no bound when 0), newest first, with
// both works' current titles: a page of the review queue that candidates
// added meanwhile never shift.
func (s *Store) CorpusCandidatesPage(ctx context.Context, status string, beforeID int64, limit int) ([]CorpusCandidate, error) {
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	q := `SELECT c.id, c.work_a, c.work_b, c.kind, c.distance, c.detail, c.status, c.decided_by, c.decided_at, c.created_at,
		coalesce((SELECT r.title FROM corpus_revision r JOIN corpus_work w ON w.id = r.work_id AND w.current_rev = r.rev WHERE w.id = c.work_a), ''),
		coalesce((SELECT r.title FROM corpus_revision r JOIN corpus_work w ON w.id = r.work_id AND w.current_rev = r.rev WHERE w.id = c.work_b), '')
		FROM corpus_candidate c WHERE 1 = 1`
	var args []any
	if status != "" {
		q += ` AND c.status = ?`
		args = append(args, status)
	}
	if beforeID > 0 {
		q += ` AND c.id < ?`
		args = append(args, beforeID)
	}
	q += fmt.Sprintf(` ORDER BY c.id DESC LIMIT %d`, limit)
	rows, err := s.conn().query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("corpus candidates: %w", err)
	}
	defer rows.Close()
	var out []CorpusCandidate
	for rows.Next() {
		var k CorpusCandidate
		if err := rows.Scan(&k.ID, &k.WorkA, &k.WorkB, &k.Kind, &k.Distance, &k.Detail, &k.Status, &k.DecidedBy,
			nullTimeCol{&k.DecidedAt}, timeCol{&k.CreatedAt}, &k.TitleA, &k.TitleB); err != nil {
			return nil, fmt.Errorf("corpus candidates: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}
