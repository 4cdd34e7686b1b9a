package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// exitTable reads the exit-code table of docs/operations.md: for each
// command named in the first column (`audit verify`), the codes whose cell
// says something (not "—").
func exitTable(t *testing.T) map[string]map[int]bool {
	t.Helper()
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Exit codes\n")
	if !ok {
		t.Fatal("docs/operations.md has no \"## Exit codes\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	name := regexp.MustCompile("`([a-z][a-z -]*)`")
	table := map[string]map[int]bool{}
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "command") || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		codes := map[int]bool{}
		for i, code := range []int{0, 1, 2} {
			if c := strings.TrimSpace(cells[2+i]); c != "" && c != "—" {
				codes[code] = true
			}
		}
		if other := cells[5]; strings.Contains(other, "130") {
			codes[130] = true
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			table[strings.TrimSpace(m[1])] = codes
		}
	}
	return table
}

// TestExitCodeTableNamesEveryCommand: every command the binary has is a
// row of the table in docs/operations.md, so the table cannot fall behind.
func TestExitCodeTableNamesEveryCommand(t *testing.T) {
	table := exitTable(t)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			path := strings.TrimPrefix(sub.CommandPath(), "zhizhi ")
			if path == "completion" || path == "help" {
				continue // cobra's own
			}
			if len(sub.Commands()) > 0 {
				walk(sub)
				continue
			}
			if _, ok := table[path]; !ok {
				t.Errorf("`zhizhi %s` has no row in the exit-code table of docs/operations.md", path)
			}
		}
	}
	walk(newRootCmd())
}

// TestExitCodes runs the documented cases through the real binary and
// checks each exit code, and that the table documents that code for the
// command: no database where one is named (2), an unreachable server (2),
// an empty migrated database (0), usage errors (2), and audit verify's
// three answers — all good (0), a changed record (1), could not check (2).
func TestExitCodes(t *testing.T) {
	waitBound(t)
	table := exitTable(t)
	dir := t.TempDir()
	typo := []string{"ZHIZHI_DATA_DIR=" + filepath.Join(dir, "typo")}
	unreachable := []string{"ZHIZHI_DATA_DIR=" + dir, "ZHIZHI_DATABASE_URL=postgres://zhizhi:secret@127.0.0.1:1/zhizhi?sslmode=disable"}
	dataDir := filepath.Join(dir, "data")
	dsn := "sqlite://" + filepath.Join(dataDir, "zhizhi.db")
	ok := []string{"ZHIZHI_DATA_DIR=" + dataDir, "ZHIZHI_DATABASE_URL=" + dsn}

	check := func(env []string, want int, args ...string) runResult {
		t.Helper()
		r := runZhizhi(t, env, args...)
		if r.code != want {
			t.Errorf("zhizhi %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
		}
		cmd := args[0]
		if len(args) > 1 && table[args[0]+" "+args[1]] != nil {
			cmd += " " + args[1]
		}
		if !table[cmd][want] {
			t.Errorf("zhizhi %s exits %d, which the exit-code table does not document for `%s`", strings.Join(args, " "), want, cmd)
		}
		return r
	}

	reads := [][]string{{"health"}, {"export"}, {"target", "list"}, {"site", "list"}, {"host", "list"},
		{"user", "list"}, {"apikey", "list"}, {"audit", "verify"}, {"audit", "seal"}, {"audit", "key"}, {"gc"}}
	for _, args := range reads {
		check(typo, 2, args...)
	}
	check(typo, 2, "crawl", "--all")
	for _, args := range [][]string{{"health"}, {"export"}, {"audit", "verify"}, {"migrate"}} {
		if r := check(unreachable, 2, args...); strings.Contains(r.stderr, "secret") {
			t.Errorf("zhizhi %s shows the database password: %q", strings.Join(args, " "), r.stderr)
		}
	}

	check(ok, 0, "migrate")
	for _, args := range reads {
		if args[0] == "audit" && args[1] == "seal" {
			continue // below, with a day to seal
		}
		check(ok, 0, args...)
	}
	check(ok, 1, "target", "enable", "no_such_target")
	check(ok, 1, "host", "clear", "www.nowhere.test")
	check(typo, 2, "apikey", "budget", "1")
	check(ok, 2, "apikey", "budget", "1") // no such key
	check(ok, 2, "apikey", "budget", "one")
	check(ok, 2, "health", "--jsn")
	check(ok, 2, "health", "now")
	check(ok, 0, "version")
	check(ok, 1, "robots", "check", "http://www.gov.test/")
	check(ok, 0, "config", "lint", "--dir", bundledConfig)

	// audit verify: 0 on an intact ledger, 1 on a changed record, 2 when
	// it could not check.
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	status := 200
	if err := st.InsertCrawlLog(ctx, &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list", HTTPStatus: &status,
		Bytes: 1234, Success: true, OccurredAt: time.Now().Add(-72 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	check(ok, 0, "audit", "seal")
	exp := filepath.Join(dir, "export")
	day := time.Now().Add(-72 * time.Hour).In(time.FixedZone("UTC+8", 8*3600)).Format("2006-01-02")
	check(ok, 0, "audit", "export", "--day", day, "--out", exp)
	key := strings.TrimSpace(check(ok, 0, "audit", "key").stdout)
	check(ok, 0, "audit", "verify", "--key", key)
	check(ok, 0, "audit", "verify", "--dir", exp, "--key", key)
	check(ok, 2, "audit", "verify", "--dir", filepath.Join(dir, "no-such-export"), "--key", key)
	check(ok, 2, "audit", "verify", "--key", "not-a-key")
	if r := check(unreachable, 2, "audit", "verify", "--key", key); !strings.Contains(r.stderr, "PostgreSQL") {
		t.Errorf("audit verify on an unreachable database does not say what it could not reach: %q", r.stderr)
	}
	days, _ := filepath.Glob(filepath.Join(exp, "*", "crawler.jsonl"))
	if len(days) == 0 {
		t.Fatalf("the export holds no crawler.jsonl")
	}
	b, err := os.ReadFile(days[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(days[0], bytes.Replace(b, []byte(`\"bytes\":1234`), []byte(`\"bytes\":12`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	check(ok, 1, "audit", "verify", "--dir", exp, "--key", key)
}
