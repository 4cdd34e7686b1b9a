package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestTargetDisableSurvivesSync: an operator disables a YAML target from
// the command line; `config sync` keeps it off and `target list` says who
// switched it, until `target revert` gives it back to the file.
func TestTargetDisableSurvivesSync(t *testing.T) {
	waitBound(t)
	bin := buildBinary(t)
	dialects := []struct {
		name  string
		dbURL func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "" }},
		{"postgres", pgSchemaURL},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			env := cliEnv{bin: bin, dataDir: t.TempDir(), dbURL: d.dbURL(t), configDir: bundledConfig}
			env.setUp(t)
			row := func() targetRow {
				t.Helper()
				var rows []targetRow
				if err := json.Unmarshal([]byte(env.run(t, "target", "list", "--site", "lianzhou", "--json")), &rows); err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					if r.TargetCode == "lianzhou_tzgg" {
						return r
					}
				}
				t.Fatal("lianzhou_tzgg not listed")
				return targetRow{}
			}

			out := env.run(t, "target", "disable", "lianzhou_tzgg", "--reason", "栏目改版")
			if !strings.Contains(out, "config sync keeps this") {
				t.Errorf("disable printed %q, want it to say sync keeps it", out)
			}
			env.run(t, "config", "sync")
			r := row()
			if r.Crawled || r.DisabledBy != "target" || r.EnabledFrom != "override" || !strings.HasPrefix(r.EnabledBy, "cli:") {
				t.Errorf("after sync: %+v, want disabled by the target, enabled from an override by cli:<user>", r)
			}
			if table := env.run(t, "target", "list", "--site", "lianzhou"); !strings.Contains(table, "no (target) set by cli:") {
				t.Errorf("target list does not say who switched the target off:\n%s", table)
			}

			env.run(t, "target", "revert", "lianzhou_tzgg", "enabled")
			env.run(t, "config", "sync")
			if r := row(); !r.Crawled || r.EnabledFrom != "yaml" {
				t.Errorf("after revert and sync: %+v, want crawled, enabled from yaml", r)
			}

			// Nothing left to revert, and an unknown target: exit 1 with a
			// message naming what is wrong.
			for _, args := range [][]string{
				{"target", "revert", "lianzhou_tzgg", "enabled"},
				{"target", "disable", "no_such_target"},
			} {
				cmd := exec.Command(env.bin, args...)
				cmd.Env = append(os.Environ(), "ZHIZHI_DATA_DIR="+env.dataDir, "ZHIZHI_DATABASE_URL="+env.dbURL,
					"ZHIZHI_CONFIG_DIR="+env.configDir)
				msg, err := cmd.CombinedOutput()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(msg), args[2]) {
					t.Errorf("zhizhi %s: %v %q, want exit 1 naming %s", strings.Join(args, " "), err, msg, args[2])
				}
			}
		})
	}
}
