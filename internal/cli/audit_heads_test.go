package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/portal"
	"zhizhi/internal/store"
)

// TestAuditVerifyKnownHeads: an outsider keeps the heads the portal
// publishes at /ledger/heads. The operator then deletes the sealed days
// from the first one on, edits a request and seals again: the new chain
// verifies with the published key on its own, but not against the kept
// heads — exit 1 naming the rewritten day. Kept heads that cannot be read,
// or a day an export does not hold, cannot be checked: exit 2.
func TestAuditVerifyKnownHeads(t *testing.T) {
	eachDialect(t, func(t *testing.T, dir, dsn string) {
		ctx := context.Background()
		st, err := store.Open(ctx, dsn, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		// Three days ago in UTC+8 is over, whatever the hour.
		logged := time.Now().Add(-72 * time.Hour)
		day := logged.In(time.FixedZone("UTC+8", 8*3600)).Format("2006-01-02")
		status := 200
		if err := st.InsertCrawlLog(ctx, &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list", HTTPStatus: &status,
			Bytes: 1234, Success: true, OccurredAt: logged}); err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) (string, int, string) {
			out, err := runInProcess(append([]string{"--data-dir", dir, "--database-url", dsn}, args...)...)
			var ee *exitError
			switch {
			case err == nil:
				return out, 0, ""
			case errors.As(err, &ee):
				return out, ee.code, ee.msg
			}
			t.Fatalf("%v: %v", args, err)
			return "", 0, ""
		}
		if _, code, msg := run("audit", "seal"); code != 0 {
			t.Fatalf("audit seal: exit %d %s", code, msg)
		}
		key, _, _ := run("audit", "key")
		key = strings.TrimSpace(key)

		// The published heads, as an outsider fetches and keeps them.
		h, err := portal.New(portal.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/ledger/heads")
		if err != nil {
			t.Fatal(err)
		}
		feed, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(resp.Header.Values("Set-Cookie")) != 0 ||
			!strings.HasPrefix(resp.Header.Get("Cache-Control"), "public") || !strings.Contains(string(feed), `"day": "`+day+`"`) {
			t.Fatalf("GET /ledger/heads: %d %v\n%s", resp.StatusCode, resp.Header, feed)
		}
		kept := filepath.Join(t.TempDir(), "heads.json")
		if err := os.WriteFile(kept, feed, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{kept, srv.URL + "/ledger/heads"} {
			out, code, msg := run("audit", "verify", "--key", key, "--known-heads", src)
			if code != 0 || !strings.Contains(out, "all good") || !strings.Contains(out, "the chain extends all") {
				t.Fatalf("verify --known-heads %s: exit %d %s\n%s", src, code, msg, out)
			}
		}

		// The rewrite: every sealed day deleted, a request edited, sealed again.
		for _, table := range []string{"ledger_hash", "ledger_record", "ledger_day"} {
			if _, err := st.DB().ExecContext(ctx, `DELETE FROM `+table); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.DB().ExecContext(ctx, `UPDATE crawl_log SET bytes = 12`); err != nil {
			t.Fatal(err)
		}
		if _, code, msg := run("audit", "seal"); code != 0 {
			t.Fatalf("audit seal again: exit %d %s", code, msg)
		}
		if out, code, msg := run("audit", "verify", "--key", key); code != 0 {
			t.Fatalf("the rewritten chain on its own: exit %d %s\n%s", code, msg, out)
		}
		_, code, msg := run("audit", "verify", "--key", key, "--known-heads", kept)
		if want := "audit verify: " + day + ": the chain's head is "; code != 1 || !strings.HasPrefix(msg, want) ||
			!strings.Contains(msg, "the day was rewritten after it was published") {
			t.Fatalf("verify the rewrite against the kept heads: exit %d %q, want 1 %q…", code, msg, want)
		}

		// What cannot be checked: exit 2, said so.
		exp := t.TempDir()
		if _, code, msg := run("audit", "export", "--day", day, "--out", exp); code != 0 {
			t.Fatalf("export: %d %s", code, msg)
		}
		later := `[{"day":"` + time.Now().Add(24*time.Hour).Format("2006-01-02") + `","head":"` + strings.Repeat("ab", 32) + `"}]`
		laterFile := filepath.Join(t.TempDir(), "later.json")
		if err := os.WriteFile(laterFile, []byte(later), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"audit", "verify", "--key", key, "--known-heads", filepath.Join(dir, "no-such-file.json")},
			{"audit", "verify", "--key", key, "--known-heads", srv.URL + "/no-such-feed"},
			{"audit", "verify", "--dir", exp, "--key", key, "--known-heads", laterFile},
		} {
			if _, code, msg := run(args...); code != 2 || !strings.HasPrefix(msg, "audit verify: could not check: ") {
				t.Errorf("%v: exit %d %q, want 2 \"audit verify: could not check: …\"", args[2:], code, msg)
			}
		}
		// The live store holds its chain from the start: a known day past
		// its end means days were cut off.
		if _, code, msg := run("audit", "verify", "--key", key, "--known-heads", laterFile); code != 1 || !strings.Contains(msg, "sealed days were cut off") {
			t.Errorf("verify a chain cut short of a known day: exit %d %q, want 1 …cut off", code, msg)
		}
	})
}
