package store

import (
	"context"
	"fmt"
)

// CorpusCandidate returns candidate id with both works' current titles,
// ErrNotFound when there is none.
func (s *Store) CorpusCandidate(ctx context.Context, id int64) (*CorpusCandidate, error) {
	var k CorpusCandidate
	err := s.conn().queryRow(ctx, `SELECT c.id, c.work_a, c.work_b, c.kind, c.distance, c.detail, c.status, c.decided_by,
		c.decided_at, c.created_at,
		coalesce((SELECT r.title FROM corpus_revision r JOIN corpus_work w ON w.id = r.work_id AND w.current_rev = r.rev WHERE w.id = c.work_a), ''),
		coalesce((SELECT r.title FROM corpus_revision r JOIN corpus_work w ON w.id = r.work_id AND w.current_rev = r.rev WHERE w.id = c.work_b), '')
		FROM corpus_candidate c WHERE c.id = ?`, id).Scan(&k.ID, &k.WorkA, &k.WorkB, &k.Kind, &k.Distance, &k.Detail,
		&k.Status, &k.DecidedBy, nullTimeCol{&k.DecidedAt}, timeCol{&k.CreatedAt}, &k.TitleA, &k.TitleB)
	if err != nil {
		return nil, fmt.Errorf("candidate %d: %w", id, notFound(err))
	}
	return &k, nil
}
