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

// Create checks in, runs the dry-run gate and saves a new console target
// with its audit entry. A failed check returns an *InputError (ErrInvalid)
// and saves nothing; a red dry-run returns ErrDryRunFailed with the Result
// holding the dry-run to show.
func (s *Service) Create(ctx context.Context, in Input, actor string) (*Result, error) {
	return s.create(ctx, in, actor, true)
}

// PreviewCreate is Create without saving: the checks and the dry-run, for a
// page to show before the person saves.
func (s *Service) PreviewCreate(ctx context.Context, in Input) (*Result, error) {
	return s.create(ctx, in, "preview", false)
}

func (s *Service) create(ctx context.Context, in Input, actor string, save bool) (*Result, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	site, tg, err := s.buildNew(ctx, in)
	if err != nil {
		return nil, err
	}
	d, warnings, err := s.dryRun(ctx, site, tg)
	res := &Result{Target: tg, DryRun: d, Warnings: warnings}
	if err != nil || !save {
		return res, err
	}
	tg.CreatedBy = actor
	err = s.Store.WithTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.TargetByCode(ctx, tg.TargetCode); err == nil {
			return &InputError{Problems: []FieldError{codeTaken(tg.TargetCode)}}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "target.create", ObjectType: "target",
			ObjectID: tg.TargetCode, After: auditJSON(tg), Detail: strings.Join(warnings, "; ")})
	})
	if err != nil {
		return res, fmt.Errorf("create target %s: %w", tg.TargetCode, err)
	}
	res.Saved = true
	return res, nil
}

// buildNew checks every input of a new target and returns it ready to
// save, or an *InputError naming each refused field.
func (s *Service) buildNew(ctx context.Context, in Input) (*model.Site, *model.Target, error) {
	var p problems
	if strings.TrimSpace(in.SiteCode) == "" {
		p.add("site_code", "必填：目标所属站点的编码")
		return nil, nil, p.err()
	}
	site, err := s.Store.SiteByCode(ctx, in.SiteCode)
	if errors.Is(err, store.ErrNotFound) {
		p.add("site_code", "站点 %q 不存在（见 zhizhi site list）", in.SiteCode)
		return nil, nil, p.err()
	}
	if err != nil {
		return nil, nil, err
	}
	tg := &model.Target{
		SiteID: site.ID, TargetCode: strings.TrimSpace(in.TargetCode), TargetName: strings.TrimSpace(in.TargetName),
		SampleArticleURL: strings.TrimSpace(in.SampleArticleURL), ChannelName: in.ChannelName,
		ChannelPath: in.ChannelPath, ContentCategory: in.ContentCategory, ContentSubcategory: in.ContentSubcategory,
		ExpectedCadenceDays: in.ExpectedCadenceDays, IntervalSec: in.IntervalSec, Enabled: in.Enabled,
		Source: model.SourceAdmin,
	}
	if tg.ExpectedCadenceDays == 0 {
		tg.ExpectedCadenceDays = config.DefaultCadenceDays
	}
	if site.CMSAdapter != "" {
		s.buildCMSTarget(ctx, &p, site, in, tg)
	} else {
		checkSiteURL(&p, "entry_url", in.EntryURL, site, true)
		tg.EntryURL = strings.TrimSpace(in.EntryURL)
		s.checkTemplateDept(ctx, &p, in.DeptBinding, in.LocalDeptID)
		tg.DeptBinding = in.DeptBinding
		if in.DeptBinding == model.BindingMapped {
			tg.DeptID = in.LocalDeptID
		}
	}
	switch {
	case tg.TargetCode == "":
		p.add("target_code", "必填：100 个字符以内的字母、数字、_ . -")
	case !codeRe.MatchString(tg.TargetCode):
		p.add("target_code", "%q 只能包含字母、数字、_ . -，最长 100 个字符", tg.TargetCode)
	default:
		if _, err := s.Store.TargetByCode(ctx, tg.TargetCode); err == nil {
			p = append(p, codeTaken(tg.TargetCode))
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, nil, err
		}
	}
	checkText(&p, "target_name", tg.TargetName, 200, true)
	checkSiteURL(&p, "sample_article_url", tg.SampleArticleURL, site, false)
	checkText(&p, "channel_name", tg.ChannelName, 200, false)
	checkText(&p, "channel_path", tg.ChannelPath, 1000, false)
	checkText(&p, "content_category", tg.ContentCategory, 100, false)
	checkText(&p, "content_subcategory", tg.ContentSubcategory, 100, false)
	checkNumbers(&p, tg.ExpectedCadenceDays, tg.IntervalSec)
	if tg.TargetCode != "" {
		tg.ScheduleCron = s.scheduleCron(&p, tg.TargetCode, in.Schedule)
	}
	if err := p.err(); err != nil {
		return nil, nil, err
	}
	return site, tg, nil
}

// buildCMSTarget fills a column target of a CMS-adapter site: its site
// department (whose binding it takes; pending is refused), column and
// derived entry URL and code.
func (s *Service) buildCMSTarget(ctx context.Context, p *problems, site *model.Site, in Input, tg *model.Target) {
	if in.DeptBinding != "" || in.LocalDeptID != nil {
		p.add("dept_binding", "站点 %s 的栏目归属由站点部门的绑定决定：在站点部门上选择绑定，这里不填", site.SiteCode)
	}
	if in.ColumnID == "" {
		p.add("column_id", "必填：栏目在 CMS 中的编号，例如 2849")
	} else if !columnIDRe.MatchString(in.ColumnID) {
		p.add("column_id", "%q 不是有效的栏目编号", in.ColumnID)
	}
	if in.DeptPath == "" {
		p.add("dept_path", "必填：站点 %s 下的部门路径，例如 qyfgw", site.SiteCode)
		return
	}
	dept, err := s.siteDepartment(ctx, site.ID, in.DeptPath)
	switch {
	case err != nil:
		p.add("dept_path", "无法读取站点部门：%v", err)
		return
	case dept == nil:
		p.add("dept_path", "站点 %s 没有部门路径 %q：先在站点部门里添加它", site.SiteCode, in.DeptPath)
		return
	case deptNotReady(dept) != "":
		p.add("dept_path", "%s", deptNotReady(dept))
		return
	}
	tg.SiteDepartmentID = &dept.ID
	tg.ColumnID = in.ColumnID
	tg.DeptBinding = dept.DeptBinding
	tg.EntryURL = columnEntryURL(site, dept.DeptPath, in.ColumnID)
	if in.EntryURL != "" && strings.TrimSpace(in.EntryURL) != tg.EntryURL {
		p.add("entry_url", "CMS 站点的栏目入口由部门路径和栏目编号生成（%s），不要另填", tg.EntryURL)
	}
	if tg.TargetCode == "" && in.ColumnID != "" {
		tg.TargetCode = config.DefaultTargetCode(site.SiteCode, dept.DeptPath, in.ColumnID)
	}
	if g, err := s.GroupCovered(ctx, site.ID, dept.ID, in.ColumnID); err != nil {
		p.add("column_id", "无法读取栏目目录：%v", err)
	} else if g != nil {
		p.add("column_id", "%s", g.Warning())
	}
}

// Update checks the patch, runs the dry-run gate (when the target has a
// sample article after the change) and saves the changed fields with their
// overrides and one audit entry. On a YAML target every changed field
// becomes an override that `config sync` keeps. A patch that changes
// nothing saves nothing.
func (s *Service) Update(ctx context.Context, code string, patch Patch, actor string) (*Result, error) {
	return s.update(ctx, code, patch, actor, true)
}

// PreviewUpdate is Update without saving.
func (s *Service) PreviewUpdate(ctx context.Context, code string, patch Patch) (*Result, error) {
	return s.update(ctx, code, patch, "preview", false)
}

func (s *Service) update(ctx context.Context, code string, patch Patch, actor string, save bool) (*Result, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	before, err := targetByCode(ctx, s.Store, code)
	if err != nil {
		return nil, err
	}
	site, err := s.Store.SiteByID(ctx, before.SiteID)
	if err != nil {
		return nil, err
	}
	after, err := s.applyPatch(ctx, site, before, patch)
	if err != nil {
		return nil, err
	}
	changed := changedFields(before, after)
	res := &Result{Target: after, Changed: changed}
	if len(changed) == 0 {
		res.Warnings = []string{"没有改动，未保存"}
		return res, nil
	}
	d, warnings, err := s.dryRun(ctx, site, after)
	res.DryRun, res.Warnings = d, warnings
	if err != nil || !save {
		return res, err
	}
	err = s.Store.WithTx(ctx, func(tx *store.Tx) error {
		// The dry-run takes seconds; a change saved meanwhile by someone
		// else must not be overwritten unseen.
		now, err := tx.TargetByCode(ctx, code)
		if err != nil {
			return err
		}
		if !now.UpdatedAt.Equal(before.UpdatedAt) {
			return fmt.Errorf("target %s: %w", code, ErrConflict)
		}
		if _, _, err := tx.UpsertTarget(ctx, after); err != nil {
			return err
		}
		if err := recordOverrides(ctx, tx, before, after, changed, actor); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "target.update", ObjectType: "target",
			ObjectID: code, Before: auditJSON(before), After: auditJSON(after),
			Detail: "修改了 " + changedLabels(changed)})
	})
	if err != nil {
		return res, fmt.Errorf("update target %s: %w", code, err)
	}
	res.Saved = true
	return res, nil
}

// applyPatch returns before with the patch laid over it, or an
// *InputError naming each refused field.
func (s *Service) applyPatch(ctx context.Context, site *model.Site, before *model.Target, patch Patch) (*model.Target, error) {
	var p problems
	after := *before
	cms := before.SiteDepartmentID != nil
	if v := patch.TargetName; v != nil {
		after.TargetName = strings.TrimSpace(*v)
		checkText(&p, "target_name", after.TargetName, 200, true)
	}
	if v := patch.EntryURL; v != nil && strings.TrimSpace(*v) != before.EntryURL {
		if cms {
			p.add("entry_url", "CMS 站点的栏目入口由部门路径和栏目编号生成，不能修改")
		} else {
			after.EntryURL = strings.TrimSpace(*v)
			checkSiteURL(&p, "entry_url", after.EntryURL, site, true)
		}
	}
	if v := patch.SampleArticleURL; v != nil {
		after.SampleArticleURL = strings.TrimSpace(*v)
		checkSiteURL(&p, "sample_article_url", after.SampleArticleURL, site, false)
	}
	if patch.DeptBinding != nil || patch.LocalDeptID != nil {
		binding := model.BindingMapped
		if patch.DeptBinding != nil {
			binding = *patch.DeptBinding
		}
		if cms {
			if binding != before.DeptBinding || patch.LocalDeptID != nil {
				p.add("dept_binding", "这个栏目的归属由站点部门的绑定决定：在站点部门上修改绑定")
			}
		} else {
			s.checkTemplateDept(ctx, &p, binding, patch.LocalDeptID)
			after.DeptBinding, after.DeptID = binding, nil
			if binding == model.BindingMapped {
				after.DeptID = patch.LocalDeptID
			}
		}
	}
	for _, f := range []struct {
		field string
		v     *string
		dst   *string
		max   int
	}{
		{"channel_name", patch.ChannelName, &after.ChannelName, 200},
		{"channel_path", patch.ChannelPath, &after.ChannelPath, 1000},
		{"content_category", patch.ContentCategory, &after.ContentCategory, 100},
		{"content_subcategory", patch.ContentSubcategory, &after.ContentSubcategory, 100},
	} {
		if f.v != nil {
			*f.dst = *f.v
			checkText(&p, f.field, *f.v, f.max, false)
		}
	}
	if patch.Schedule != nil {
		after.ScheduleCron = s.scheduleCron(&p, before.TargetCode, *patch.Schedule)
	}
	if patch.ExpectedCadenceDays != nil {
		after.ExpectedCadenceDays = *patch.ExpectedCadenceDays
	}
	if patch.IntervalSec != nil {
		after.IntervalSec = *patch.IntervalSec
	}
	if patch.ExpectedCadenceDays != nil || patch.IntervalSec != nil {
		checkNumbers(&p, after.ExpectedCadenceDays, after.IntervalSec)
	}
	if patch.Enabled != nil {
		after.Enabled = *patch.Enabled
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return &after, nil
}

// changedFields lists the changeable fields whose values differ.
// changedLabels names the changed fields in the staff's words, for the
// audit trail people read.
func changedLabels(changed []string) string {
	labels := make([]string, len(changed))
	for i, f := range changed {
		labels[i] = "「" + model.TargetFieldLabel(f) + "」"
	}
	return strings.Join(labels, "、")
}

func changedFields(before, after *model.Target) []string {
	var out []string
	for _, f := range model.TargetFields {
		a, _ := model.TargetFieldValue(before, f)
		b, _ := model.TargetFieldValue(after, f)
		if a != b {
			out = append(out, f)
		}
	}
	return out
}

// recordOverrides keeps who changed each field. On a YAML target the
// override also remembers what the files say, from an earlier override of
// the field or else from the row as the last sync wrote it.
func recordOverrides(ctx context.Context, tx *store.Tx, before, after *model.Target, changed []string, actor string) error {
	existing, err := tx.TargetOverrides(ctx, before.ID)
	if err != nil {
		return err
	}
	for _, f := range changed {
		v, err := model.TargetFieldValue(after, f)
		if err != nil {
			return err
		}
		o := store.TargetOverride{TargetID: before.ID, Field: f, Value: v, ChangedBy: actor}
		if before.Source == model.SourceYAML {
			i := slices.IndexFunc(existing, func(e store.TargetOverride) bool { return e.Field == f })
			if i >= 0 {
				o.YAMLValue = existing[i].YAMLValue
			} else {
				y, _ := model.TargetFieldValue(before, f)
				o.YAMLValue = &y
			}
		}
		if err := tx.SetTargetOverride(ctx, &o); err != nil {
			return err
		}
	}
	return nil
}

// SetEnabled switches a target on or off, with the reason in the audit
// entry. On a YAML target the state is an override that `config sync`
// keeps until someone reverts it. A target already in that state is left
// alone and nothing is recorded.
func (s *Service) SetEnabled(ctx context.Context, code string, enabled bool, reason, actor string) (*model.Target, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	if utf8Len(reason) > 500 {
		return nil, &InputError{Problems: []FieldError{{Field: "reason", Message: "超过 500 个字符"}}}
	}
	var out *model.Target
	err := s.Store.WithTx(ctx, func(tx *store.Tx) error {
		before, err := targetByCode(ctx, tx, code)
		if err != nil {
			return err
		}
		out = before
		if before.Enabled == enabled {
			return nil
		}
		action := "target.disable"
		if enabled {
			action = "target.enable"
		}
		out, err = switchEnabled(ctx, tx, before, enabled, action, reason, actor)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set target %s enabled: %w", code, err)
	}
	return out, nil
}

// switchEnabled turns the target before on or off inside tx, keeps the
// state as an override where the target is declared in YAML, and records
// the change in the audit trail as action, with detail. It returns the
// target as it is now.
func switchEnabled(ctx context.Context, tx *store.Tx, before *model.Target, enabled bool, action, detail, actor string) (*model.Target, error) {
	after := *before
	after.Enabled = enabled
	if err := tx.SetTargetEnabled(ctx, before.ID, enabled); err != nil {
		return nil, err
	}
	if err := recordOverrides(ctx, tx, before, &after, []string{model.FieldEnabled}, actor); err != nil {
		return nil, err
	}
	return &after, tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: action, ObjectType: "target",
		ObjectID: before.TargetCode, Before: auditJSON(before), After: auditJSON(&after), Detail: detail})
}

// Revert gives a field of a YAML target back to what the files say and
// forgets the override, so the next `config sync` writes the files' value
// again.
func (s *Service) Revert(ctx context.Context, code, field, actor string) (*model.Target, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	if !model.IsTargetField(field) {
		return nil, &InputError{Problems: []FieldError{{Field: "field", Message: fmt.Sprintf("%q 不是可恢复的字段：可用 %s", field, strings.Join(model.TargetFields, ", "))}}}
	}
	var out *model.Target
	err := s.Store.WithTx(ctx, func(tx *store.Tx) error {
		before, err := targetByCode(ctx, tx, code)
		if err != nil {
			return err
		}
		if before.Source != model.SourceYAML {
			return &InputError{Problems: []FieldError{{Field: "field", Message: fmt.Sprintf("目标 %s 是在控制台创建的，没有 YAML 值可以恢复", code)}}}
		}
		overrides, err := tx.TargetOverrides(ctx, before.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(overrides, func(o store.TargetOverride) bool { return o.Field == field })
		if i < 0 {
			return &InputError{Problems: []FieldError{{Field: "field", Message: fmt.Sprintf("目标 %s 的 %s 没有被修改过，已经是 YAML 的值", code, field)}}}
		}
		after := *before
		if y := overrides[i].YAMLValue; y != nil {
			if err := model.SetTargetField(&after, field, *y); err != nil {
				return err
			}
		}
		if _, _, err := tx.UpsertTarget(ctx, &after); err != nil {
			return err
		}
		if _, err := tx.DeleteTargetOverride(ctx, before.ID, field); err != nil {
			return err
		}
		out = &after
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: actor, Action: "target.revert", ObjectType: "target",
			ObjectID: code, Before: auditJSON(before), After: auditJSON(&after),
			Detail: fmt.Sprintf("%s 恢复为 YAML 中的值（原由 %s 修改）", field, overrides[i].ChangedBy)})
	})
	if err != nil {
		return nil, fmt.Errorf("revert %s of target %s: %w", field, code, err)
	}
	return out, nil
}

// DryRunTarget runs the dry-run on the target as stored, without saving
// anything: for a page that re-checks a target.
func (s *Service) DryRunTarget(ctx context.Context, code string) (*DryRun, error) {
	tg, err := targetByCode(ctx, s.Store, code)
	if err != nil {
		return nil, err
	}
	site, err := s.Store.SiteByID(ctx, tg.SiteID)
	if err != nil {
		return nil, err
	}
	if s.Validate == nil {
		return nil, ErrNoValidator
	}
	v, err := s.Validate(ctx, site, tg, tg.EntryURL, tg.SampleArticleURL)
	if err != nil {
		return &DryRun{Error: err.Error(), Checks: []Check{{Name: "试运行", Detail: err.Error()}}}, nil
	}
	return newDryRun(site, v), nil
}

func utf8Len(s string) int { return len([]rune(s)) }
