package configsync

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func siteCodes(b *config.Bundle) []string {
	var out []string
	for _, s := range b.Sites {
		out = append(out, s.SiteCode)
	}
	return out
}

func generation(t *testing.T, st *store.Store) int64 {
	t.Helper()
	g, err := st.ConfigGeneration(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A running process sees what `config sync` wrote: the sync counts a
// generation in the database; the process reads the directory again at its
// next check and hands the new bundle to the jobs that start afterwards,
// while a job that took the old one keeps it unchanged.
func TestLiveReloadsAfterSync(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		importGoodDepartments(t, st, dir)
		// The site the operator adds later waits outside the directory.
		later := filepath.Join(t.TempDir(), "qingcheng.yaml")
		if err := os.Rename(filepath.Join(dir, config.SitesDir, "qingcheng.yaml"), later); err != nil {
			t.Fatal(err)
		}
		if g := generation(t, st); g != 0 {
			t.Fatalf("a database never synced is at generation %d, want 0", g)
		}
		if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
			t.Fatal(err)
		}
		g := generation(t, st)
		if g != 1 {
			t.Fatalf("after one sync the generation is %d, want 1", g)
		}
		var applied [][]string
		live := NewLive(loadClean(t, dir), g, LiveOptions{Dir: dir, Store: st, Log: slog.New(slog.DiscardHandler),
			Apply: func(_ context.Context, b *config.Bundle) error {
				applied = append(applied, siteCodes(b))
				return nil
			}})
		held := live.Current(ctx) // a job under way
		if len(applied) != 0 {
			t.Errorf("nothing was synced, yet the configuration was applied again: %v", applied)
		}

		if err := os.Rename(later, filepath.Join(dir, config.SitesDir, "qingcheng.yaml")); err != nil {
			t.Fatal(err)
		}
		if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
			t.Fatal(err)
		}
		if g := generation(t, st); g != 2 {
			t.Fatalf("after the second sync the generation is %d, want 2", g)
		}
		now := live.Current(ctx) // a job starting now
		if got := strings.Join(siteCodes(now), " "); got != "gd_ref gdqy qingcheng" {
			t.Errorf("a job starting after the sync sees sites %q, want gd_ref gdqy qingcheng", got)
		}
		if got := strings.Join(siteCodes(held), " "); got != "gd_ref gdqy" {
			t.Errorf("the job under way now sees sites %q, want the ones it started with (gd_ref gdqy)", got)
		}
		if len(applied) != 1 || strings.Join(applied[0], " ") != "gd_ref gdqy qingcheng" {
			t.Errorf("site policies applied with %v, want once with the new sites", applied)
		}
		if live.Generation() != 2 || live.Failure() != "" {
			t.Errorf("generation %d, failure %q; want 2 and none", live.Generation(), live.Failure())
		}

		// A sync that lint refuses writes nothing, the generation included.
		bad := copyDir(t, "lint_good")
		breakAccess(t, filepath.Join(bad, config.SitesDir, "gd_ref.yaml"))
		b, _ := config.Load(bad)
		if _, err := Sync(ctx, st, b); !errors.Is(err, ErrConfigInvalid) {
			t.Fatalf("sync of a broken directory: %v, want it refused", err)
		}
		if g := generation(t, st); g != 2 {
			t.Errorf("a refused sync moved the generation to %d", g)
		}
	})
}

// breakAccess gives a site file an access value lint rejects, on the
// line the key is on; it returns that line's number.
func breakAccess(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "access: ") {
			lines[i] = "access: everything"
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			return i + 1
		}
	}
	t.Fatalf("%s has no access line", path)
	return 0
}

// A directory that no longer loads (a file broken after the sync, here on
// this machine while another synced good files) leaves the last good
// bundle in use; one warning names the file and line; the database's site
// policies are still applied; SIGHUP after the fix reads it again.
func TestLiveKeepsLastGoodConfiguration(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := copyDir(t, "lint_good")
		importGoodDepartments(t, st, dir)
		if _, err := Sync(ctx, st, loadClean(t, dir)); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		var applied [][]string
		good := loadClean(t, dir)
		live := NewLive(good, generation(t, st), LiveOptions{Dir: dir, Store: st,
			Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Apply: func(_ context.Context, b *config.Bundle) error {
				applied = append(applied, siteCodes(b))
				return nil
			}})

		path := filepath.Join(dir, config.SitesDir, "gd_ref.yaml")
		line := breakAccess(t, path)
		other := copyDir(t, "lint_good") // the good files, synced elsewhere
		if _, err := Sync(ctx, st, loadClean(t, other)); err != nil {
			t.Fatal(err)
		}
		if err := live.Check(ctx); !errors.Is(err, ErrReloadFailed) {
			t.Fatalf("check after a sync with a broken local file: %v, want ErrReloadFailed", err)
		}
		for range 3 { // jobs starting afterwards, and the next minutes' checks
			if b := live.Current(ctx); b != good {
				t.Fatalf("a job got a bundle with sites %v, want the last good one", siteCodes(b))
			}
		}
		where := path + ":" + strconv.Itoa(line) + ":"
		if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
			t.Errorf("%d warnings logged, want 1:\n%s", n, logs.String())
		}
		if !strings.Contains(logs.String(), where) {
			t.Errorf("the warning does not name %s:\n%s", where, logs.String())
		}
		if !strings.Contains(live.Failure(), where) {
			t.Errorf("Failure() = %q, want it to name %s", live.Failure(), where)
		}
		if len(applied) != 1 || strings.Join(applied[0], " ") != "gd_ref gdqy qingcheng" {
			t.Errorf("site policies applied with %v, want once, with the last good bundle", applied)
		}

		// Fixed, and SIGHUP: read again at once, no sync needed.
		if err := os.WriteFile(path, mustRead(t, filepath.Join(other, config.SitesDir, "gd_ref.yaml")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := live.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if live.Bundle() == good || live.Failure() != "" {
			t.Errorf("after the fix and a reload: same bundle %v, failure %q", live.Bundle() == good, live.Failure())
		}

		// The directory gone altogether (an unmounted volume) is not taken
		// for the wish to crawl nothing.
		empty := t.TempDir()
		gone := NewLive(good, generation(t, st), LiveOptions{Dir: empty, Store: st, Log: slog.New(slog.DiscardHandler)})
		if err := gone.Reload(ctx); !errors.Is(err, ErrReloadFailed) || gone.Bundle() != good {
			t.Errorf("reload of an empty directory: %v; bundle kept: %v", err, gone.Bundle() == good)
		}
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
