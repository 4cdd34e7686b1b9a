package ui

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestAuditActorFilterInWords: the audit page's actor filter takes who
// acted as the page says it (用户 wangfang, 命令行 root, 系统) and shows it
// back that way; the recorded form (user:wangfang) still works.
func TestAuditActorFilterInWords(t *testing.T) {
	w := newWorld(t, storetest.SQLite(t))
	ctx := context.Background()
	for _, e := range []store.AuditEntry{
		{Actor: "user:wangfang", Action: "target.disable", ObjectType: "target", ObjectID: "by_wangfang"},
		{Actor: "system", Action: "target.disable", ObjectType: "target", ObjectID: "by_system"},
		{Actor: "apikey:7(alice)", Action: "target.disable", ObjectType: "target", ObjectID: "by_alice_key"},
	} {
		if err := w.st.RecordAudit(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	c := w.login(t, "viewer")
	body := w.get(t, "/admin/audit", c).Body.String()
	if !strings.Contains(body, `placeholder="如 用户 wangfang、命令行 root、系统"`) || strings.Contains(body, "user:wangfang、") {
		t.Errorf("the actor filter's example is not in words")
	}
	for _, tc := range []struct{ typed, shown, want string }{
		{"用户 wangfang", "用户 wangfang", "by_wangfang"},
		{"user:wangfang", "用户 wangfang", "by_wangfang"},
		{"命令行 root", "命令行 root", "news_local"},
		{"系统", "系统", "by_system"},
		{"API 密钥 7（alice）", "API 密钥 7（alice）", "by_alice_key"},
	} {
		body := w.get(t, "/admin/audit?actor="+url.QueryEscape(tc.typed), c).Body.String()
		rows := section(body, "<tbody>", "</tbody>")
		if !strings.Contains(rows, "<code>"+tc.want+"</code>") || strings.Count(rows, "<tr>") != 1 {
			t.Errorf("actor %q: want only the entry on %s, got\n%s", tc.typed, tc.want, rows)
		}
		if !strings.Contains(body, `name="actor" value="`+tc.shown+`"`) {
			t.Errorf("actor %q: the filter does not show %q", tc.typed, tc.shown)
		}
	}
}
