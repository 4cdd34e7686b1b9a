// Package mcptest runs the official MCP client, the TypeScript SDK from
// npm (test-only, never shipped), against zhizhi: a test writes a Plan of
// steps (list tools, call a tool, read a resource) and gets back what the
// client received, as JSON.
package mcptest

import (
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"zhizhi/internal/npmtest"
)

// Version is the version of @modelcontextprotocol/sdk the tests run.
const Version = "1.32.2"

//go:embed client.mjs
var clientScript []byte

// SDK installs the SDK into the user's cache once and returns its
// directory (…/node_modules/@modelcontextprotocol/sdk). Without node and
// npm the test is skipped, except under CI=true, where that is a failure.
func SDK(t testing.TB) string {
	t.Helper()
	prefix := npmtest.Install(t, "@modelcontextprotocol/sdk@"+Version)
	npmtest.Path(t, prefix, "@modelcontextprotocol/sdk", "dist", "esm", "client", "index.js")
	return npmtest.Path(t, prefix, "@modelcontextprotocol/sdk")
}

// Plan is what the client does: connect over stdio (spawning Stdio) or
// streamable HTTP (URL, with Headers on every request), then run Steps.
type Plan struct {
	Stdio   *Stdio            `json:"stdio,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Steps   []Step            `json:"steps"`
}

// Stdio is the server process the client spawns; Env is added to the
// client's own environment.
type Stdio struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Step is one client call: Op is listTools, callTool (Name, Arguments),
// listResourceTemplates or readResource (URI).
type Step struct {
	Op        string `json:"op"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	URI       string `json:"uri,omitempty"`
}

// ListTools, Call, ListResourceTemplates and ReadResource make steps.
func ListTools() Step                 { return Step{Op: "listTools"} }
func Call(name string, args any) Step { return Step{Op: "callTool", Name: name, Arguments: args} }
func ListResourceTemplates() Step     { return Step{Op: "listResourceTemplates"} }
func ReadResource(uri string) Step    { return Step{Op: "readResource", URI: uri} }

// Outcome is what the client received.
type Outcome struct {
	// ConnectError is set when the client could not connect (and
	// initialize); Steps is then empty.
	ConnectError *Error          `json:"connectError"`
	Server       json.RawMessage `json:"server"`
	Instructions string          `json:"instructions"`
	Steps        []StepOutcome   `json:"steps"`
}

// StepOutcome is one step's result, or the error the client threw.
type StepOutcome struct {
	Op     string          `json:"op"`
	Name   string          `json:"name"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Error is an error the client threw: its message and code (an HTTP
// status or a JSON-RPC error code, when it had one).
type Error struct {
	Message string `json:"message"`
	Code    any    `json:"code"`
}

// Run runs plan with the client and returns what it received. It fails
// the test when the client script itself fails.
func Run(t testing.TB, plan Plan) *Outcome {
	t.Helper()
	return RunAll(t, plan)[0]
}

// RunAll runs plans one after another in one client process (node takes
// seconds to start on a busy machine), one connection each.
func RunAll(t testing.TB, plans ...Plan) []*Outcome {
	t.Helper()
	sdk := SDK(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "client.mjs")
	planFile := filepath.Join(dir, "plans.json")
	pj, err := json.Marshal(plans)
	if err != nil {
		t.Fatalf("plans: %v", err)
	}
	if err := os.WriteFile(script, clientScript, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planFile, pj, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout := npmtest.Node(t, npmtest.Script{Path: script, Args: []string{planFile}, Env: []string{"MCP_SDK_DIR=" + sdk}})
	var out []*Outcome
	if err := json.Unmarshal(stdout, &out); err != nil || len(out) != len(plans) {
		t.Fatalf("MCP client output (%d plans): %v\nstdout: %s", len(plans), err, stdout)
	}
	return out
}
