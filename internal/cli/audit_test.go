package cli

import (
	"bytes"
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

// TestAuditCommands: seal the days that are over, print the key, export a
// day, verify the export with the key and the database, and name a record
// changed in the export — on SQLite and PostgreSQL — with usage errors
// exiting 2.
func TestAuditCommands(t *testing.T) {
	eachDialect(t, func(t *testing.T, dir, dsn string) {
		ctx := context.Background()
		st, err := store.Open(ctx, dsn, dir)
		if err != nil {
			t.Fatal(err)
		}
		// Three days ago in UTC+8 is over, whatever the hour.
		logged := time.Now().Add(-72 * time.Hour)
		day := logged.In(time.FixedZone("UTC+8", 8*3600)).Format("2006-01-02")
		status := 200
		if err := st.InsertCrawlLog(ctx, &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list", HTTPStatus: &status,
			Bytes: 1234, Success: true, OccurredAt: logged}); err != nil {
			t.Fatal(err)
		}
		st.Close()

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

		out, code, msg := run("audit", "seal")
		if code != 0 || !strings.Contains(out, "audit seal: sealed "+day+"\n") {
			t.Fatalf("audit seal: exit %d %s\n%s", code, msg, out)
		}
		out, code, _ = run("audit", "seal")
		if code != 0 || !strings.Contains(out, "nothing to seal") || strings.Contains(out, "sealed "+day) {
			t.Fatalf("audit seal again: exit %d\n%s", code, out)
		}
		out, code, _ = run("audit", "key")
		key := strings.TrimSpace(out)
		if code != 0 || !strings.HasPrefix(key, "zhizhi-ledger+") {
			t.Fatalf("audit key: exit %d %q", code, out)
		}
		exp := filepath.Join(dir, "export")
		out, code, msg = run("audit", "export", "--day", day, "--out", exp)
		if code != 0 || !strings.Contains(out, filepath.Join(exp, day)) {
			t.Fatalf("audit export: exit %d %s\n%s", code, msg, out)
		}
		for _, f := range []string{"head.note", "verifier.key", "crawler.jsonl", "human.jsonl"} {
			if _, err := os.Stat(filepath.Join(exp, day, f)); err != nil {
				t.Errorf("export lacks %s: %v", f, err)
			}
		}
		out, code, msg = run("audit", "verify", "--dir", exp, "--key", key)
		if code != 0 || !strings.HasPrefix(out, "audit verify: all good — 1 day, "+day+":") || !strings.Contains(out, "1 crawler and 0 human records") {
			t.Fatalf("audit verify --dir: exit %d %s\n%s", code, msg, out)
		}
		keyFile := filepath.Join(dir, "published.key")
		if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, code, msg = run("audit", "verify", "--key", keyFile); code != 0 || !strings.Contains(out, "all good") {
			t.Fatalf("audit verify (database, key file): exit %d %s\n%s", code, msg, out)
		}

		path := filepath.Join(exp, day, "crawler.jsonl")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, bytes.Replace(b, []byte(`\"bytes\":1234`), []byte(`\"bytes\":12`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		_, code, msg = run("audit", "verify", "--dir", exp, "--key", key)
		if want := "audit verify: " + day + ": crawler record 0 does not match the signed root — the record or its proof was changed after sealing"; code != 1 || msg != want {
			t.Fatalf("verify a changed export: exit %d %q, want 1 %q", code, msg, want)
		}

		// A crawl_log row changed after sealing: the sealed trees are
		// intact, the database verify still names the day and record.
		st, err = store.Open(ctx, dsn, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB().ExecContext(ctx, `UPDATE crawl_log SET bytes = bytes + 1`); err != nil {
			t.Fatal(err)
		}
		st.Close()
		_, code, msg = run("audit", "verify", "--key", key)
		if want := "audit verify: " + day + ": crawler record 0 differs from crawl_log row"; code != 1 || !strings.HasPrefix(msg, want) ||
			!strings.Contains(msg, "the row was changed after sealing") {
			t.Fatalf("verify after changing a crawl_log row: exit %d %q, want 1 %q…", code, msg, want)
		}
		// What cannot be checked is not tampering: exit 2, said so.
		_, code, msg = run("audit", "verify", "--dir", filepath.Join(dir, "no-such-export"), "--key", key)
		if code != 2 || !strings.HasPrefix(msg, "audit verify: could not check: ") {
			t.Fatalf("verify a missing export: exit %d %q, want 2 \"audit verify: could not check: …\"", code, msg)
		}

		for _, bad := range [][]string{
			{"audit", "export"},
			{"audit", "export", "--day", "2026-13-01"},
			{"audit", "export", "--day", day, "--from", day, "--to", day},
			{"audit", "export", "--from", day},
			{"audit", "verify", "--key", "not-a-key"},
		} {
			if _, code, msg := run(bad...); code != 2 || msg == "" {
				t.Errorf("%v: exit %d %q, want a usage error (2)", bad, code, msg)
			}
		}
	})
}
