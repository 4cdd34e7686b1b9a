package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestUpsertArticleDedupe walks seed 004 §5.5's dedupe rules in order on
// one store: each step upserts an article and names the row it must land on.
func TestUpsertArticleDedupe(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		ids := map[string]int64{"fixture": f.article}
		gk := func(native, url, title string) *model.Article {
			return &model.Article{SiteID: f.cmsSite, TargetID: f.cmsTgt, NativePostID: native, URL: url,
				Title: title, Status: model.StatusReady, FetchedAt: f.now,
				MetadataJSON: json.RawMessage(`{"raw": {"索引号": "007", "文号": "清府〔2026〕1号"}}`)}
		}
		tpl := func(url, title string) *model.Article {
			return &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: url, Title: title,
				Status: model.StatusReady, FetchedAt: f.now, ContentText: "正文"}
		}
		steps := []struct {
			name        string
			article     *model.Article
			wantOutcome string
			sameRowAs   string // key in ids; "" means a new row, remembered under name
		}{
			{"new gkmlpt post", gk("5001", "https://www.gdqy.gov.test/a/post_5001.html", "甲"), store.OutcomeCreated, ""},
			{"same post again", gk("5001", "https://www.gdqy.gov.test/a/post_5001.html", "甲"), store.OutcomeUnchanged, "new gkmlpt post"},
			{"same post refetched later", withFetched(gk("5001", "https://www.gdqy.gov.test/a/post_5001.html", "甲"), f.now.Add(time.Hour)), store.OutcomeUnchanged, "new gkmlpt post"},
			{"same native id, new URL (CMS moved it)", gk("5001", "http://www.gdqy.gov.test/b/post_5001.html", "甲"), store.OutcomeUpdated, "new gkmlpt post"},
			{"same native id, new title", gk("5001", "http://www.gdqy.gov.test/b/post_5001.html", "甲（修订）"), store.OutcomeUpdated, "new gkmlpt post"},
			{"other native id", gk("5002", "https://www.gdqy.gov.test/a/post_5002.html", "乙"), store.OutcomeCreated, ""},
			{"template page", tpl("https://www.gd.gov.test/zcwj/1.html", "丙"), store.OutcomeCreated, ""},
			{"template page again", tpl("https://www.gd.gov.test/zcwj/1.html", "丙"), store.OutcomeUnchanged, "template page"},
			{"template page edited", tpl("https://www.gd.gov.test/zcwj/1.html", "丙（更正）"), store.OutcomeUpdated, "template page"},
			{"second template page without native id", tpl("https://www.gd.gov.test/zcwj/2.html", "丁"), store.OutcomeCreated, ""},
		}
		for _, st := range steps {
			id, outcome, err := s.UpsertArticle(ctx, st.article)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if outcome != st.wantOutcome {
				t.Errorf("%s: outcome %s, want %s", st.name, outcome, st.wantOutcome)
			}
			if st.sameRowAs == "" {
				for k, other := range ids {
					if other == id {
						t.Errorf("%s: landed on the row of %q, want a new row", st.name, k)
					}
				}
				ids[st.name] = id
			} else if ids[st.sameRowAs] != id {
				t.Errorf("%s: row %d, want the row of %q (%d)", st.name, id, st.sameRowAs, ids[st.sameRowAs])
			}
		}

		moved, err := s.ArticleByNativeID(ctx, f.cmsSite, "5001")
		if err != nil {
			t.Fatal(err)
		}
		newURL := "http://www.gdqy.gov.test/b/post_5001.html"
		if moved.URL != newURL || moved.URLHash != store.URLHash(newURL) || moved.Title != "甲（修订）" {
			t.Fatalf("moved post: url %s hash %s title %s", moved.URL, moved.URLHash, moved.Title)
		}
		if _, err := s.ArticleByURLHash(ctx, store.URLHash("https://www.gdqy.gov.test/a/post_5001.html")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("old URL hash still findable: %v", err)
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM article`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 5 {
			t.Fatalf("%d article rows, want 5", n)
		}
	})
}

func withFetched(a *model.Article, at time.Time) *model.Article {
	a.FetchedAt = at
	return a
}

// TestSummarySiteRefusesContent: a summary-access site never stores full
// text, raw HTML, a text file or attachment files (DESIGN §1).
func TestSummarySiteRefusesContent(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		var siteID, targetID int64
		err := s.WithTx(ctx, func(tx *store.Tx) error {
			site := &model.Site{SiteCode: "gov_cn", SiteRole: model.RoleNationRef, YAMLPath: "config/sites/gov_cn.yaml",
				Access: model.AccessSummary, Enabled: true}
			if _, _, err := tx.UpsertSite(ctx, site); err != nil {
				return err
			}
			tg := &model.Target{SiteID: site.ID, TargetCode: "gov_cn_zc"}
			if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
				return err
			}
			siteID, targetID = site.ID, tg.ID
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		base := func(url string) *model.Article {
			return &model.Article{SiteID: siteID, TargetID: targetID, URL: url, Title: "国务院通知", FetchedAt: f.now}
		}
		tests := []struct {
			name   string
			modify func(a *model.Article)
		}{
			{"content_text", func(a *model.Article) { a.ContentText = "全文" }},
			{"raw_html_path", func(a *model.Article) { a.RawHTMLPath = "blobs/ab/cd/abcd" }},
			{"text_path", func(a *model.Article) { a.TextPath = "blobs/ab/cd/abcd" }},
		}
		for _, tt := range tests {
			a := base("https://www.gov.test/" + tt.name)
			tt.modify(a)
			if _, _, err := s.UpsertArticle(ctx, a); !errors.Is(err, store.ErrSummaryContent) {
				t.Errorf("%s on a summary site: err = %v, want ErrSummaryContent", tt.name, err)
			}
			if _, err := s.ArticleByURLHash(ctx, store.URLHash(a.URL)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: refused article was stored", tt.name)
			}
		}
		a := base("https://www.gov.test/ok")
		id, _, err := s.UpsertArticle(ctx, a)
		if err != nil {
			t.Fatalf("summary article without content refused: %v", err)
		}
		err = s.ReplaceAttachments(ctx, id, []model.Attachment{{FileName: "a.pdf", FilePath: "blobs/aa/bb/x"}})
		if !errors.Is(err, store.ErrSummaryContent) {
			t.Fatalf("attachment file on a summary site: err = %v, want ErrSummaryContent", err)
		}
		if err := s.ReplaceAttachments(ctx, id, []model.Attachment{{FileName: "a.pdf", URL: "https://www.gov.test/a.pdf"}}); err != nil {
			t.Fatalf("listing an attachment without its file refused: %v", err)
		}
		// The same content on the full-access fixture site is accepted.
		full := &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: "https://www.gd.gov.test/x", ContentText: "全文", FetchedAt: f.now}
		if _, _, err := s.UpsertArticle(ctx, full); err != nil {
			t.Fatalf("full text on a full site refused: %v", err)
		}
	})
}

// TestExportCursor: pages follow (updated_at, id), do not overlap, repeat
// for the same cursor, and a changed article comes again after them.
func TestExportCursor(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s) // holds one ready article; its clock steps a second per write
		for i := range 6 {
			a := &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: "https://www.gd.gov.test/p/" + string(rune('a'+i)),
				Title: "文", Status: model.StatusReady, FetchedAt: f.now, ContentCategory: "政策文件"}
			if _, _, err := s.UpsertArticle(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		raw := &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: "https://www.gd.gov.test/raw", Status: model.StatusRaw, FetchedAt: f.now}
		if _, _, err := s.UpsertArticle(ctx, raw); err != nil {
			t.Fatal(err)
		}

		page1, next1, err := s.ExportArticles(ctx, store.ExportFilter{Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		page2, next2, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: next1, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		again, _, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: next1, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1) != 4 || len(page2) != 3 {
			t.Fatalf("pages of %d and %d ready articles, want 4 and 3 (raw excluded)", len(page1), len(page2))
		}
		seen := map[int64]bool{}
		for _, a := range append(append([]model.Article{}, page1...), page2...) {
			if seen[a.ID] {
				t.Fatalf("article %d on two pages", a.ID)
			}
			if a.Status != model.StatusReady {
				t.Fatalf("exported a %s article", a.Status)
			}
			seen[a.ID] = true
		}
		if len(again) != len(page2) {
			t.Fatalf("same cursor gave %d rows, then %d", len(page2), len(again))
		}
		for i := range again {
			if again[i].ID != page2[i].ID {
				t.Fatalf("same cursor gave different rows")
			}
		}
		empty, next3, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: next2})
		if err != nil || len(empty) != 0 || next3 != next2 {
			t.Fatalf("caught-up export: %d rows, cursor kept %v, err %v", len(empty), next3 == next2, err)
		}

		// Marking exported does not reorder; changing an article brings it back.
		if err := s.MarkExported(ctx, []int64{page1[0].ID}, f.now); err != nil {
			t.Fatal(err)
		}
		if rows, _, _ := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: next2}); len(rows) != 0 {
			t.Fatalf("marking exported re-exported %d rows", len(rows))
		}
		changed := page1[1]
		changed.Title = "文（修订）"
		changed.Attachments = nil
		if _, outcome, err := s.UpsertArticle(ctx, &changed); err != nil || outcome != store.OutcomeUpdated {
			t.Fatalf("update: %s %v", outcome, err)
		}
		rows, _, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: next2})
		if err != nil || len(rows) != 1 || rows[0].ID != changed.ID {
			t.Fatalf("after a change: %d rows, err %v, want the changed article", len(rows), err)
		}

		cat, _, err := s.ExportArticles(ctx, store.ExportFilter{Category: "政策文件", SiteRole: model.RoleProvinceRef})
		if err != nil || len(cat) != 6 {
			t.Fatalf("category+role filter: %d rows, err %v, want 6", len(cat), err)
		}
		if _, _, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: "not-a-cursor"}); !errors.Is(err, store.ErrBadCursor) {
			t.Fatalf("bad cursor: err = %v", err)
		}
	})
}
