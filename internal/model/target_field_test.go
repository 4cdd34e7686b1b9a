package model

import "testing"

// TestTargetFieldRoundTrip: every changeable field written as an override
// reads back to the same target, so a sync applies exactly what a person
// set.
func TestTargetFieldRoundTrip(t *testing.T) {
	dept := int64(37)
	src := Target{TargetName: "通知公告", EntryURL: "http://a.test/x/", SampleArticleURL: "http://a.test/x/1.html",
		DeptBinding: BindingMapped, DeptID: &dept, ChannelName: "通知", ChannelPath: "信息公开｜通知",
		ContentCategory: "通知公告", ContentSubcategory: "公告", ScheduleCron: "5 2 * * 1",
		ExpectedCadenceDays: 7, IntervalSec: 3, Enabled: true}
	var dst Target
	for _, f := range TargetFields {
		v, err := TargetFieldValue(&src, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := SetTargetField(&dst, f, v); err != nil {
			t.Fatalf("%s = %q: %v", f, v, err)
		}
		back, _ := TargetFieldValue(&dst, f)
		if back != v {
			t.Errorf("%s: %q read back as %q", f, v, back)
		}
	}
	if dst.DeptID == nil || *dst.DeptID != 37 || dst.DeptBinding != BindingMapped || !dst.Enabled || dst.ExpectedCadenceDays != 7 {
		t.Errorf("round trip lost values: %+v", dst)
	}
	for _, bad := range [][2]string{{FieldEnabled, "maybe"}, {FieldExpectedCadenceDays, "seven"}, {FieldDept, "mapped:x"}, {"colour", "red"}} {
		if err := SetTargetField(&dst, bad[0], bad[1]); err == nil {
			t.Errorf("%s = %q accepted", bad[0], bad[1])
		}
	}
}
