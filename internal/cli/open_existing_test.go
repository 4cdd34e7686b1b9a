package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// readCommands are the commands that read or change what the database
// holds: none of them may create a database to answer from.
var readCommands = [][]string{
	{"health"},
	{"export"},
	{"target", "list"},
	{"site", "list"},
	{"host", "list"},
	{"audit", "verify"},
	{"user", "list"},
	{"apikey", "list"},
	{"crawl", "--all"},
	{"gc"},
}

// TestReadCommandsNeverCreateADatabase runs every reading command through
// the real binary against a data directory that does not exist, an SQLite
// URL in a missing directory, an empty SQLite file and (with
// ZHIZHI_TEST_PG_URL) a PostgreSQL schema without zhizhi's tables. Each
// exits 2 with "no zhizhi database at …" and creates nothing: no directory,
// no file, no table. After `zhizhi migrate` the same health reads the new
// database and says all is well.
func TestReadCommandsNeverCreateADatabase(t *testing.T) {
	waitBound(t)
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo")
	missing := filepath.Join(dir, "missing", "dir", "z.db")
	emptyFile := filepath.Join(dir, "empty", "zhizhi.db")
	if err := os.MkdirAll(filepath.Dir(emptyFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(emptyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  []string
	}{
		{"data dir typo", []string{"ZHIZHI_DATA_DIR=" + typo}},
		{"sqlite url in a missing dir", []string{"ZHIZHI_DATA_DIR=" + typo, "ZHIZHI_DATABASE_URL=sqlite://" + missing}},
		{"empty sqlite file", []string{"ZHIZHI_DATA_DIR=" + filepath.Dir(emptyFile)}},
	}
	var pgURL string
	if os.Getenv("ZHIZHI_TEST_PG_URL") != "" {
		pgURL = storetest.PostgresURL(t)
		cases = append(cases, struct {
			name string
			env  []string
		}{"empty postgres schema", []string{"ZHIZHI_DATA_DIR=" + typo, "ZHIZHI_DATABASE_URL=" + pgURL}})
	}
	for _, c := range cases {
		for _, args := range readCommands {
			r := runZhizhi(t, c.env, args...)
			if r.code != 2 || !strings.Contains(r.stderr, "no zhizhi database at ") || !strings.Contains(r.stderr, "zhizhi migrate") {
				t.Errorf("%s: zhizhi %s: exit %d, stderr %q; want 2 and \"no zhizhi database at …; run `zhizhi migrate` …\"\n%s",
					c.name, strings.Join(args, " "), r.code, r.stderr, r.stdout)
			}
			if strings.Contains(r.stdout, "一切正常") {
				t.Errorf("%s: zhizhi %s says all is well about a database it did not find:\n%s", c.name, strings.Join(args, " "), r.stdout)
			}
			if strings.Contains(r.stderr, "password") || (pgURL != "" && strings.Contains(r.stderr, "search_path")) {
				t.Errorf("%s: message shows more of the URL than needed: %q", c.name, r.stderr)
			}
		}
	}
	for _, p := range []string{typo, filepath.Join(dir, "missing")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after only reading commands ran (stat: %v)", p, err)
		}
	}
	if fi, err := os.Stat(emptyFile); err != nil || fi.Size() != 0 {
		t.Errorf("the empty SQLite file was written to: %v, %v", fi, err)
	}
	if pgURL != "" {
		st, err := store.Open(context.Background(), pgURL, "")
		if err != nil {
			t.Fatal(err)
		}
		// Open migrated just now; OpenExisting must not have: had it, the
		// schema would have existed before and Open applied nothing.
		applied, err := st.Migrate(context.Background())
		st.Close()
		if err != nil || applied != 0 {
			t.Fatalf("migrate after open: %d, %v", applied, err)
		}
	}

	fresh := filepath.Join(dir, "fresh")
	env := []string{"ZHIZHI_DATA_DIR=" + fresh}
	if r := runZhizhi(t, env, "migrate"); r.code != 0 {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	if r := runZhizhi(t, env, "health"); r.code != 0 || !strings.Contains(r.stdout, "一切正常") {
		t.Errorf("health after migrate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
