package store

import (
	"context"
	"fmt"
	"time"

	"zhizhi/internal/model"
)

const departmentColumns = `dept_id, dept_name, parent_dept_id, dept_level, dept_code, short_name,
	full_name, state, order_id, updated_at`

func scanDepartment(row interface{ Scan(...any) error }) (*model.Department, error) {
	var d model.Department
	err := row.Scan(&d.DeptID, &d.DeptName, &d.ParentDeptID, &d.DeptLevel, strCol{&d.DeptCode},
		strCol{&d.ShortName}, strCol{&d.FullName}, &d.State, &d.OrderID, nullTimeCol{&d.UpdatedAt})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// DepartmentExists reports whether local_department has deptID.
func (t *Tx) DepartmentExists(ctx context.Context, deptID int64) (bool, error) {
	var n int
	err := t.c.queryRow(ctx, `SELECT COUNT(*) FROM local_department WHERE dept_id = ?`, deptID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("department %d exists: %w", deptID, err)
	}
	return n > 0, nil
}

// ImportDepartments writes a snapshot of the OA department subset in one
// transaction: a row that fails leaves the table as it was. Existing
// departments keep their dept_id and get the new names and fields
// (snapshot semantics); departments missing from depts are
// kept, because old articles still point at them.
func (s *Store) ImportDepartments(ctx context.Context, depts []model.Department) (created, updated int, err error) {
	err = s.WithTx(ctx, func(tx *Tx) error {
		var err error
		created, updated, err = tx.importDepartments(ctx, depts)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("import departments: %w", err)
	}
	return created, updated, nil
}

// ImportDepartments is Store.ImportDepartments inside a caller's
// transaction, so the import and its audit entry commit together.
func (t *Tx) ImportDepartments(ctx context.Context, depts []model.Department) (created, updated int, err error) {
	created, updated, err = t.importDepartments(ctx, depts)
	if err != nil {
		return 0, 0, fmt.Errorf("import departments: %w", err)
	}
	return created, updated, nil
}

func (tx *Tx) importDepartments(ctx context.Context, depts []model.Department) (created, updated int, err error) {
	s := tx.s
	for i := range depts {
		d := &depts[i]
		old, err := scanDepartment(tx.c.queryRow(ctx, `SELECT `+departmentColumns+`
			FROM local_department WHERE dept_id = ?`, d.DeptID))
		if err != nil && notFound(err) != ErrNotFound {
			return 0, 0, fmt.Errorf("department %d: %w", d.DeptID, err)
		}
		if old == nil {
			_, err := tx.c.exec(ctx, `INSERT INTO local_department (dept_id, dept_name, parent_dept_id,
				dept_level, dept_code, short_name, full_name, state, order_id, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				d.DeptID, d.DeptName, d.ParentDeptID, d.DeptLevel, nullStr(d.DeptCode), nullStr(d.ShortName),
				nullStr(d.FullName), d.State, d.OrderID, s.tsPtr(d.UpdatedAt))
			if err != nil {
				return 0, 0, fmt.Errorf("department %d: %w", d.DeptID, err)
			}
			created++
			continue
		}
		if sameDepartment(old, d) {
			continue
		}
		_, err = tx.c.exec(ctx, `UPDATE local_department SET dept_name = ?, parent_dept_id = ?,
			dept_level = ?, dept_code = ?, short_name = ?, full_name = ?, state = ?, order_id = ?,
			updated_at = ? WHERE dept_id = ?`,
			d.DeptName, d.ParentDeptID, d.DeptLevel, nullStr(d.DeptCode), nullStr(d.ShortName),
			nullStr(d.FullName), d.State, d.OrderID, s.tsPtr(d.UpdatedAt), d.DeptID)
		if err != nil {
			return 0, 0, fmt.Errorf("department %d: %w", d.DeptID, err)
		}
		updated++
	}
	return created, updated, nil
}

func sameDepartment(a, b *model.Department) bool {
	eqTime := (a.UpdatedAt == nil) == (b.UpdatedAt == nil) &&
		(a.UpdatedAt == nil || a.UpdatedAt.Equal(b.UpdatedAt.UTC().Truncate(time.Microsecond)))
	return a.DeptName == b.DeptName && equalInt64Ptr(a.ParentDeptID, b.ParentDeptID) &&
		equalIntPtr(a.DeptLevel, b.DeptLevel) && a.DeptCode == b.DeptCode && a.ShortName == b.ShortName &&
		a.FullName == b.FullName && a.State == b.State && equalIntPtr(a.OrderID, b.OrderID) && eqTime
}

func equalIntPtr(a, b *int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// ListDepartments returns every local department ordered by dept_id.
func (s *Store) ListDepartments(ctx context.Context) ([]model.Department, error) {
	rows, err := s.conn().query(ctx, `SELECT `+departmentColumns+` FROM local_department ORDER BY dept_id`)
	if err != nil {
		return nil, fmt.Errorf("list departments: %w", err)
	}
	defer rows.Close()
	var out []model.Department
	for rows.Next() {
		d, err := scanDepartment(rows)
		if err != nil {
			return nil, fmt.Errorf("list departments: %w", err)
		}
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list departments: %w", err)
	}
	return out, nil
}
