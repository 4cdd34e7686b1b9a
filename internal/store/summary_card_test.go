package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// cardArticle is a ready article of the fixture's template site with a
// green card built from text.
func cardArticle(f fixture, path, title, text string) *model.Article {
	pub := time.Date(2026, 3, 5, 2, 0, 0, 0, time.UTC)
	u := "https://www.gd.gov.test/zwgk/zcwj/" + path
	return &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: u, Title: title,
		ContentText: text, Status: model.StatusReady, FetchedAt: f.now, PublishTime: &pub, ChannelName: "政策文件",
		Card: &model.SummaryCard{Title: title, AutoSummary: text[:min(len(text), 30)], SourceURL: u, PublishTime: &pub,
			Simhash: 0xfedcba9876543210, SourceDNA: "dna-" + text, FetchedAt: f.now,
			Anchors: []model.CardAnchor{{Text: "2026年3月5日", Kind: "date"}}, Covered: 1, Sigma: 1, Relevance: 4,
			Grade: model.GradeGreen}}
}

// TestCardSavedWithItsArticle: the card is written in the article's
// transaction; the same source keeps a person's rewrite, a changed source
// replaces it; the simhash keeps all 64 bits.
func TestCardSavedWithItsArticle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		a := cardArticle(f, "a.html", "关于印发实施方案的通知", "第一段正文内容。第二段正文内容。")
		id, _, err := s.SaveArticle(ctx, a, nil, 0, store.FrontierMark{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CardByArticle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Simhash != 0xfedcba9876543210 || c.Summary != a.Card.AutoSummary || c.Grade != model.GradeGreen ||
			c.SiteName != "广东省人民政府" || c.ChannelName != "政策文件" || len(c.Anchors) != 1 {
			t.Fatalf("stored card %+v", c)
		}

		r, err := s.RewriteCard(ctx, c.ID, store.CardRewrite{Summary: "人工改写的摘要。", Sigma: 0.9, Covered: 1,
			Relevance: 3, Grade: model.GradeGreen, Actor: "user:alice"})
		if err != nil || r.RewrittenBy != "user:alice" {
			t.Fatalf("rewrite: %+v %v", r, err)
		}
		// The same text fetched again: the rewrite stays.
		again := cardArticle(f, "a.html", "关于印发实施方案的通知", "第一段正文内容。第二段正文内容。")
		if _, _, err := s.SaveArticle(ctx, again, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		if c, _ = s.CardByID(ctx, c.ID); c.Summary != "人工改写的摘要。" || c.RewrittenBy != "user:alice" {
			t.Fatalf("unchanged source lost the rewrite: %+v", c)
		}
		// The source changed: the machine's new cut replaces the rewrite.
		changed := cardArticle(f, "a.html", "关于印发实施方案的通知", "第一段正文已修改。第二段正文内容。")
		if _, _, err := s.SaveArticle(ctx, changed, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		if c, _ = s.CardByID(ctx, c.ID); c.Summary != changed.Card.AutoSummary || c.RewrittenBy != "" {
			t.Fatalf("changed source kept the old rewrite: %+v", c)
		}
		audit, err := s.ListAudit(ctx, store.AuditFilter{})
		if err != nil || len(audit) == 0 || audit[0].Action != "card.rewrite" {
			t.Fatalf("rewrite not audited: %+v %v", audit, err)
		}
	})
}

// TestTakedownFreezesCards: a request is open with a 48-hour deadline until
// it is carried out; then the cards it names leave the portal's lists but
// stay in the store, a site-wide request also freezes the site's later
// cards, and a request is carried out once.
func TestTakedownFreezesCards(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		var ids []int64
		for i := range 3 {
			a := cardArticle(f, fmt.Sprintf("p%d.html", i), fmt.Sprintf("通知%d", i), fmt.Sprintf("正文第%d篇的内容。", i))
			id, _, err := s.SaveArticle(ctx, a, nil, 0, store.FrontierMark{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		pages := store.CardQuery{Public: true}
		if _, n, err := s.ListCards(ctx, pages); err != nil || n != 3 {
			t.Fatalf("before: %d cards, %v", n, err)
		}

		k := &model.Takedown{SiteID: f.yamlSite, Scope: model.TakedownURLs, URLs: []string{"https://www.gd.gov.test/zwgk/zcwj/p1.html"},
			Requester: "广东省政务服务数据管理局", RecordedBy: "user:alice"}
		if err := s.RecordTakedown(ctx, k); err != nil {
			t.Fatal(err)
		}
		if got := k.DeadlineAt.Sub(k.ReceivedAt); got != 48*time.Hour {
			t.Fatalf("deadline %v after receipt, want 48h", got)
		}
		open, err := s.ListTakedowns(ctx, true)
		if err != nil || len(open) != 1 {
			t.Fatalf("open takedowns: %+v %v", open, err)
		}
		done, err := s.FreezeTakedown(ctx, k.ID, "user:alice")
		if err != nil {
			t.Fatal(err)
		}
		if done.CardsFrozen != 1 || done.Receipt == "" || done.FrozenAt == nil {
			t.Fatalf("carried out: %+v", done)
		}
		if _, err := s.FreezeTakedown(ctx, k.ID, "user:alice"); !errors.Is(err, store.ErrTakedownDone) {
			t.Fatalf("second freeze: %v, want ErrTakedownDone", err)
		}
		list, n, err := s.ListCards(ctx, pages)
		if err != nil || n != 2 {
			t.Fatalf("after the page takedown: %d public cards, %v", n, err)
		}
		for _, c := range list {
			if c.SourceURL == "https://www.gd.gov.test/zwgk/zcwj/p1.html" {
				t.Fatalf("frozen card listed: %+v", c)
			}
		}
		if c, err := s.CardByArticle(ctx, ids[1]); err != nil || c.TakedownID == nil || c.Visible() {
			t.Fatalf("frozen card must stay in the store, hidden: %+v %v", c, err)
		}

		site := &model.Takedown{SiteID: f.yamlSite, Scope: model.TakedownSite, Requester: "广东省人民政府办公厅", RecordedBy: "user:alice"}
		if err := s.RecordTakedown(ctx, site); err != nil {
			t.Fatal(err)
		}
		if done, err = s.FreezeTakedown(ctx, site.ID, "user:alice"); err != nil || done.CardsFrozen != 2 {
			t.Fatalf("site takedown froze %+v, %v; want the 2 cards still shown", done, err)
		}
		later := cardArticle(f, "later.html", "新通知", "之后发布的一篇正文。")
		id, _, err := s.SaveArticle(ctx, later, nil, 0, store.FrontierMark{})
		if err != nil {
			t.Fatal(err)
		}
		if c, err := s.CardByArticle(ctx, id); err != nil || c.TakedownID == nil || *c.TakedownID != site.ID {
			t.Fatalf("a later card of a taken-down site must be frozen: %+v %v", c, err)
		}
		if _, n, _ := s.ListCards(ctx, pages); n != 0 {
			t.Fatalf("%d public cards after the site takedown, want 0", n)
		}
		if open, _ = s.ListTakedowns(ctx, true); len(open) != 0 {
			t.Fatalf("open takedowns after both were carried out: %+v", open)
		}
	})
}

// TestReprintStandsInForAFrozenOriginal: a reprint is hidden while its
// original is shown; when a takedown at the original's site freezes the
// original, the other site's reprint is shown in its place — a site's
// takedown never hides another site's card.
func TestReprintStandsInForAFrozenOriginal(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		orig := cardArticle(f, "orig.html", "关于印发实施方案的通知", "原文正文内容。")
		if _, _, err := s.SaveArticle(ctx, orig, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		reprint := cardArticle(f, "reprint.html", "转发关于印发实施方案的通知", "原文正文内容。")
		reprint.SiteID, reprint.TargetID = f.cmsSite, f.cmsTgt
		reprint.URL = "https://www.gdqy.gov.test/qyfgw/gkmlpt/content/1/1/post_1.html"
		reprint.Card.SourceURL = reprint.URL
		reprint.Card.DuplicateOf = &orig.Card.ID
		if _, _, err := s.SaveArticle(ctx, reprint, nil, 0, store.FrontierMark{}); err != nil {
			t.Fatal(err)
		}
		public := func() []string {
			t.Helper()
			list, _, err := s.ListCards(ctx, store.CardQuery{Public: true})
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, c := range list {
				urls = append(urls, c.SourceURL)
			}
			return urls
		}
		if got := public(); len(got) != 1 || got[0] != orig.URL {
			t.Fatalf("public cards %v, want only the original", got)
		}
		k := &model.Takedown{SiteID: f.yamlSite, Scope: model.TakedownURLs, URLs: []string{orig.URL}, Requester: "广东省人民政府办公厅", RecordedBy: "user:alice"}
		if err := s.RecordTakedown(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.FreezeTakedown(ctx, k.ID, "user:alice"); err != nil {
			t.Fatal(err)
		}
		if got := public(); len(got) != 1 || got[0] != reprint.URL {
			t.Fatalf("public cards %v after the original's takedown, want the reprint", got)
		}
		c, err := s.CardByID(ctx, reprint.Card.ID)
		if err != nil || !c.Visible() || !c.OriginalFrozen {
			t.Fatalf("reprint %+v (%v): want visible, its original frozen", c, err)
		}
	})
}
