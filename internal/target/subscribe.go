package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Defaults are the settings every target made by one bulk subscription
// shares.
type Defaults struct {
	Schedule            string `json:"schedule,omitempty"` // daily | weekly | monthly | a cron expression; empty: daily
	ExpectedCadenceDays int    `json:"expected_cadence_days,omitempty"`
	ContentCategory     string `json:"content_category,omitempty"`
	ContentSubcategory  string `json:"content_subcategory,omitempty"`
	IntervalSec         int    `json:"interval_sec,omitempty"`
}

// What a subscription or unsubscription did to one column.
const (
	StatusCreated       = "created"        // a new target now crawls the column
	StatusReenabled     = "reenabled"      // the column's disabled target is crawling again
	StatusAlready       = "already"        // the column was already subscribed; skipped
	StatusDisabled      = "disabled"       // the column's target no longer crawls
	StatusNotSubscribed = "not_subscribed" // nothing to unsubscribe; skipped
)

// Subscription reports one column of a bulk (un)subscription.
type Subscription struct {
	RegistryID int64  `json:"registry_id"`
	SiteCode   string `json:"site_code"`
	ColumnID   string `json:"column_id"`
	ColumnName string `json:"column_name"`
	TargetCode string `json:"target_code,omitempty"`
	Status     string `json:"status"`
}

// Subscribe makes one console target per catalog column, under the site
// department whose index listed it (its binding gives the department), and
// records the column it came from. A column already subscribed is skipped
// and reported; one whose target was disabled is enabled again. A column
// whose department is pending or unknown refuses the whole batch, naming
// every such column, and nothing is written.
func (s *Service) Subscribe(ctx context.Context, registryIDs []int64, d Defaults, actor string) ([]Subscription, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	var p problems
	if len(registryIDs) == 0 {
		p.add("registry_ids", "至少选择一个栏目")
	}
	if d.ExpectedCadenceDays == 0 {
		d.ExpectedCadenceDays = config.DefaultCadenceDays
	}
	checkNumbers(&p, d.ExpectedCadenceDays, d.IntervalSec)
	checkText(&p, "content_category", d.ContentCategory, 100, false)
	checkText(&p, "content_subcategory", d.ContentSubcategory, 100, false)
	s.scheduleCron(&p, "check", d.Schedule)
	if err := p.err(); err != nil {
		return nil, err
	}
	var out []Subscription
	err := s.Store.WithTx(ctx, func(tx *store.Tx) error {
		out = nil
		var refused problems
		seen := map[int64]bool{}
		for _, id := range registryIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			e, err := tx.ColumnEntryByID(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				refused.add("registry_ids", "栏目 %d 不在栏目目录中", id)
				continue
			}
			if err != nil {
				return err
			}
			sub := Subscription{RegistryID: id, SiteCode: e.SiteCode, ColumnID: e.ColumnID, ColumnName: e.ColumnName}
			tg, problem, err := s.subscribeOne(ctx, tx, e, d, actor, &sub)
			if err != nil {
				return err
			}
			if problem != "" {
				refused.add("registry_ids", "栏目 %s（%s，编号 %s）：%s", e.ColumnName, e.SiteCode, e.ColumnID, problem)
				continue
			}
			sub.TargetCode = tg.TargetCode
			out = append(out, sub)
		}
		return refused.err()
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	return out, nil
}

// subscribeOne subscribes one column; a problem is a reason to refuse it.
func (s *Service) subscribeOne(ctx context.Context, tx *store.Tx, e *store.ColumnEntry, d Defaults, actor string, sub *Subscription) (*model.Target, string, error) {
	if e.TargetCode != "" {
		tg, err := tx.TargetByCode(ctx, e.TargetCode)
		if err != nil {
			return nil, "", err
		}
		return tg, "", s.resubscribe(ctx, tx, tg, e, actor, sub)
	}
	if e.SiteDepartmentID == nil {
		return nil, "不知道它属于哪个站点部门：先抓取一次该部门的栏目索引", nil
	}
	dept, err := s.Store.SiteDepartmentByID(ctx, *e.SiteDepartmentID)
	if err != nil {
		return nil, "", err
	}
	if why := deptNotReady(dept); why != "" {
		return nil, why, nil
	}
	site, err := s.Store.SiteByID(ctx, e.SiteID)
	if err != nil {
		return nil, "", err
	}
	code := config.DefaultTargetCode(site.SiteCode, dept.DeptPath, e.ColumnID)
	// A column the files already declare has its target: link, not copy.
	if tg, err := tx.TargetByCode(ctx, code); err == nil {
		if err := tx.SetColumnSubscription(ctx, e.ID, tg.ID); err != nil {
			return nil, "", err
		}
		return tg, "", s.resubscribe(ctx, tx, tg, e, actor, sub)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, "", err
	}
	if g, err := s.GroupCovered(ctx, site.ID, dept.ID, e.ColumnID); err != nil {
		return nil, "", err
	} else if g != nil {
		return nil, g.Warning(), nil
	}
	var p problems
	cron := s.scheduleCron(&p, code, d.Schedule)
	if err := p.err(); err != nil {
		return nil, "", err
	}
	tg := columnTarget(site, dept, e)
	tg.ContentCategory, tg.ContentSubcategory, tg.ScheduleCron = d.ContentCategory, d.ContentSubcategory, cron
	tg.ExpectedCadenceDays, tg.IntervalSec, tg.Enabled = d.ExpectedCadenceDays, d.IntervalSec, true
	tg.Source, tg.CreatedBy = model.SourceAdmin, actor
	if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
		return nil, "", err
	}
	if err := tx.SetColumnSubscription(ctx, e.ID, tg.ID); err != nil {
		return nil, "", err
	}
	sub.Status = StatusCreated
	return tg, "", tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "target.subscribe", ObjectType: "target",
		ObjectID: code, After: auditJSON(tg), Detail: fmt.Sprintf("订阅自栏目目录 %d（%s）", e.ID, e.ColumnName)})
}

// resubscribe enables a column's existing target, or reports it already
// subscribed.
func (s *Service) resubscribe(ctx context.Context, tx *store.Tx, tg *model.Target, e *store.ColumnEntry, actor string, sub *Subscription) error {
	if tg.Enabled {
		sub.Status = StatusAlready
		return nil
	}
	sub.Status = StatusReenabled
	_, err := switchEnabled(ctx, tx, tg, true, "target.subscribe",
		fmt.Sprintf("从栏目目录 %d（%s）重新启用", e.ID, e.ColumnName), actor)
	return err
}

// Unsubscribe stops crawling the columns: their targets are disabled, never
// deleted, so their articles and history stay. A column without an enabled
// target is skipped and reported.
func (s *Service) Unsubscribe(ctx context.Context, registryIDs []int64, actor string) ([]Subscription, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	if len(registryIDs) == 0 {
		return nil, &InputError{Problems: []FieldError{{Field: "registry_ids", Message: "至少选择一个栏目"}}}
	}
	var out []Subscription
	err := s.Store.WithTx(ctx, func(tx *store.Tx) error {
		out = nil
		var missing problems
		for _, id := range slices.Compact(slices.Sorted(slices.Values(registryIDs))) {
			e, err := tx.ColumnEntryByID(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				missing.add("registry_ids", "栏目 %d 不在栏目目录中", id)
				continue
			}
			if err != nil {
				return err
			}
			sub := Subscription{RegistryID: id, SiteCode: e.SiteCode, ColumnID: e.ColumnID, ColumnName: e.ColumnName,
				TargetCode: e.TargetCode, Status: StatusNotSubscribed}
			if e.Subscribed() {
				before, err := tx.TargetByCode(ctx, e.TargetCode)
				if err != nil {
					return err
				}
				if _, err := switchEnabled(ctx, tx, before, false, "target.unsubscribe",
					fmt.Sprintf("column registry %d (%s)", e.ID, e.ColumnName), actor); err != nil {
					return err
				}
				sub.Status = StatusDisabled
			}
			out = append(out, sub)
		}
		return missing.err()
	})
	if err != nil {
		return nil, fmt.Errorf("unsubscribe: %w", err)
	}
	return out, nil
}

func truncate(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n])
}
