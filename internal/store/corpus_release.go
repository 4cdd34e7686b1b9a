package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Release states.
const (
	ReleaseBuilt    = "built"    // written, not verified yet
	ReleaseVerified = "verified" // every hash checked
	ReleaseFailed   = "failed"   // a check failed: never activated
)

// CorpusRelease is one immutable release.
type CorpusRelease struct {
	Version        string
	State          string
	Works          int
	Held           int
	ManifestPath   string // blob
	ManifestSHA256 string
	BuiltBy        string
	BuiltAt        time.Time
	VerifiedAt     *time.Time
	VerifyError    string
	Active         bool // filled by lists
}

// CorpusReleaseFile is one file of a release, kept as a blob too.
type CorpusReleaseFile struct {
	Path     string
	BlobPath string
	SHA256   string
	Bytes    int64
}

// CorpusActive is the active release pointer.
type CorpusActive struct {
	Version     string
	Previous    string
	ActivatedBy string
	ActivatedAt time.Time
}

const releaseCols = `version, state, works, held, manifest_path, manifest_sha256, built_by, built_at, verified_at, verify_error`

func scanRelease(sc interface{ Scan(...any) error }) (*CorpusRelease, error) {
	var r CorpusRelease
	if err := sc.Scan(&r.Version, &r.State, &r.Works, &r.Held, &r.ManifestPath, &r.ManifestSHA256, &r.BuiltBy,
		timeCol{&r.BuiltAt}, nullTimeCol{&r.VerifiedAt}, &r.VerifyError); err != nil {
		return nil, err
	}
	return &r, nil
}

// releaseUnfinished is what a claimed release says until its build ends.
const releaseUnfinished = "构建未完成：构建进程在写完之前停止了（build did not finish）"

// ClaimCorpusRelease reserves version for a build by inserting its row,
// failed with releaseUnfinished until FinishCorpusRelease: two builds
// never write the same version, and a build that dies half way leaves a
// row that says so (and can never be activated). A version taken already
// is ErrCorpusRace.
func (s *Store) ClaimCorpusRelease(ctx context.Context, version, actor string) error {
	_, err := s.conn().exec(ctx, `INSERT INTO corpus_release (version, state, works, held, manifest_path, manifest_sha256,
		built_by, built_at, verify_error) VALUES (?, 'failed', 0, 0, '', ?, ?, ?, ?)`,
		version, strings.Repeat("0", 64), actor, s.ts(s.now()), releaseUnfinished)
	if err != nil {
		if ConstraintViolation(err) != "" {
			return fmt.Errorf("release %s is taken: %w", version, ErrCorpusRace)
		}
		return fmt.Errorf("claim release %s: %w", version, err)
	}
	return nil
}

// AbandonCorpusRelease records why a claimed release's build stopped;
// the release stays failed.
func (s *Store) AbandonCorpusRelease(ctx context.Context, version string, why error) error {
	_, err := s.conn().exec(ctx, `UPDATE corpus_release SET verify_error = ? WHERE version = ? AND manifest_path = ''`,
		clipRunes("构建失败（build failed）："+why.Error(), 2000), version)
	return err
}

// FinishCorpusRelease records a claimed release as built, with its files,
// the release events of its works and the audit entry, in one
// transaction.
func (s *Store) FinishCorpusRelease(ctx context.Context, r *CorpusRelease, files []CorpusReleaseFile, events []CorpusEvent) error {
	now := s.now()
	r.BuiltAt, r.State = now, ReleaseBuilt
	return s.WithTx(ctx, func(tx *Tx) error {
		res, err := tx.c.exec(ctx, `UPDATE corpus_release SET state = 'built', works = ?, held = ?, manifest_path = ?,
			manifest_sha256 = ?, built_at = ?, verify_error = '' WHERE version = ? AND built_by = ? AND manifest_path = ''`,
			r.Works, r.Held, r.ManifestPath, r.ManifestSHA256, s.ts(now), r.Version, r.BuiltBy)
		if err != nil {
			return fmt.Errorf("record release %s: %w", r.Version, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("release %s was not claimed by this build", r.Version)
		}
		for _, f := range files {
			if _, err := tx.c.exec(ctx, `INSERT INTO corpus_release_file (version, path, blob_path, sha256, bytes)
				VALUES (?, ?, ?, ?, ?)`, r.Version, f.Path, f.BlobPath, f.SHA256, f.Bytes); err != nil {
				return fmt.Errorf("record release %s: %w", r.Version, err)
			}
		}
		for i := range events {
			if err := appendCorpusEvent(ctx, tx.c, s, &events[i], now); err != nil {
				return err
			}
		}
		after, _ := json.Marshal(map[string]any{"works": r.Works, "held": r.Held, "manifest_sha256": r.ManifestSHA256})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: r.BuiltBy, Action: "corpus.release.build", ObjectType: "corpus_release",
			ObjectID: r.Version, After: after})
	})
}

// CorpusRelease returns release version, ErrNotFound when there is none.
func (s *Store) CorpusRelease(ctx context.Context, version string) (*CorpusRelease, error) {
	r, err := scanRelease(s.conn().queryRow(ctx, `SELECT `+releaseCols+` FROM corpus_release WHERE version = ?`, version))
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", version, notFound(err))
	}
	return r, nil
}

// CorpusReleases returns every release, newest first, the active one
// marked.
func (s *Store) CorpusReleases(ctx context.Context) ([]CorpusRelease, error) {
	act, err := s.ActiveCorpusRelease(ctx)
	if err != nil && err != ErrNotFound {
		return nil, err
	}
	rows, err := s.conn().query(ctx, `SELECT `+releaseCols+` FROM corpus_release ORDER BY built_at DESC, version DESC`)
	if err != nil {
		return nil, fmt.Errorf("releases: %w", err)
	}
	defer rows.Close()
	var out []CorpusRelease
	for rows.Next() {
		r, err := scanRelease(rows)
		if err != nil {
			return nil, fmt.Errorf("releases: %w", err)
		}
		r.Active = act != nil && act.Version == r.Version
		out = append(out, *r)
	}
	return out, rows.Err()
}

// CorpusReleaseFiles returns release version's files by path.
func (s *Store) CorpusReleaseFiles(ctx context.Context, version string) ([]CorpusReleaseFile, error) {
	rows, err := s.conn().query(ctx, `SELECT path, blob_path, sha256, bytes FROM corpus_release_file WHERE version = ? ORDER BY path`, version)
	if err != nil {
		return nil, fmt.Errorf("release %s files: %w", version, err)
	}
	defer rows.Close()
	var out []CorpusReleaseFile
	for rows.Next() {
		var f CorpusReleaseFile
		if err := rows.Scan(&f.Path, &f.BlobPath, &f.SHA256, &f.Bytes); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// SetCorpusReleaseVerified records a verification of release version: a
// nil problem makes it verified, otherwise failed with the problem. A
// failed release stays failed.
func (s *Store) SetCorpusReleaseVerified(ctx context.Context, version string, problem error, actor string) error {
	state, msg := ReleaseVerified, ""
	if problem != nil {
		state, msg = ReleaseFailed, clipRunes(problem.Error(), 2000)
	}
	now := s.now()
	return s.WithTx(ctx, func(tx *Tx) error {
		if _, err := tx.c.exec(ctx, `UPDATE corpus_release SET state = CASE WHEN state = 'failed' THEN 'failed' ELSE ? END,
			verified_at = ?, verify_error = ? WHERE version = ?`, state, s.ts(now), msg, version); err != nil {
			return fmt.Errorf("release %s: %w", version, err)
		}
		after, _ := json.Marshal(map[string]string{"state": state, "error": msg})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "corpus.release.verify", ObjectType: "corpus_release",
			ObjectID: version, After: after})
	})
}

// ActiveCorpusRelease returns the active pointer, ErrNotFound when no
// release was ever activated.
func (s *Store) ActiveCorpusRelease(ctx context.Context) (*CorpusActive, error) {
	var a CorpusActive
	err := s.conn().queryRow(ctx, `SELECT version, previous, activated_by, activated_at FROM corpus_active WHERE id = 1`).Scan(
		&a.Version, strCol{&a.Previous}, &a.ActivatedBy, timeCol{&a.ActivatedAt})
	if err != nil {
		return nil, notFound(err)
	}
	return &a, nil
}

// ActivateCorpusRelease moves the active pointer to version, which must
// be verified, in one transaction with its audit entry: a reader sees the
// old pointer or the new one, never neither. It returns the version that
// was active before ("" for none).
func (s *Store) ActivateCorpusRelease(ctx context.Context, version, actor, action string) (string, error) {
	now := s.now()
	var prev string
	err := s.WithTx(ctx, func(tx *Tx) error {
		var state string
		if err := tx.c.queryRow(ctx, `SELECT state FROM corpus_release WHERE version = ?`, version).Scan(&state); err != nil {
			return fmt.Errorf("release %s: %w", version, notFound(err))
		}
		if state != ReleaseVerified {
			return fmt.Errorf("release %s is %s, not verified: run `zhizhi release verify %s` first", version, state, version)
		}
		if err := tx.c.queryRow(ctx, `SELECT version FROM corpus_active WHERE id = 1`).Scan(&prev); err != nil && notFound(err) != ErrNotFound {
			return fmt.Errorf("active release: %w", err)
		}
		if prev == version {
			return fmt.Errorf("release %s is active already", version)
		}
		if _, err := tx.c.exec(ctx, `INSERT INTO corpus_active (id, version, previous, activated_by, activated_at)
			VALUES (1, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version, previous = excluded.previous,
			activated_by = excluded.activated_by, activated_at = excluded.activated_at`,
			version, nullStr(prev), actor, s.ts(now)); err != nil {
			return fmt.Errorf("activate release %s: %w", version, err)
		}
		before, _ := json.Marshal(map[string]string{"active": prev})
		after, _ := json.Marshal(map[string]string{"active": version})
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: action, ObjectType: "corpus_release",
			ObjectID: version, Before: before, After: after})
	})
	return prev, err
}
