package corpus_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/corpustest"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestBuildsAtOnce: two builds started together (two people, or a person
// and a script) make two releases, each whole and verifiable; and a build
// that stops half way leaves a failed release that says so and can never
// be verified or activated.
func TestBuildsAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := corpustest.Populate(t, st, "lianzhou")
		var wg sync.WaitGroup
		res := make([]*corpus.BuildResult, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each as its own process would: a service of its own.
				res[i], errs[i] = corpus.New(st, "test").Build(ctx, "user:admin", nil)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("build %d: %v", i, err)
			}
		}
		if res[0].Version == res[1].Version {
			t.Fatalf("two builds wrote one release %s", res[0].Version)
		}
		for _, r := range res {
			if err := c.Service.Verify(ctx, r.Version, "user:admin", corpus.VerifyOptions{}, nil); err != nil {
				t.Fatalf("release %s: %v", r.Version, err)
			}
		}

		// A build that claimed its version and stopped before its end.
		if err := st.ClaimCorpusRelease(ctx, "20000101-1", "user:admin"); err != nil {
			t.Fatal(err)
		}
		rel, err := st.CorpusRelease(ctx, "20000101-1")
		if err != nil {
			t.Fatal(err)
		}
		if rel.State != store.ReleaseFailed || !strings.Contains(rel.VerifyError, "构建未完成") {
			t.Fatalf("an unfinished build's release: %+v", rel)
		}
		if err := c.Service.Verify(ctx, "20000101-1", "user:admin", corpus.VerifyOptions{}, nil); err == nil {
			t.Fatal("an unfinished release verified")
		}
		if _, err := c.Service.Activate(ctx, "20000101-1", "user:admin"); err == nil {
			t.Fatal("an unfinished release was activated")
		}
		if err := st.ClaimCorpusRelease(ctx, res[0].Version, "user:admin"); err == nil {
			t.Fatalf("release %s was claimed twice", res[0].Version)
		}
	})
}
