package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func link(url string) store.Discovered {
	return store.Discovered{URL: url, URLHash: store.URLHash(url), Item: json.RawMessage(`{"URL":"` + url + `"}`)}
}

// TestFrontierWalks: links are recorded once per target with the walk that
// found them; only a finished walk settles links; due links come back in
// discovery order, failed ones only when their retry is due.
func TestFrontierWalks(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		tg := f.yamlTarget

		w1, last, err := s.StartWalk(ctx, tg, false)
		if err != nil {
			t.Fatal(err)
		}
		if last != 0 {
			t.Fatalf("first walk: last finished walk %d, want 0 (none)", last)
		}
		a, b, c := "https://www.gd.gov.test/zcwj/a.html", "https://www.gd.gov.test/zcwj/b.html", "https://www.gd.gov.test/zcwj/c.html"
		got, err := s.Discover(ctx, tg, w1.ID, []store.Discovered{link(a), link(b), link(a)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[store.URLHash(a)] != w1.ID || got[store.URLHash(b)] != w1.ID {
			t.Fatalf("discover: %v, want a and b found by walk %d", got, w1.ID)
		}
		if err := s.WalkReached(ctx, w1.ID, 1); err != nil {
			t.Fatal(err)
		}
		// The walk stops here without finishing (a kill, a 503).
		if err := s.StopWalk(ctx, w1.ID, "list page 2: HTTP 503"); err != nil {
			t.Fatal(err)
		}

		w2, last, err := s.StartWalk(ctx, tg, false)
		if err != nil {
			t.Fatal(err)
		}
		if last != 0 {
			t.Fatalf("after an unfinished walk: last finished %d, want 0", last)
		}
		got, err = s.Discover(ctx, tg, w2.ID, []store.Discovered{link(b), link(c)})
		if err != nil {
			t.Fatal(err)
		}
		if got[store.URLHash(b)] != w1.ID || got[store.URLHash(c)] != w2.ID {
			t.Fatalf("second walk: b found by %d (want %d), c by %d (want %d)", got[store.URLHash(b)], w1.ID, got[store.URLHash(c)], w2.ID)
		}
		if err := s.WalkReached(ctx, w2.ID, 3); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishWalk(ctx, w2.ID, store.WalkReachedEnd); err != nil {
			t.Fatal(err)
		}
		_, last, err = s.StartWalk(ctx, tg, true)
		if err != nil {
			t.Fatal(err)
		}
		if last != w2.ID {
			t.Fatalf("after a finished walk: last finished %d, want %d", last, w2.ID)
		}
		walks, err := s.LastWalks(ctx, tg, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(walks) != 3 || walks[1].ID != w2.ID || walks[1].Reached != store.WalkReachedEnd || walks[1].DeepestPage != 3 ||
			walks[1].FinishedAt == nil || walks[2].FinishedAt != nil || walks[2].Error != "list page 2: HTTP 503" || !walks[0].Full {
			t.Fatalf("walks as recorded: %+v", walks)
		}

		now := time.Now().UTC()
		due, err := s.DueFrontier(ctx, tg, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 3 || due[0].URL != a || due[1].URL != b || due[2].URL != c || due[0].State != store.FrontierNew {
			t.Fatalf("due: %+v, want a, b, c new", due)
		}
		retry := now.Add(time.Hour)
		if err := s.MarkFrontier(ctx, due[0].ID, store.FrontierMark{State: store.FrontierFailed, ErrorClass: "http",
			Error: "HTTP 503", NextAttemptAt: &retry, Attempt: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkFrontier(ctx, due[1].ID, store.FrontierMark{State: store.FrontierGone, ErrorClass: "http", Error: "HTTP 404", Attempt: true}); err != nil {
			t.Fatal(err)
		}
		due, err = s.DueFrontier(ctx, tg, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].URL != c {
			t.Fatalf("due after a failure and a 404: %+v, want only c", due)
		}
		due, err = s.DueFrontier(ctx, tg, now.Add(61*time.Minute), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 2 || due[0].URL != c || due[1].URL != a || due[1].Attempts != 1 || due[1].ErrorClass != "http" {
			t.Fatalf("due an hour later: %+v, want c then the failed a (1 attempt)", due)
		}
		// Another target's links are its own.
		other, err := s.DueFrontier(ctx, f.cmsTgt, now.Add(61*time.Minute), 100)
		if err != nil || len(other) != 0 {
			t.Fatalf("other target's due links: %v %v", other, err)
		}
	})
}

// TestSaveArticleIsOneUnit: an article, its attachments and its frontier
// entry are written together; a changed attachment list alone is a new
// version the export cursor delivers again.
func TestSaveArticleIsOneUnit(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		u := "https://www.gd.gov.test/zcwj/t1.html"
		w, _, err := s.StartWalk(ctx, f.yamlTarget, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Discover(ctx, f.yamlTarget, w.ID, []store.Discovered{link(u)}); err != nil {
			t.Fatal(err)
		}
		due, err := s.DueFrontier(ctx, f.yamlTarget, time.Now(), 10)
		if err != nil || len(due) != 1 {
			t.Fatalf("due: %v %v", due, err)
		}
		art := func() *model.Article {
			return &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: u, Title: "关于印发通知",
				Status: model.StatusReady, FetchedAt: f.now, ContentText: "正文"}
		}
		att := model.Attachment{URL: "https://www.gd.gov.test/zcwj/t1.pdf", FileName: "t1.pdf", SizeBytes: 3,
			FilePath: "blobs/aa/bb/" + store.URLHash("t1.pdf"), FileHash: store.URLHash("t1.pdf"), DownloadedAt: f.now}

		id, outcome, err := s.SaveArticle(ctx, art(), []model.Attachment{att}, due[0].ID, store.FrontierMark{State: store.FrontierFetched})
		if err != nil || outcome != store.OutcomeCreated {
			t.Fatalf("save: %s %v", outcome, err)
		}
		got, err := s.ArticleByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !got.HasAttachment || len(got.Attachments) != 1 {
			t.Fatalf("stored article: has_attachment %v, %d attachments", got.HasAttachment, len(got.Attachments))
		}
		entries, err := s.FrontierEntries(ctx, f.yamlTarget)
		if err != nil || len(entries) != 1 || entries[0].State != store.FrontierFetched || entries[0].ArticleID == nil || *entries[0].ArticleID != id {
			t.Fatalf("frontier after save: %+v %v", entries, err)
		}

		page, cursor, err := s.ExportArticles(ctx, store.ExportFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if last := page[len(page)-1]; last.ID != id || len(last.Attachments) != 1 {
			t.Fatalf("first export: last row %d with %d attachments, want %d with 1", last.ID, len(last.Attachments), id)
		}
		// The same article and attachments again: nothing new to deliver.
		if _, outcome, err := s.SaveArticle(ctx, art(), []model.Attachment{att}, due[0].ID, store.FrontierMark{State: store.FrontierFetched}); err != nil || outcome != store.OutcomeUnchanged {
			t.Fatalf("save again: %s %v", outcome, err)
		}
		if page, _, err := s.ExportArticles(ctx, store.ExportFilter{SinceCursor: cursor}); err != nil || len(page) != 0 {
			t.Fatalf("export after an unchanged save: %d rows %v", len(page), err)
		}
		// A second attachment appears; the article text is the same.
		att2 := att
		att2.URL, att2.FileName, att2.FilePath, att2.FileHash = "https://www.gd.gov.test/zcwj/t1.docx", "t1.docx", "blobs/cc/dd/"+store.URLHash("t1.docx"), store.URLHash("t1.docx")
		if _, outcome, err := s.SaveArticle(ctx, art(), []model.Attachment{att, att2}, due[0].ID, store.FrontierMark{State: store.FrontierFetched}); err != nil || outcome != store.OutcomeUpdated {
			t.Fatalf("save with a new attachment: %s %v", outcome, err)
		}
		page, _, err = s.ExportArticles(ctx, store.ExportFilter{SinceCursor: cursor})
		if err != nil || len(page) != 1 || len(page[0].Attachments) != 2 {
			t.Fatalf("export after an attachment was added: %d rows %v, want the article with 2 attachments", len(page), err)
		}

		// A write that fails leaves nothing half done: a summary-access site
		// refuses attachment files, and the article is not stored either.
		summary := &model.Site{SiteCode: "news", SiteName: "新闻", BaseURL: "https://www.news.test",
			SiteRole: model.RoleNationRef, YAMLPath: "config/sites/news.yaml", Access: model.AccessSummary, DefaultFetchStrategy: model.StrategyDirect,
			RespectRobots: true, Enabled: true}
		var tid int64
		if err := s.WithTx(ctx, func(tx *store.Tx) error {
			if _, _, err := tx.UpsertSite(ctx, summary); err != nil {
				return err
			}
			tg := &model.Target{SiteID: summary.ID, TargetCode: "news_x", EntryURL: "https://www.news.test/x/", Enabled: true, Source: model.SourceYAML}
			_, _, err := tx.UpsertTarget(ctx, tg)
			tid = tg.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		nu := "https://www.news.test/x/1.html"
		bad := &model.Article{SiteID: summary.ID, TargetID: tid, URL: nu, Title: "新闻", Status: model.StatusReady, FetchedAt: f.now}
		if _, _, err := s.SaveArticle(ctx, bad, []model.Attachment{att}, 0, store.FrontierMark{}); err == nil {
			t.Fatal("summary site stored an attachment file")
		}
		if _, err := s.ArticleByURLHash(ctx, store.URLHash(nu)); err == nil {
			t.Fatal("the article of a refused save was stored without its attachments")
		}
	})
}
