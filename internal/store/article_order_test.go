package store_test

import (
	"context"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestArticleWritesTakeTurns: while one transaction holds an article write,
// another waits, and the later commit carries the later updated_at. Without
// this the export cursor (updated_at, id) could step past a row that commits
// after a newer one.
func TestArticleWritesTakeTurns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		s.Now = time.Now
		article := func(n string) *model.Article {
			return &model.Article{SiteID: f.yamlSite, TargetID: f.yamlTarget, URL: "https://www.gd.gov.test/zwgk/" + n + ".html",
				Title: n, Status: model.StatusReady, FetchedAt: time.Now()}
		}
		a, b := article("a"), article("b")
		stamped, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			firstDone <- s.WithTx(ctx, func(tx *store.Tx) error {
				if _, _, err := tx.UpsertArticle(ctx, a); err != nil {
					return err
				}
				close(stamped)
				<-release // hold the write open
				return nil
			})
		}()
		<-stamped
		secondDone := make(chan error, 1)
		go func() {
			_, _, err := s.UpsertArticle(ctx, b)
			secondDone <- err
		}()
		var early bool
		var secondErr error
		select {
		case secondErr = <-secondDone:
			early = true
		case <-time.After(300 * time.Millisecond):
		}
		close(release) // always: the open transaction must end before cleanup
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		if early {
			t.Fatalf("a second article write finished while the first was open (err %v): writers must take turns", secondErr)
		}
		if err := <-secondDone; err != nil {
			t.Fatal(err)
		}
		if !b.UpdatedAt.After(a.UpdatedAt) {
			t.Errorf("later commit stamped %v, not after the earlier %v", b.UpdatedAt, a.UpdatedAt)
		}
	})
}
