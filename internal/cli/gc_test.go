package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestGCOnBothDialects runs `zhizhi gc --dry-run` and `zhizhi gc` on a
// database with a stored page an article refers to, an unreferenced file
// stored two hours ago and one stored just now: with SQLite the files are in
// the data directory, with PostgreSQL in the database. The dry run only
// counts; gc then removes the old unreferenced file and nothing else, and
// deletes the acquisition API's crawl job whose results expired.
func TestGCOnBothDialects(t *testing.T) {
	waitBound(t)
	eachDialect(t, func(t *testing.T, dir, dbURL string) {
		ctx := context.Background()
		st, err := store.Open(ctx, dbURL, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()

		now := time.Now()
		twoHoursAgo := now.Add(-2 * time.Hour)
		// put stores data as a crawl at the given time would have.
		put := func(data string, at time.Time) string {
			t.Helper()
			st.Now = func() time.Time { return at }
			p, _, err := st.Blobs().Put(ctx, []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if st.Dialect() == store.DialectSQLite {
				if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), at, at); err != nil {
					t.Fatal(err)
				}
			}
			return p
		}
		used := put("<html>在用的页面</html>", twoHoursAgo)
		old := put("<html>旧的孤立文件</html>", twoHoursAgo)
		young := put("<html>刚写的文件</html>", now)
		st.Now = time.Now
		referTo(t, st, used)
		if st.Dialect() == store.DialectPostgres {
			if _, err := os.Stat(filepath.Join(dir, "blobs")); err == nil {
				t.Fatal("with PostgreSQL the files were written to the data directory")
			}
		}

		// Two ended crawl jobs of the acquisition API: one whose results
		// expired an hour ago, one whose results are still kept.
		jobs := map[string]time.Time{"00000000-0000-0000-0000-00000000e001": now.Add(-time.Hour),
			"00000000-0000-0000-0000-00000000e002": now.Add(time.Hour)}
		for id, expires := range jobs {
			j := &store.CrawlJob{ID: id, Owner: "user:1", URL: "http://www.gd.gov.test/", Options: "{}", Limit: 5,
				Created: expires.Add(-24 * time.Hour), Expires: expires}
			if err := st.CreateCrawlJob(ctx, j); err != nil {
				t.Fatal(err)
			}
			if _, err := st.CancelCrawlJob(ctx, id); err != nil {
				t.Fatal(err)
			}
		}

		env := []string{"ZHIZHI_DATABASE_URL=" + dbURL, "ZHIZHI_DATA_DIR=" + dir}
		dry := runZhizhi(t, env, "gc", "--dry-run")
		if dry.code != 0 {
			t.Fatalf("gc --dry-run exited %d: %s%s", dry.code, dry.stdout, dry.stderr)
		}
		for _, want := range []string{"1 files in use kept", "would remove 1 unreferenced files", "1 unreferenced files younger than 1h0m0s kept"} {
			if !strings.Contains(dry.stdout, want) {
				t.Errorf("gc --dry-run said %q, want %q in it", dry.stdout, want)
			}
		}
		for _, p := range []string{used, old, young} {
			if !opens(t, st, p) {
				t.Errorf("gc --dry-run removed %s", p)
			}
		}

		res := runZhizhi(t, env, "gc")
		if res.code != 0 {
			t.Fatalf("gc exited %d: %s%s", res.code, res.stdout, res.stderr)
		}
		if !strings.Contains(res.stdout, "removed 1 expired crawl jobs") {
			t.Errorf("gc said %q, want it to remove 1 expired crawl job", res.stdout)
		}
		for id, expires := range jobs {
			_, err := st.CrawlJob(ctx, id)
			if gone := errors.Is(err, store.ErrNotFound); gone != expires.Before(now) {
				t.Errorf("crawl job expiring %v: after gc, %v", expires.Sub(now), err)
			}
		}
		if !strings.Contains(res.stdout, "removed 1 unreferenced files") {
			t.Errorf("gc said %q, want it to remove 1 file", res.stdout)
		}
		for p, want := range map[string]bool{used: true, old: false, young: true} {
			if got := opens(t, st, p); got != want {
				t.Errorf("after gc %s: present %v, want %v", p, got, want)
			}
		}
	})
}

// referTo stores an article whose raw HTML is the blob at rel.
func referTo(t *testing.T, st *store.Store, rel string) {
	t.Helper()
	ctx := context.Background()
	var siteID, targetID int64
	err := st.WithTx(ctx, func(tx *store.Tx) error {
		site := &model.Site{SiteCode: "gd_ref", SiteName: "广东省人民政府", BaseURL: "https://www.gd.gov.test",
			SiteRole: model.RoleProvinceRef, YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessFull,
			DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
		if _, _, err := tx.UpsertSite(ctx, site); err != nil {
			return err
		}
		target := &model.Target{SiteID: site.ID, TargetCode: "gd_zcwj", TargetName: "政策文件",
			EntryURL: "https://www.gd.gov.test/zwgk/zcwj/", Enabled: true, Source: model.SourceYAML}
		if _, _, err := tx.UpsertTarget(ctx, target); err != nil {
			return err
		}
		siteID, targetID = site.ID, target.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &model.Article{SiteID: siteID, TargetID: targetID, URL: "https://www.gd.gov.test/zwgk/zcwj/content/post_1.html",
		Title: "通知", Status: model.StatusReady, FetchedAt: time.Now(), RawHTMLPath: rel}
	if _, _, err := st.UpsertArticle(ctx, a); err != nil {
		t.Fatal(err)
	}
}

// opens says whether the blob at rel can still be opened.
func opens(t *testing.T, st *store.Store, rel string) bool {
	t.Helper()
	r, err := st.Blobs().Open(context.Background(), rel)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	return true
}
