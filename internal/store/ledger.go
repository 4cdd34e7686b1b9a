package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"zhizhi/internal/model"
)

// LedgerTree is what a sealed day keeps of one ledger: its records in order
// and the stored hashes of their Merkle tree (tlog's numbering, index i at
// Hashes[i]).
type LedgerTree struct {
	Records []string
	Hashes  []string
}

// LedgerKey returns the ledger's signing key and its verifier key, creating
// them with gen when the database has none. Several processes may start at
// once: each may generate a key, only the first insert is kept, and all of
// them return that one.
func (s *Store) LedgerKey(ctx context.Context, gen func() (signer, verifier string, err error)) (signer, verifier string, err error) {
	err = s.conn().queryRow(ctx, `SELECT signer_key, verifier_key FROM ledger_key WHERE id = 1`).Scan(&signer, &verifier)
	if err == nil {
		return signer, verifier, nil
	}
	if !errors.Is(notFound(err), ErrNotFound) {
		return "", "", fmt.Errorf("ledger key: %w", err)
	}
	newSigner, newVerifier, err := gen()
	if err != nil {
		return "", "", fmt.Errorf("ledger key: %w", err)
	}
	if _, err := s.conn().exec(ctx, `INSERT INTO ledger_key (id, signer_key, verifier_key, created_at)
		VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, newSigner, newVerifier, s.ts(s.now())); err != nil {
		return "", "", fmt.Errorf("ledger key: %w", err)
	}
	err = s.conn().queryRow(ctx, `SELECT signer_key, verifier_key FROM ledger_key WHERE id = 1`).Scan(&signer, &verifier)
	if err != nil {
		return "", "", fmt.Errorf("ledger key: %w", err)
	}
	return signer, verifier, nil
}

// FirstCrawlLogAt returns when the oldest crawl_log row was logged; ok is
// false when there is none.
func (s *Store) FirstCrawlLogAt(ctx context.Context) (at time.Time, ok bool, err error) {
	var first *time.Time
	if err := s.conn().queryRow(ctx, `SELECT MIN(occurred_at) FROM crawl_log`).Scan(nullTimeCol{&first}); err != nil {
		return time.Time{}, false, fmt.Errorf("first crawl log: %w", err)
	}
	if first == nil {
		return time.Time{}, false, nil
	}
	return *first, true, nil
}

// CrawlLogsBetween returns the crawl_log rows logged in [from, to), in id
// order: a day of the crawler ledger.
func (s *Store) CrawlLogsBetween(ctx context.Context, from, to time.Time) ([]model.CrawlLog, error) {
	rows, err := s.conn().query(ctx, `SELECT id, host, purpose, method, http_status, bytes, bytes_saved, success,
		occurred_at, duration_ms FROM crawl_log WHERE occurred_at >= ? AND occurred_at < ? ORDER BY id`, s.ts(from), s.ts(to))
	if err != nil {
		return nil, fmt.Errorf("crawl logs of a day: %w", err)
	}
	defer rows.Close()
	var out []model.CrawlLog
	for rows.Next() {
		var l model.CrawlLog
		if err := rows.Scan(&l.ID, &l.Host, &l.Purpose, &l.Method, &l.HTTPStatus, &l.Bytes, &l.BytesSaved,
			&l.Success, timeCol{&l.OccurredAt}, &l.DurationMS); err != nil {
			return nil, fmt.Errorf("crawl logs of a day: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawl logs of a day: %w", err)
	}
	return out, nil
}

// LastLedgerDay returns the newest sealed day; ok is false before the first
// seal.
func (s *Store) LastLedgerDay(ctx context.Context) (d model.LedgerDay, ok bool, err error) {
	d, err = s.scanLedgerDay(s.conn().queryRow(ctx, ledgerDaySelect+` ORDER BY day DESC LIMIT 1`))
	if errors.Is(err, ErrNotFound) {
		return model.LedgerDay{}, false, nil
	}
	if err != nil {
		return model.LedgerDay{}, false, fmt.Errorf("last sealed day: %w", err)
	}
	return d, true, nil
}

// LedgerDays returns the sealed days from from to to (inclusive, YYYY-MM-DD;
// empty means no bound), oldest first.
func (s *Store) LedgerDays(ctx context.Context, from, to string) ([]model.LedgerDay, error) {
	query := ledgerDaySelect + ` WHERE 1 = 1`
	var args []any
	if from != "" {
		query += ` AND day >= ?`
		args = append(args, from)
	}
	if to != "" {
		query += ` AND day <= ?`
		args = append(args, to)
	}
	rows, err := s.conn().query(ctx, query+` ORDER BY day`, args...)
	if err != nil {
		return nil, fmt.Errorf("sealed days: %w", err)
	}
	defer rows.Close()
	var out []model.LedgerDay
	for rows.Next() {
		d, err := s.scanLedgerDay(rows)
		if err != nil {
			return nil, fmt.Errorf("sealed days: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sealed days: %w", err)
	}
	return out, nil
}

// SealedLedger returns what was stored of one ledger of one sealed day.
func (s *Store) SealedLedger(ctx context.Context, day, ledger string) (SealedLedger, error) {
	var out SealedLedger
	rows, err := s.conn().query(ctx, `SELECT seq, data FROM ledger_record WHERE day = ? AND ledger = ? ORDER BY seq`, day, ledger)
	if err != nil {
		return out, fmt.Errorf("sealed records of %s: %w", day, err)
	}
	for rows.Next() {
		var r LedgerRow
		if err := rows.Scan(&r.Seq, &r.Data); err != nil {
			rows.Close()
			return out, fmt.Errorf("sealed records of %s: %w", day, err)
		}
		out.Records = append(out.Records, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("sealed records of %s: %w", day, err)
	}
	rows, err = s.conn().query(ctx, `SELECT idx, hash FROM ledger_hash WHERE day = ? AND ledger = ? ORDER BY idx`, day, ledger)
	if err != nil {
		return out, fmt.Errorf("sealed hashes of %s: %w", day, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r LedgerRow
		if err := rows.Scan(&r.Seq, &r.Data); err != nil {
			return out, fmt.Errorf("sealed hashes of %s: %w", day, err)
		}
		out.Hashes = append(out.Hashes, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("sealed hashes of %s: %w", day, err)
	}
	return out, nil
}

// LedgerRow is one stored row of a sealed ledger: a record (Seq, Data) or a
// stored hash (Seq is its index, Data its hex). The position is kept as
// stored so that a verifier can tell a missing or added row.
type LedgerRow struct {
	Seq  int64
	Data string
}

// SealedLedger is one ledger of one sealed day as stored.
type SealedLedger struct {
	Records []LedgerRow
	Hashes  []LedgerRow
}

// SealLedgerDay seals day in one transaction: it reads the head of the day
// before (prev is nil when no day before it is sealed), asks build for the
// day's row and trees, and stores them. sealed is false, with no error,
// when another sealer stored the day first: a day is sealed once.
func (s *Store) SealLedgerDay(ctx context.Context, day string,
	build func(prev *model.LedgerDay) (model.LedgerDay, map[string]LedgerTree, error)) (sealed bool, err error) {
	err = s.WithTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.c.queryRow(ctx, `SELECT COUNT(*) FROM ledger_day WHERE day = ?`, day).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		var prev *model.LedgerDay
		p, err := s.scanLedgerDay(tx.c.queryRow(ctx, ledgerDaySelect+` WHERE day < ? ORDER BY day DESC LIMIT 1`, day))
		switch {
		case err == nil:
			prev = &p
		case !errors.Is(err, ErrNotFound):
			return err
		}
		d, trees, err := build(prev)
		if err != nil {
			return err
		}
		if d.Day != day {
			return fmt.Errorf("built day %s, want %s", d.Day, day)
		}
		res, err := tx.c.exec(ctx, `INSERT INTO ledger_day (day, prev_head, human_count, human_root, crawler_count,
			crawler_root, head, note, sealed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day) DO NOTHING`,
			d.Day, d.PrevHead, d.HumanCount, d.HumanRoot, d.CrawlerCount, d.CrawlerRoot, d.Head, d.Note, s.ts(s.now()))
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k == 0 {
			return err // another sealer's row, committed while this one built
		}
		for _, ledger := range []string{model.LedgerHuman, model.LedgerCrawler} {
			t := trees[ledger]
			if err := insertLedgerRows(ctx, tx, `INSERT INTO ledger_record (day, ledger, seq, data) VALUES `, day, ledger, t.Records); err != nil {
				return err
			}
			if err := insertLedgerRows(ctx, tx, `INSERT INTO ledger_hash (day, ledger, idx, hash) VALUES `, day, ledger, t.Hashes); err != nil {
				return err
			}
		}
		sealed = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("seal %s: %w", day, err)
	}
	return sealed, nil
}

// insertLedgerRows stores values as rows 0, 1, … of one ledger of day,
// many to a statement: a busy day has tens of thousands of requests, and
// one round trip each would hold the sealing transaction open for long.
func insertLedgerRows(ctx context.Context, tx *Tx, insert, day, ledger string, values []string) error {
	const perStatement = 500 // 2,000 parameters, well under both dialects' limits
	for start := 0; start < len(values); start += perStatement {
		end := min(start+perStatement, len(values))
		var q strings.Builder
		q.WriteString(insert)
		args := make([]any, 0, 4*(end-start))
		for i := start; i < end; i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?)")
			args = append(args, day, ledger, i, values[i])
		}
		if _, err := tx.c.exec(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

const ledgerDaySelect = `SELECT day, prev_head, human_count, human_root, crawler_count, crawler_root, head, note,
	sealed_at FROM ledger_day`

type rowScanner interface{ Scan(dest ...any) error }

func (s *Store) scanLedgerDay(r rowScanner) (model.LedgerDay, error) {
	var d model.LedgerDay
	err := r.Scan(dateCol{&d.Day}, &d.PrevHead, &d.HumanCount, &d.HumanRoot, &d.CrawlerCount, &d.CrawlerRoot,
		&d.Head, &d.Note, timeCol{&d.SealedAt})
	if err != nil {
		return d, notFound(err)
	}
	return d, nil
}
