package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// TargetOverride is one field of a target that a person changed in the
// console. On a YAML target it outlives `config sync`, which applies it over
// the files; on a console target it only says who changed the field last.
type TargetOverride struct {
	TargetID  int64
	Field     string // one of model.TargetFields
	Value     string // as model.TargetFieldValue writes it
	YAMLValue *string
	ChangedBy string
	ChangedAt time.Time
}

// TargetByCode is Store.TargetByCode inside the transaction.
func (t *Tx) TargetByCode(ctx context.Context, code string) (*model.Target, error) {
	tg, err := scanTarget(t.c.queryRow(ctx, `SELECT `+targetColumns+` FROM crawl_target t WHERE t.target_code = ?`, code))
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", code, notFound(err))
	}
	return tg, nil
}

// SetTargetEnabled switches one target on or off, leaving every other
// field as it is.
func (t *Tx) SetTargetEnabled(ctx context.Context, targetID int64, enabled bool) error {
	if _, err := t.c.exec(ctx, `UPDATE crawl_target SET enabled = ?, updated_at = ? WHERE id = ?`,
		enabled, t.s.ts(t.s.now()), targetID); err != nil {
		return fmt.Errorf("set target %d enabled: %w", targetID, err)
	}
	return nil
}

// SetTargetOverride records o, replacing an override of the same field. A
// zero ChangedAt is now.
func (t *Tx) SetTargetOverride(ctx context.Context, o *TargetOverride) error {
	if !model.IsTargetField(o.Field) {
		return fmt.Errorf("set override: %q is not a field a person can change", o.Field)
	}
	if o.ChangedAt.IsZero() {
		o.ChangedAt = t.s.now()
	}
	var yaml any
	if o.YAMLValue != nil {
		yaml = *o.YAMLValue
	}
	_, err := t.c.exec(ctx, `INSERT INTO target_override (target_id, field, value, yaml_value, changed_by, changed_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (target_id, field) DO UPDATE SET value = excluded.value, yaml_value = excluded.yaml_value,
			changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
		o.TargetID, o.Field, o.Value, yaml, o.ChangedBy, t.s.ts(o.ChangedAt))
	if err != nil {
		return fmt.Errorf("set override %s of target %d: %w", o.Field, o.TargetID, err)
	}
	return nil
}

// DeleteTargetOverride forgets the override of field; removed is false when
// there was none.
func (t *Tx) DeleteTargetOverride(ctx context.Context, targetID int64, field string) (removed bool, err error) {
	res, err := t.c.exec(ctx, `DELETE FROM target_override WHERE target_id = ? AND field = ?`, targetID, field)
	if err != nil {
		return false, fmt.Errorf("delete override %s of target %d: %w", field, targetID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete override %s of target %d: %w", field, targetID, err)
	}
	return n > 0, nil
}

// TargetOverrides returns the overrides of one target by field.
func (t *Tx) TargetOverrides(ctx context.Context, targetID int64) ([]TargetOverride, error) {
	return listOverrides(ctx, t.c, `WHERE target_id = ? ORDER BY field`, targetID)
}

// TargetOverrides returns the overrides of one target by field.
func (s *Store) TargetOverrides(ctx context.Context, targetID int64) ([]TargetOverride, error) {
	return listOverrides(ctx, s.conn(), `WHERE target_id = ? ORDER BY field`, targetID)
}

// ListTargetOverrides returns the overrides of field across all targets
// (every field when field is empty), for lists that show where one value
// comes from.
func (s *Store) ListTargetOverrides(ctx context.Context, field string) ([]TargetOverride, error) {
	if field == "" {
		return listOverrides(ctx, s.conn(), `ORDER BY target_id, field`)
	}
	return listOverrides(ctx, s.conn(), `WHERE field = ? ORDER BY target_id`, field)
}

func listOverrides(ctx context.Context, c conn, where string, args ...any) ([]TargetOverride, error) {
	rows, err := c.query(ctx, `SELECT target_id, field, value, yaml_value, changed_by, changed_at
		FROM target_override `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list target overrides: %w", err)
	}
	defer rows.Close()
	var out []TargetOverride
	for rows.Next() {
		var o TargetOverride
		if err := rows.Scan(&o.TargetID, &o.Field, &o.Value, &o.YAMLValue, &o.ChangedBy, timeCol{&o.ChangedAt}); err != nil {
			return nil, fmt.Errorf("list target overrides: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list target overrides: %w", err)
	}
	return out, nil
}

// ApplyTargetOverrides lays the console's overrides of the stored target
// with tg's code over tg, the target as the files declare it, so a sync
// keeps what a person changed. Each override learns what the files say
// now, which a revert brings back. It returns the fields overridden; a
// target not yet stored has none.
func (t *Tx) ApplyTargetOverrides(ctx context.Context, tg *model.Target) (fields []string, err error) {
	var id int64
	err = t.c.queryRow(ctx, `SELECT id FROM crawl_target WHERE target_code = ?`, tg.TargetCode).Scan(&id)
	if notFound(err) == ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("apply overrides of %s: %w", tg.TargetCode, err)
	}
	overrides, err := t.TargetOverrides(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("apply overrides of %s: %w", tg.TargetCode, err)
	}
	for _, o := range overrides {
		fromFiles, err := model.TargetFieldValue(tg, o.Field)
		if err != nil {
			return nil, fmt.Errorf("apply overrides of %s: %w", tg.TargetCode, err)
		}
		if o.YAMLValue == nil || *o.YAMLValue != fromFiles {
			if _, err := t.c.exec(ctx, `UPDATE target_override SET yaml_value = ? WHERE target_id = ? AND field = ?`,
				fromFiles, id, o.Field); err != nil {
				return nil, fmt.Errorf("apply overrides of %s: %w", tg.TargetCode, err)
			}
		}
		if err := model.SetTargetField(tg, o.Field, o.Value); err != nil {
			return nil, fmt.Errorf("apply overrides of %s: %w", tg.TargetCode, err)
		}
		fields = append(fields, o.Field)
	}
	return fields, nil
}
