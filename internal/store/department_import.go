package store

import (
	"context"
	"encoding/json"
	"fmt"

	"zhizhi/internal/model"
)

// DepartmentImport counts what one import of the OA department subset did.
type DepartmentImport struct {
	Read      int `json:"read"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// ImportDepartmentsBy imports depts on behalf of actor (an auth
// Principal's Actor) and records it in the audit trail; the import and its
// audit entry commit together or not at all, so the trail never claims an
// import that did not happen nor misses one that did.
func (s *Store) ImportDepartmentsBy(ctx context.Context, actor string, depts []model.Department) (DepartmentImport, error) {
	var res DepartmentImport
	err := s.WithTx(ctx, func(tx *Tx) error {
		created, updated, err := tx.ImportDepartments(ctx, depts)
		if err != nil {
			return err
		}
		res = DepartmentImport{Read: len(depts), Created: created, Updated: updated, Unchanged: len(depts) - created - updated}
		after, err := json.Marshal(res)
		if err != nil {
			return err
		}
		return tx.RecordAudit(ctx, &AuditEntry{Actor: actor, Action: "department.import", ObjectType: "department",
			After: after, Detail: fmt.Sprintf("读取 %d 个，新建 %d 个，更新 %d 个", res.Read, res.Created, res.Updated)})
	})
	if err != nil {
		return DepartmentImport{}, err
	}
	return res, nil
}
