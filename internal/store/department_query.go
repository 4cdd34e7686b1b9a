package store

import (
	"context"
	"fmt"

	"zhizhi/internal/model"
)

// DepartmentByID returns the local department deptID, or ErrNotFound.
func (s *Store) DepartmentByID(ctx context.Context, deptID int64) (*model.Department, error) {
	d, err := scanDepartment(s.conn().queryRow(ctx, `SELECT `+departmentColumns+`
		FROM local_department WHERE dept_id = ?`, deptID))
	if err != nil {
		return nil, fmt.Errorf("department %d: %w", deptID, notFound(err))
	}
	return d, nil
}

// DepartmentTargets returns every target whose articles belong to the
// local department deptID, enabled or not, by target_code.
func (s *Store) DepartmentTargets(ctx context.Context, deptID int64) ([]model.Target, error) {
	rows, err := s.conn().query(ctx, `SELECT `+targetColumns+` FROM crawl_target t
		WHERE t.dept_id = ? ORDER BY t.target_code`, deptID)
	if err != nil {
		return nil, fmt.Errorf("targets of department %d: %w", deptID, err)
	}
	defer rows.Close()
	out := []model.Target{}
	for rows.Next() {
		tg, err := scanTarget(rows)
		if err != nil {
			return nil, fmt.Errorf("targets of department %d: %w", deptID, err)
		}
		out = append(out, *tg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("targets of department %d: %w", deptID, err)
	}
	return out, nil
}
