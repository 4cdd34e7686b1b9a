package cli

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"zhizhi/demo"
	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
)

// defaultDemoDir is the demo's own directory when ZHIZHI_DEMO_DIR is unset.
const defaultDemoDir = "./data/demo"

// useDemoDir points this process at the demo's own directory and nothing
// else: its SQLite database and blobs there, its configuration in
// DIR/config (the bundled copy, written the first time). ZHIZHI_DATA_DIR,
// ZHIZHI_DATABASE_URL and ZHIZHI_CONFIG_DIR are the operator's and are not
// used, so a demo never writes the simulated web into them.
func useDemoDir() (string, error) {
	dir := envOr("ZHIZHI_DEMO_DIR", defaultDemoDir)
	cfg := filepath.Join(dir, "config")
	if _, err := os.Stat(cfg); os.IsNotExist(err) {
		if err := writeDemoConfig(cfg); err != nil {
			return "", exitCode(1, "demo: write the demo's configuration: "+err.Error())
		}
	} else if err != nil {
		return "", exitCode(1, "demo: "+err.Error())
	}
	settings.DataDir = dir
	settings.DatabaseURL = ""
	settings.ConfigDir = cfg
	return dir, nil
}

// demoClockFile keeps, in the demo's directory, the moment its simulated
// web's clock started: every later `demo --once` and `demo --serve` on that
// directory starts the same world, so what the database holds stays what
// the sites publish.
const demoClockFile = "sim-clock.txt"

// demoClock returns the sim clock of the demo directory dir: the present
// moment the first time (kept in dir), the kept one after.
func demoClock(dir string) (time.Time, error) {
	path := filepath.Join(dir, demoClockFile)
	if b, err := os.ReadFile(path); err == nil {
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
		if err != nil {
			return time.Time{}, exitCode(1, fmt.Sprintf("demo: %s is not a time (%v): delete it to start the simulated web's clock now", path, err))
		}
		return t, nil
	} else if !os.IsNotExist(err) {
		return time.Time{}, exitCode(1, "demo: "+err.Error())
	}
	now := time.Now().Truncate(time.Minute)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return time.Time{}, exitCode(1, "demo: "+err.Error())
	}
	if err := os.WriteFile(path, []byte(now.Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return time.Time{}, exitCode(1, "demo: "+err.Error())
	}
	return now, nil
}

// writeDemoConfig writes the bundled configuration of the simulated web to
// dir (a new directory): written beside it first and renamed into place.
func writeDemoConfig(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".demo-config-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(demo.Config, "config", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(p, "config")))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := demo.Config.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// foreignHosts lists the hosts of b's enabled sites and targets that the
// simulated web w does not serve: a demo must never send a request (or a
// DNS lookup) outside it.
// targets are those in the database (a target added in the console is
// refused as one in the files is).
func foreignHosts(b *config.Bundle, targets []model.Target, w *sim.World) []string {
	served := w.ResolveMap()
	bad := map[string]bool{}
	check := func(raw string) {
		if raw == "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			bad[raw] = true
			return
		}
		if _, ok := served[strings.ToLower(u.Hostname())]; !ok {
			bad[u.Hostname()] = true
		}
	}
	for _, s := range b.Sites {
		check(s.BaseURL)
		for _, t := range s.TargetDecls {
			check(t.EntryURL)
			check(t.SampleArticleURL)
		}
	}
	for _, t := range targets {
		check(t.EntryURL)
		check(t.SampleArticleURL)
	}
	out := make([]string, 0, len(bad))
	for h := range bad {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// refuseForeignHosts is foreignHosts as the demo's refusal (exit 2).
func refuseForeignHosts(b *config.Bundle, targets []model.Target, w *sim.World) error {
	if hs := foreignHosts(b, targets, w); len(hs) > 0 {
		return exitCode(2, fmt.Sprintf("demo: %s names host(s) the simulated web does not serve: %s — "+
			"the demo crawls only the simulated web; nothing was crawled. Put your own sites in your configuration "+
			"directory (ZHIZHI_CONFIG_DIR, see `zhizhi init`), not in the demo's; delete %s to start the demo afresh",
			settings.DataDir, strings.Join(hs, ", "), settings.DataDir))
	}
	return nil
}
