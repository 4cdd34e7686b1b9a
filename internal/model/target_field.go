package model

import (
	"fmt"
	"strconv"
	"strings"
)

// The fields of a target a person may change in the console. A change to a
// target declared in YAML is kept as an override that `config sync` applies
// over the files; each is stored as text in the form TargetFieldValue gives.
const (
	FieldTargetName          = "target_name"
	FieldEntryURL            = "entry_url"
	FieldSampleArticleURL    = "sample_article_url"
	FieldDept                = "dept" // dept_binding with dept_id: "mapped:37", "city_level"
	FieldChannelName         = "channel_name"
	FieldChannelPath         = "channel_path"
	FieldContentCategory     = "content_category"
	FieldContentSubcategory  = "content_subcategory"
	FieldScheduleCron        = "schedule_cron"
	FieldExpectedCadenceDays = "expected_cadence_days"
	FieldIntervalSec         = "interval_sec"
	FieldEnabled             = "enabled"
)

// TargetFields lists the changeable fields in the order a page shows them.
var TargetFields = []string{
	FieldTargetName, FieldEntryURL, FieldSampleArticleURL, FieldDept,
	FieldChannelName, FieldChannelPath, FieldContentCategory, FieldContentSubcategory,
	FieldScheduleCron, FieldExpectedCadenceDays, FieldIntervalSec, FieldEnabled,
}

// targetFieldLabels name the changeable fields for the staff.
var targetFieldLabels = map[string]string{
	FieldTargetName: "名称", FieldEntryURL: "列表页网址", FieldSampleArticleURL: "样例文章网址",
	FieldDept: "部门归属", FieldChannelName: "栏目名称", FieldChannelPath: "栏目路径",
	FieldContentCategory: "内容分类", FieldContentSubcategory: "内容子类",
	FieldScheduleCron: "调度时间", FieldExpectedCadenceDays: "预期更新周期（天）",
	FieldIntervalSec: "请求间隔（秒）", FieldEnabled: "启用",
}

// TargetFieldLabel is the field's name in the staff's words (the field's
// own name for one it does not know).
func TargetFieldLabel(field string) string {
	if l, ok := targetFieldLabels[field]; ok {
		return l
	}
	return field
}

// IsTargetField reports whether field is one of TargetFields.
func IsTargetField(field string) bool {
	for _, f := range TargetFields {
		if f == field {
			return true
		}
	}
	return false
}

// textField and intField point at the field of t that a name stands for,
// nil when the name is not one of theirs: one table serves reading and
// setting, so the two cannot drift apart.
func textField(t *Target, field string) *string {
	switch field {
	case FieldTargetName:
		return &t.TargetName
	case FieldEntryURL:
		return &t.EntryURL
	case FieldSampleArticleURL:
		return &t.SampleArticleURL
	case FieldChannelName:
		return &t.ChannelName
	case FieldChannelPath:
		return &t.ChannelPath
	case FieldContentCategory:
		return &t.ContentCategory
	case FieldContentSubcategory:
		return &t.ContentSubcategory
	case FieldScheduleCron:
		return &t.ScheduleCron
	}
	return nil
}

func intField(t *Target, field string) *int {
	switch field {
	case FieldExpectedCadenceDays:
		return &t.ExpectedCadenceDays
	case FieldIntervalSec:
		return &t.IntervalSec
	}
	return nil
}

// TargetFieldValue returns the field of t as the text an override stores.
func TargetFieldValue(t *Target, field string) (string, error) {
	if p := textField(t, field); p != nil {
		return *p, nil
	}
	if p := intField(t, field); p != nil {
		return strconv.Itoa(*p), nil
	}
	switch field {
	case FieldDept:
		return DeptValue(t.DeptBinding, t.DeptID), nil
	case FieldEnabled:
		return strconv.FormatBool(t.Enabled), nil
	}
	return "", fmt.Errorf("target field %q is not one a person can change", field)
}

// SetTargetField sets the field of t from its stored text.
func SetTargetField(t *Target, field, value string) error {
	if p := textField(t, field); p != nil {
		*p = value
		return nil
	}
	if p := intField(t, field); p != nil {
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("target field %s: %q is not a whole number", field, value)
		}
		*p = n
		return nil
	}
	var err error
	switch field {
	case FieldDept:
		t.DeptBinding, t.DeptID, err = ParseDeptValue(value)
	case FieldEnabled:
		t.Enabled, err = strconv.ParseBool(value)
		if err != nil {
			err = fmt.Errorf("target field enabled: %q is neither true nor false", value)
		}
	default:
		err = fmt.Errorf("target field %q is not one a person can change", field)
	}
	return err
}

// DeptValue writes a binding with its department as one value: "mapped:37"
// for a mapped binding, the binding alone otherwise.
func DeptValue(binding string, deptID *int64) string {
	if binding == BindingMapped && deptID != nil {
		return binding + ":" + strconv.FormatInt(*deptID, 10)
	}
	return binding
}

// ParseDeptValue reads what DeptValue wrote.
func ParseDeptValue(v string) (binding string, deptID *int64, err error) {
	binding, id, hasID := strings.Cut(v, ":")
	if !hasID {
		return binding, nil, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return "", nil, fmt.Errorf("target field dept: %q is not binding:dept_id", v)
	}
	return binding, &n, nil
}
