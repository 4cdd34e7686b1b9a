package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// AuditEntry is one recorded change: who made it, what it was, on which
// object, and the object before and after (JSON; nil for a creation's
// before or a deletion's after).
type AuditEntry struct {
	ID         int64           `json:"id"`
	At         time.Time       `json:"at"`
	Actor      string          `json:"actor"`       // "user:alice", "apikey:7(alice)", "cli:root"
	Action     string          `json:"action"`      // "target.update", "host.clear", "user.add", …
	ObjectType string          `json:"object_type"` // "target", "host", "user", …
	ObjectID   string          `json:"object_id"`
	Before     json.RawMessage `json:"before,omitempty"`
	After      json.RawMessage `json:"after,omitempty"`
	Detail     string          `json:"detail,omitempty"` // a reason the person gave, a summary
}

// RecordAudit adds e to the audit trail in the same transaction as the
// change it records, so a change is never kept without its entry, nor an
// entry without its change. It sets e.ID and, when zero, e.At.
func (t *Tx) RecordAudit(ctx context.Context, e *AuditEntry) error {
	return recordAudit(ctx, t.c, t.s, e)
}

// RecordAudit adds e to the audit trail on its own, for a change that is a
// single statement already committed elsewhere.
func (s *Store) RecordAudit(ctx context.Context, e *AuditEntry) error {
	return recordAudit(ctx, s.conn(), s, e)
}

const maxAuditDetail = 2000

func recordAudit(ctx context.Context, c conn, s *Store, e *AuditEntry) error {
	if strings.TrimSpace(e.Actor) == "" || strings.TrimSpace(e.Action) == "" {
		return fmt.Errorf("record audit: an entry needs an actor and an action")
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	if len(e.Detail) > maxAuditDetail {
		cut := maxAuditDetail
		for cut > 0 && e.Detail[cut]&0xC0 == 0x80 { // keep UTF-8 whole
			cut--
		}
		e.Detail = e.Detail[:cut]
	}
	id, err := c.insertID(ctx, `INSERT INTO audit_log (at, actor, action, object_type, object_id,
		before_json, after_json, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ts(e.At), e.Actor, e.Action, e.ObjectType, e.ObjectID, jsonArg(e.Before), jsonArg(e.After), e.Detail)
	if err != nil {
		return fmt.Errorf("record audit %s %s: %w", e.Action, e.ObjectID, err)
	}
	e.ID = id
	return nil
}

// AuditFilter selects audit entries; zero fields select all.
type AuditFilter struct {
	ObjectType string
	ObjectID   string
	Actor      string
	BeforeID   int64 // keyset: entries older than this id
	Limit      int   // default 50, at most 500
}

// ListAudit returns audit entries newest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	var (
		where []string
		args  []any
	)
	if f.ObjectType != "" {
		where, args = append(where, "object_type = ?"), append(args, f.ObjectType)
	}
	if f.ObjectID != "" {
		where, args = append(where, "object_id = ?"), append(args, f.ObjectID)
	}
	if f.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, f.Actor)
	}
	if f.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	query := `SELECT id, at, actor, action, object_type, object_id, before_json, after_json, detail FROM audit_log`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC LIMIT ?`
	rows, err := s.conn().query(ctx, query, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.ID, timeCol{&e.At}, &e.Actor, &e.Action, &e.ObjectType, &e.ObjectID,
			jsonCol{&e.Before}, jsonCol{&e.After}, &e.Detail); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}
