package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestAuditTrail: an entry recorded with a change commits with it and goes
// with it when the change is rolled back; entries list newest first, by
// object, with keyset paging; an entry without an actor is refused.
func TestAuditTrail(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		add := func(tx *store.Tx, id string, n int) error {
			return tx.RecordAudit(ctx, &store.AuditEntry{Actor: "user:alice", Action: "target.update",
				ObjectType: "target", ObjectID: id,
				Before: json.RawMessage(`{"enabled":true}`), After: json.RawMessage(`{"enabled":false}`),
				Detail: strings.Repeat("停", n)})
		}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return add(tx, "t1", 1) }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("the change failed")
		if err := s.WithTx(ctx, func(tx *store.Tx) error {
			if err := add(tx, "t2", 1); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("rolled back transaction: %v", err)
		}
		if err := s.RecordAudit(ctx, &store.AuditEntry{Actor: "cli:root", Action: "host.clear",
			ObjectType: "host", ObjectID: "www.example.gov.test", Detail: "站点已恢复"}); err != nil {
			t.Fatal(err)
		}
		if err := s.WithTx(ctx, func(tx *store.Tx) error { return add(tx, "t1", 3000) }); err != nil {
			t.Fatalf("a long reason: %v", err)
		}
		all, err := s.ListAudit(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 {
			t.Fatalf("%d entries, want 3 (the rolled-back change left none): %+v", len(all), all)
		}
		if all[0].ObjectID != "t1" || all[1].Action != "host.clear" || all[2].ObjectID != "t1" {
			t.Errorf("not newest first: %+v", all)
		}
		if n := len([]rune(all[0].Detail)); n == 0 || n > 2000 || !strings.HasPrefix(all[0].Detail, "停") {
			t.Errorf("a long reason kept as %d characters, want it cut to at most 2000 whole ones", n)
		}
		var before map[string]bool
		if err := json.Unmarshal(all[2].Before, &before); err != nil || !before["enabled"] {
			t.Errorf("before %s (%v), want the enabled state", all[2].Before, err)
		}
		byObj, err := s.ListAudit(ctx, store.AuditFilter{ObjectType: "target", ObjectID: "t1", Limit: 1})
		if err != nil || len(byObj) != 1 || byObj[0].ID != all[0].ID {
			t.Fatalf("by object, first page: %+v %v", byObj, err)
		}
		next, err := s.ListAudit(ctx, store.AuditFilter{ObjectType: "target", ObjectID: "t1", BeforeID: byObj[0].ID})
		if err != nil || len(next) != 1 || next[0].ID != all[2].ID {
			t.Fatalf("by object, next page: %+v %v", next, err)
		}
		if err := s.RecordAudit(ctx, &store.AuditEntry{Action: "x"}); err == nil {
			t.Error("an entry without an actor was recorded")
		}
	})
}
