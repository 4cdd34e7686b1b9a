package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// fixture is a small world every schema test starts from: a template site
// with a target, an adapter site with a mapped department and a target, one
// local department and one article.
type fixture struct {
	yamlSite, cmsSite  int64
	yamlTarget, cmsTgt int64
	dept               int64
	siteDept           int64
	article            int64
	now                time.Time
}

func newFixture(t *testing.T, s *store.Store) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{dept: 37, now: time.Date(2026, 4, 23, 1, 2, 3, 0, time.UTC)}
	// Every write from here on is one second after the previous one.
	s.Now = steppingClock(f.now)
	if _, _, err := s.ImportDepartments(ctx, []model.Department{{DeptID: 37, DeptName: "清远市发展和改革局", State: 1}}); err != nil {
		t.Fatalf("import departments: %v", err)
	}
	err := s.WithTx(ctx, func(tx *store.Tx) error {
		ys := &model.Site{SiteCode: "gd_ref", SiteName: "广东省人民政府", BaseURL: "https://www.gd.gov.test",
			SiteRole: model.RoleProvinceRef, YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessFull,
			DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
		if _, _, err := tx.UpsertSite(ctx, ys); err != nil {
			return err
		}
		cs := &model.Site{SiteCode: "qy", SiteName: "清远市人民政府", BaseURL: "https://www.gdqy.gov.test",
			SiteRole: model.RoleQingyuanLocal, CMSAdapter: "gkmlpt", AdapterParams: json.RawMessage(`{"sid": 763042}`),
			Access: model.AccessFull, RespectRobots: true, Enabled: true}
		if _, _, err := tx.UpsertSite(ctx, cs); err != nil {
			return err
		}
		dept := int64(37)
		sd := &model.SiteDepartment{SiteID: cs.ID, DeptPath: "qyfgw", LocalDeptID: &dept,
			DeptBinding: model.BindingMapped, Enabled: true}
		if _, _, err := tx.UpsertSiteDepartment(ctx, sd); err != nil {
			return err
		}
		yt := &model.Target{SiteID: ys.ID, TargetCode: "gd_zcwj", TargetName: "政策文件",
			EntryURL: "https://www.gd.gov.test/zwgk/zcwj/", Enabled: true, Source: model.SourceYAML}
		if _, _, err := tx.UpsertTarget(ctx, yt); err != nil {
			return err
		}
		ct := &model.Target{SiteID: cs.ID, SiteDepartmentID: &sd.ID, TargetCode: "qyfgw_2849", ColumnID: "2849",
			EntryURL: "https://www.gdqy.gov.test/qyfgw/gkmlpt/index", Enabled: true, Source: model.SourceYAML}
		if _, _, err := tx.UpsertTarget(ctx, ct); err != nil {
			return err
		}
		f.yamlSite, f.cmsSite, f.siteDept, f.yamlTarget, f.cmsTgt = ys.ID, cs.ID, sd.ID, yt.ID, ct.ID
		return nil
	})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	a := &model.Article{SiteID: f.cmsSite, TargetID: f.cmsTgt, NativePostID: "1001",
		URL: "https://www.gdqy.gov.test/qyfgw/gkmlpt/content/1/1001/post_1001.html", Title: "通知",
		Status: model.StatusReady, FetchedAt: f.now}
	if _, _, err := s.UpsertArticle(ctx, a); err != nil {
		t.Fatalf("fixture article: %v", err)
	}
	f.article = a.ID
	return f
}

// hash returns a distinct valid url_hash per label.
func hash(label string) string { return store.URLHash("https://example.gov.test/" + label) }

type stmt struct {
	sql  string
	args func(s *store.Store, f fixture) []any
}

// TestSchemaRules proves, on both dialects, that the database itself refuses
// each row that breaks a seed 004 §5 rule, and accepts its well-formed twin.
// The statements bypass the typed methods on purpose.
func TestSchemaRules(t *testing.T) {
	const (
		insSite    = `INSERT INTO crawl_site (site_code, site_role, cms_adapter, adapter_params_json, yaml_path, access, default_fetch_strategy, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
		insSD      = `INSERT INTO site_department (site_id, dept_path, local_dept_id, dept_binding) VALUES (?, ?, ?, ?)`
		insTarget  = `INSERT INTO crawl_target (site_id, site_department_id, target_code, source) VALUES (?, ?, ?, ?)`
		insArticle = `INSERT INTO article (site_id, target_id, native_post_id, url, url_hash, status, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
		insReg     = `INSERT INTO master_column_registry (adapter_id, site_id, column_id, admin_level, topic_tags, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)`
	)
	site := func(code string, adapter, params, yaml any, role, access string, strategy any, enabled bool) func(*store.Store, fixture) []any {
		return func(*store.Store, fixture) []any {
			return []any{code, role, adapter, params, yaml, access, strategy, enabled}
		}
	}
	article := func(native any, label, status string, target func(fixture) int64) func(*store.Store, fixture) []any {
		return func(s *store.Store, f fixture) []any {
			return []any{f.cmsSite, target(f), native, "https://example.gov.test/" + label, hash(label), status, store.TS(s, f.now)}
		}
	}
	cmsTarget := func(f fixture) int64 { return f.cmsTgt }
	dept := func(id int64) *int64 { return &id }

	tests := []struct {
		name string
		good *stmt // accepted (may be nil)
		bad  stmt  // refused
		want string
	}{
		{
			name: "site with both cms_adapter and yaml_path",
			good: &stmt{insSite, site("s_ok1", nil, nil, "config/sites/a.yaml", "county_local", "full", nil, true)},
			bad:  stmt{insSite, site("s_both", "gkmlpt", `{"sid":1}`, "config/sites/b.yaml", "county_local", "full", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "site with neither cms_adapter nor yaml_path",
			good: &stmt{insSite, site("s_ok2", "gkmlpt", `{"sid":1}`, nil, "county_local", "full", nil, true)},
			bad:  stmt{insSite, site("s_neither", nil, nil, nil, "county_local", "full", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "site with empty strings for both counts as neither",
			bad:  stmt{insSite, site("s_empty", "", nil, "", "county_local", "full", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "enabled adapter site without adapter params",
			good: &stmt{insSite, site("s_ok3", "gkmlpt", nil, nil, "county_local", "full", nil, false)},
			bad:  stmt{insSite, site("s_noparams", "gkmlpt", nil, nil, "county_local", "full", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "site with unknown site_role",
			bad:  stmt{insSite, site("s_role", nil, nil, "a.yaml", "township_local", "full", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "site with unknown access",
			bad:  stmt{insSite, site("s_access", nil, nil, "a.yaml", "county_local", "everything", nil, true)},
			want: store.ViolationCheck,
		},
		{
			name: "site with unknown fetch strategy",
			good: &stmt{insSite, site("s_ok4", nil, nil, "a.yaml", "county_local", "summary", "playwright", true)},
			bad:  stmt{insSite, site("s_strategy", nil, nil, "a.yaml", "county_local", "full", "selenium", true)},
			want: store.ViolationCheck,
		},
		{
			name: "duplicate site_code",
			bad:  stmt{insSite, site("gd_ref", nil, nil, "a.yaml", "county_local", "full", nil, true)},
			want: store.ViolationUnique,
		},
		{
			name: "site department with unknown dept_binding",
			good: &stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "ok_city", nil, "city_level"} }},
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "bad_binding", nil, "local"} }},
			want: store.ViolationCheck,
		},
		{
			name: "mapped site department without local_dept_id",
			good: &stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "ok_mapped", dept(37), "mapped"} }},
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "mapped_nodept", nil, "mapped"} }},
			want: store.ViolationCheck,
		},
		{
			name: "non-mapped site department with local_dept_id",
			good: &stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "ok_pending", nil, "pending"} }},
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "cross_dept", dept(37), "cross_dept"} }},
			want: store.ViolationCheck,
		},
		{
			name: "duplicate (site_id, dept_path)",
			good: &stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.yamlSite, "qyfgw", nil, "external_ref"} }},
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "qyfgw", nil, "external_ref"} }},
			want: store.ViolationUnique,
		},
		{
			name: "site department bound to unknown local department",
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{f.cmsSite, "ghost", dept(99999), "mapped"} }},
			want: store.ViolationForeignKey,
		},
		{
			name: "site department of unknown site",
			bad:  stmt{insSD, func(_ *store.Store, f fixture) []any { return []any{int64(99999), "nosite", nil, "pending"} }},
			want: store.ViolationForeignKey,
		},
		{
			name: "target of unknown site",
			good: &stmt{insTarget, func(_ *store.Store, f fixture) []any { return []any{f.yamlSite, nil, "t_ok", "admin"} }},
			bad:  stmt{insTarget, func(_ *store.Store, f fixture) []any { return []any{int64(99999), nil, "t_nosite", "admin"} }},
			want: store.ViolationForeignKey,
		},
		{
			name: "target whose site department belongs to another site",
			bad:  stmt{insTarget, func(_ *store.Store, f fixture) []any { return []any{f.yamlSite, f.siteDept, "t_cross", "admin"} }},
			want: store.ViolationForeignKey,
		},
		{
			name: "duplicate target_code",
			bad:  stmt{insTarget, func(_ *store.Store, f fixture) []any { return []any{f.yamlSite, nil, "gd_zcwj", "admin"} }},
			want: store.ViolationUnique,
		},
		{
			name: "target with unknown source",
			bad:  stmt{insTarget, func(_ *store.Store, f fixture) []any { return []any{f.yamlSite, nil, "t_src", "api"} }},
			want: store.ViolationCheck,
		},
		{
			name: "article with unknown status",
			good: &stmt{insArticle, article(nil, "status_ok", "failed", cmsTarget)},
			bad:  stmt{insArticle, article(nil, "status_bad", "published", cmsTarget)},
			want: store.ViolationCheck,
		},
		{
			name: "article of unknown target",
			bad:  stmt{insArticle, article(nil, "no_target", "raw", func(fixture) int64 { return 99999 })},
			want: store.ViolationForeignKey,
		},
		{
			name: "article whose target belongs to another site",
			bad:  stmt{insArticle, article(nil, "other_site", "raw", func(f fixture) int64 { return f.yamlTarget })},
			want: store.ViolationForeignKey,
		},
		{
			name: "duplicate (site_id, native_post_id)",
			good: &stmt{insArticle, article("2002", "native_ok", "raw", cmsTarget)},
			bad:  stmt{insArticle, article("1001", "native_dup", "raw", cmsTarget)},
			want: store.ViolationUnique,
		},
		{
			name: "two articles without native_post_id are fine; empty native_post_id is not",
			good: &stmt{insArticle, article(nil, "null_native_2", "raw", cmsTarget)},
			bad:  stmt{insArticle, article("", "empty_native", "raw", cmsTarget)},
			want: store.ViolationCheck,
		},
		{
			name: "duplicate url_hash",
			bad: stmt{insArticle, func(s *store.Store, f fixture) []any {
				return []any{f.cmsSite, f.cmsTgt, nil, "https://example.gov.test/status_ok", hash("status_ok"), "raw", store.TS(s, f.now)}
			}},
			want: store.ViolationUnique,
		},
		{
			name: "url_hash that is not 64 hex digits",
			bad: stmt{insArticle, func(s *store.Store, f fixture) []any {
				return []any{f.cmsSite, f.cmsTgt, nil, "https://example.gov.test/short", hash("short")[:63], "raw", store.TS(s, f.now)}
			}},
			want: store.ViolationCheck,
		},
		{
			name: "url_hash in upper case",
			bad: stmt{insArticle, func(s *store.Store, f fixture) []any {
				return []any{f.cmsSite, f.cmsTgt, nil, "https://example.gov.test/upper", strings.ToUpper(hash("upper")), "raw", store.TS(s, f.now)}
			}},
			want: store.ViolationCheck,
		},
		{
			name: "attachment of unknown article",
			good: &stmt{`INSERT INTO attachment (article_id, file_name) VALUES (?, ?)`,
				func(_ *store.Store, f fixture) []any { return []any{f.article, "附件.pdf"} }},
			bad: stmt{`INSERT INTO attachment (article_id, file_name) VALUES (?, ?)`,
				func(_ *store.Store, f fixture) []any { return []any{int64(99999), "附件.pdf"} }},
			want: store.ViolationForeignKey,
		},
		{
			name: "duplicate registry (adapter_id, site_id, column_id)",
			good: &stmt{insReg, func(s *store.Store, f fixture) []any {
				return []any{"gkmlpt", f.cmsSite, "2849", "city", `["规划计划"]`, store.TS(s, f.now)}
			}},
			bad: stmt{insReg, func(s *store.Store, f fixture) []any {
				return []any{"gkmlpt", f.cmsSite, "2849", "city", `[]`, store.TS(s, f.now)}
			}},
			want: store.ViolationUnique,
		},
		{
			name: "registry with unknown admin_level",
			bad: stmt{insReg, func(s *store.Store, f fixture) []any {
				return []any{"gkmlpt", f.cmsSite, "3000", "province", `[]`, store.TS(s, f.now)}
			}},
			want: store.ViolationCheck,
		},
		{
			name: "registry topic_tags that is not an array",
			bad: stmt{insReg, func(s *store.Store, f fixture) []any {
				return []any{"gkmlpt", f.cmsSite, "3001", "county", `{"a":1}`, store.TS(s, f.now)}
			}},
			want: store.ViolationCheck,
		},
		{
			name: "registry subscribed to unknown target",
			bad: stmt{`INSERT INTO master_column_registry (adapter_id, site_id, column_id, admin_level, last_seen_at, subscribed_target_id) VALUES (?, ?, ?, ?, ?, ?)`,
				func(s *store.Store, f fixture) []any {
					return []any{"gkmlpt", f.cmsSite, "3002", "county", store.TS(s, f.now), int64(99999)}
				}},
			want: store.ViolationForeignKey,
		},
		{
			name: "crawl log of unknown target (site and target may be NULL)",
			good: &stmt{`INSERT INTO crawl_log (site_id, target_id, host, success, occurred_at) VALUES (?, ?, ?, ?, ?)`,
				func(s *store.Store, f fixture) []any {
					return []any{nil, nil, "www.gd.gov.test", true, store.TS(s, f.now)}
				}},
			bad: stmt{`INSERT INTO crawl_log (site_id, target_id, host, success, occurred_at) VALUES (?, ?, ?, ?, ?)`,
				func(s *store.Store, f fixture) []any {
					return []any{nil, int64(99999), "www.gd.gov.test", true, store.TS(s, f.now)}
				}},
			want: store.ViolationForeignKey,
		},
		{
			name: "cookie with unknown source",
			bad: stmt{`INSERT INTO cookie (host, name, source) VALUES (?, ?, ?)`,
				func(*store.Store, fixture) []any { return []any{"www.gdqy.gov.test", "ctct", "stolen"} }},
			want: store.ViolationCheck,
		},
	}

	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.good != nil {
					if err := store.Exec(ctx, s, tt.good.sql, tt.good.args(s, f)...); err != nil {
						t.Fatalf("well-formed row refused: %v", err)
					}
				}
				err := store.Exec(ctx, s, tt.bad.sql, tt.bad.args(s, f)...)
				if err == nil {
					t.Fatalf("row breaking the rule was accepted")
				}
				if got := store.ConstraintViolation(err); got != tt.want {
					t.Fatalf("refused as %q, want a %s violation: %v", got, tt.want, err)
				}
			})
		}
	})
}

// TestAttachmentsCascade: deleting an article deletes its attachments.
func TestAttachmentsCascade(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		if err := s.ReplaceAttachments(ctx, f.article, []model.Attachment{{FileName: "a.pdf"}, {FileName: "b.docx"}}); err != nil {
			t.Fatal(err)
		}
		if err := store.Exec(ctx, s, `DELETE FROM article WHERE id = ?`, f.article); err != nil {
			t.Fatalf("delete article: %v", err)
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM attachment`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%d attachments survived their article", n)
		}
	})
}

// TestAttachmentTextRoundTrip: a PDF attachment's text, class and page
// count come back as stored, in both dialects; a class outside the four is
// refused by the schema; a site's attachments.ocr is kept.
func TestAttachmentTextRoundTrip(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		want := []model.Attachment{
			{FileName: "通知.pdf", FileExt: "pdf", Text: "关于做好政务公开工作的通知\n\n附件", TextClass: "mixed", PageCount: 2,
				TextError: "pages [2] are scanned; OCR is off for this site (attachments: {ocr: true})"},
			{FileName: "表.docx", FileExt: "docx"},
		}
		if err := s.ReplaceAttachments(ctx, f.article, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.ArticleAttachments(ctx, f.article)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d attachments back; want 2", len(got))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Text != w.Text || g.TextClass != w.TextClass || g.PageCount != w.PageCount || g.TextError != w.TextError {
				t.Errorf("attachment %d: text %q class %q pages %d error %q; want %q %q %d %q",
					i, g.Text, g.TextClass, g.PageCount, g.TextError, w.Text, w.TextClass, w.PageCount, w.TextError)
			}
		}
		// A changed text is a change: the list is rewritten.
		want[0].Text = "改过的正文"
		if err := s.ReplaceAttachments(ctx, f.article, want); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ArticleAttachments(ctx, f.article); len(got) != 2 || got[0].Text != "改过的正文" {
			t.Errorf("text after a change: %+v", got)
		}
		if err := store.Exec(ctx, s, `UPDATE attachment SET text_class = 'picture'`); err == nil {
			t.Error("text_class 'picture' accepted; want the schema to refuse it")
		}

		site, err := s.SiteByCode(ctx, "gd_ref")
		if err != nil {
			t.Fatal(err)
		}
		if site.AttachmentOCR {
			t.Error("attachment_ocr on by default")
		}
		site.AttachmentOCR = true
		err = s.WithTx(ctx, func(tx *store.Tx) error { _, _, err := tx.UpsertSite(ctx, site); return err })
		if err != nil {
			t.Fatal(err)
		}
		if site, err = s.SiteByCode(ctx, "gd_ref"); err != nil || !site.AttachmentOCR {
			t.Errorf("attachment_ocr after upsert: %v, %v; want true", site.AttachmentOCR, err)
		}
	})
}
