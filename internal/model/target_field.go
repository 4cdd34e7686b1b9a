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

// IsTargetField reports whether field is one of TargetFields.
func IsTargetField(field string) bool {
	for _, f := range TargetFields {
		if f == field {
			return true
		}
	}
	return false
}

// TargetFieldValue returns the field of t as the text an override stores.
func TargetFieldValue(t *Target, field string) (string, error) {
	switch field {
	case FieldTargetName:
		return t.TargetName, nil
	case FieldEntryURL:
		return t.EntryURL, nil
	case FieldSampleArticleURL:
		return t.SampleArticleURL, nil
	case FieldDept:
		return DeptValue(t.DeptBinding, t.DeptID), nil
	case FieldChannelName:
		return t.ChannelName, nil
	case FieldChannelPath:
		return t.ChannelPath, nil
	case FieldContentCategory:
		return t.ContentCategory, nil
	case FieldContentSubcategory:
		return t.ContentSubcategory, nil
	case FieldScheduleCron:
		return t.ScheduleCron, nil
	case FieldExpectedCadenceDays:
		return strconv.Itoa(t.ExpectedCadenceDays), nil
	case FieldIntervalSec:
		return strconv.Itoa(t.IntervalSec), nil
	case FieldEnabled:
		return strconv.FormatBool(t.Enabled), nil
	}
	return "", fmt.Errorf("target field %q is not one a person can change", field)
}

// SetTargetField sets the field of t from its stored text.
func SetTargetField(t *Target, field, value string) error {
	atoi := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil {
			return 0, fmt.Errorf("target field %s: %q is not a whole number", field, value)
		}
		return n, nil
	}
	var err error
	switch field {
	case FieldTargetName:
		t.TargetName = value
	case FieldEntryURL:
		t.EntryURL = value
	case FieldSampleArticleURL:
		t.SampleArticleURL = value
	case FieldDept:
		t.DeptBinding, t.DeptID, err = ParseDeptValue(value)
	case FieldChannelName:
		t.ChannelName = value
	case FieldChannelPath:
		t.ChannelPath = value
	case FieldContentCategory:
		t.ContentCategory = value
	case FieldContentSubcategory:
		t.ContentSubcategory = value
	case FieldScheduleCron:
		t.ScheduleCron = value
	case FieldExpectedCadenceDays:
		t.ExpectedCadenceDays, err = atoi()
	case FieldIntervalSec:
		t.IntervalSec, err = atoi()
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
