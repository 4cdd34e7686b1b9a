package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// redoclyVersion is the Redocly CLI the description is linted with: an
// independent reader of OpenAPI, besides kin-openapi.
const redoclyVersion = "2.77.0"

// allowedLintWarnings are the warnings of Redocly's recommended rules the
// description keeps on purpose, each with why. Any other warning, and any
// error, fails the test.
var allowedLintWarnings = map[string]string{
	// The project has not chosen a licence: naming one in info would
	// promise terms nobody set. The warning goes when a licence is chosen
	// and written into info.license.
	"info-license": "zhizhi has no licence yet",
}

// TestOpenAPILintsCleanWithRedocly: openapi.yaml passes the Redocly CLI's
// recommended rules, which catch what generated clients mis-type (a
// nullable field without a type beside its $ref, siblings of a $ref that
// readers drop).
func TestOpenAPILintsCleanWithRedocly(t *testing.T) {
	bin := redoclyCLI(t)
	spec, err := filepath.Abs("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "lint", "--extends=recommended", "--format=json", spec)
	cmd.Dir = t.TempDir() // no redocly.yaml of anyone's changes the rules
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		t.Fatalf("run redocly: %v", runErr)
	}
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Version  string `json:"version"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
				Start   struct {
					Line int `json:"line"`
				} `json:"start"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("redocly lint (%v) did not report in JSON: %v\nstdout: %s\nstderr: %s", runErr, err, stdout.String(), stderr.String())
	}
	if report.Version != redoclyVersion {
		t.Fatalf("linted with Redocly CLI %s, want %s", report.Version, redoclyVersion)
	}
	for _, p := range report.Problems {
		where := "openapi.yaml"
		if len(p.Location) > 0 {
			where = fmt.Sprintf("%s:%d (%s)", where, p.Location[0].Start.Line, p.Location[0].Pointer)
		}
		if p.Severity == "warn" && allowedLintWarnings[p.RuleID] != "" {
			continue
		}
		t.Errorf("%s: %s %s: %s", where, p.Severity, p.RuleID, p.Message)
	}
	if runErr != nil && report.Totals.Errors == 0 {
		t.Errorf("redocly lint exited %v with no error reported\nstderr: %s", runErr, stderr.String())
	}
}

// redoclyCLI installs the Redocly CLI once into the user's cache directory
// (test-only, never shipped) and returns its command. Without npm it skips,
// unless CI is set: there the lint must run.
func redoclyCLI(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("npm is not installed: the Redocly CLI lint of openapi.yaml needs it (apt-get install npm)")
		}
		t.Fatal("CI: npm is not installed, and the Redocly CLI lint of openapi.yaml needs it")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory for the Redocly CLI: %v", err)
	}
	dir := filepath.Join(cache, "zhizhi", "redocly-cli-"+redoclyVersion)
	bin := filepath.Join(dir, "node_modules", ".bin", "redocly")
	if installedRedocly(dir) {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside and renamed into place: a run cut short, or another
	// test process installing at the same time, never leaves a half-made
	// directory where the next run looks.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "redocly-cli-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp, "@redocly/cli@"+redoclyVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install @redocly/cli@%s: %v\n%s", redoclyVersion, err, out)
	}
	if !installedRedocly(tmp) {
		t.Fatalf("npm install @redocly/cli@%s left no redocly %s in %s", redoclyVersion, redoclyVersion, tmp)
	}
	if err := os.Rename(tmp, dir); err != nil && !installedRedocly(dir) {
		t.Fatalf("keep the Redocly CLI in %s: %v", dir, err)
	}
	return bin
}

// installedRedocly reports whether dir holds the Redocly CLI of
// redoclyVersion, command included.
func installedRedocly(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "redocly")); err != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "@redocly", "cli", "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(data, &pkg) == nil && pkg.Version == redoclyVersion
}
