package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/mcp"
)

// TestServeStdioEnds: ServeStdio answers newline-delimited JSON-RPC, and
// returns nil when the client closes its input (the normal end of `zhizhi
// mcp`) and ctx's error when ctx ends first.
func TestServeStdioEnds(t *testing.T) {
	p := &auth.Principal{Username: "local", Role: auth.RoleViewer}
	t.Run("client closes", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- mcp.ServeStdio(t.Context(), newMemBackend(), p, mcp.Options{Version: "test"}, inR, outW)
		}()
		lines := bufio.NewScanner(outR)
		lines.Buffer(nil, 1<<20)
		send := func(msg string) {
			if _, err := io.WriteString(inW, msg+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if !lines.Scan() || !strings.Contains(lines.Text(), `"serverInfo"`) {
			t.Fatalf("initialize: %q %v", lines.Text(), lines.Err())
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"营商环境"}}}`)
		if !lines.Scan() {
			t.Fatalf("tools/call: %v", lines.Err())
		}
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				IsError           bool `json:"isError"`
				StructuredContent struct {
					Release string `json:"release"`
					Total   int    `json:"total"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(lines.Bytes(), &resp); err != nil || resp.ID != 2 || resp.Result.IsError ||
			resp.Result.StructuredContent.Release != "2025.06.01-1" || resp.Result.StructuredContent.Total != 1 {
			t.Fatalf("search over stdio: %s %v", lines.Text(), err)
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio after the client closed: %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("ServeStdio did not return after the client closed its input")
		}
	})
	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inR, inW := io.Pipe()
		defer inW.Close()
		done := make(chan error, 1)
		go func() { done <- mcp.ServeStdio(ctx, newMemBackend(), p, mcp.Options{}, inR, io.Discard) }()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("ServeStdio after cancel: %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("ServeStdio did not return after ctx ended")
		}
	})
}
