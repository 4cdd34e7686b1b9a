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

	"zhizhi/internal/npmtest"
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
// (test-only, never shipped) and returns its command. Without node and npm
// it skips, unless CI is set: there the lint must run.
func redoclyCLI(t *testing.T) string {
	t.Helper()
	prefix := npmtest.Install(t, "@redocly/cli@"+redoclyVersion)
	bin := filepath.Join(prefix, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("npm install @redocly/cli@%s left no redocly command: %v", redoclyVersion, err)
	}
	return bin
}
