package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alexedwards/argon2id"

	"zhizhi/internal/auth"
	"zhizhi/internal/mcp"
	"zhizhi/internal/mcp/mcptest"
	"zhizhi/internal/store/storetest"
)

// keys are API keys made by the real auth service on a real SQLite store.
type keys struct {
	read, acquire, write string
}

// httpWorld is two serve processes' /mcp handlers (each its own handler
// and server, sharing only the database, as serve processes do) behind a
// proxy that sends requests to them in turn.
type httpWorld struct {
	url   string // the proxy's /mcp
	one   string // the first process's /mcp, directly
	keys  keys
	calls [2]atomic.Int64
}

func newHTTPWorld(t *testing.T) *httpWorld {
	t.Helper()
	ctx := context.Background()
	st := storetest.SQLite(t)
	users := auth.New(st, auth.Options{PasswordParams: &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}})
	if _, err := users.CreateUser(ctx, "cli:root", "alice", "correct horse battery staple", auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	w := &httpWorld{}
	for _, k := range []struct {
		dst    *string
		name   string
		scopes []string
	}{{&w.keys.read, "知识库助手", []string{"read"}}, {&w.keys.acquire, "采集助手", []string{"read", "acquire"}}, {&w.keys.write, "写入", []string{"write"}}} {
		key, _, err := users.CreateAPIKey(ctx, "cli:root", "alice", k.name, k.scopes, nil)
		if err != nil {
			t.Fatal(err)
		}
		*k.dst = key
	}
	var procs []*url.URL
	for range 2 {
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.HTTPHandler(newMemBackend(), users, mcp.Options{Version: "test"}))
		s := httptest.NewServer(mux)
		t.Cleanup(s.Close)
		u, _ := url.Parse(s.URL)
		procs = append(procs, u)
	}
	w.one = procs[0].String() + "/mcp"
	var next atomic.Int64
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Add(1) % 2
		w.calls[i].Add(1)
		r.SetURL(procs[i])
	}})
	t.Cleanup(front.Close)
	w.url = front.URL + "/mcp"
	return w
}

func (w *httpWorld) plan(key string, steps ...mcptest.Step) mcptest.Plan {
	p := mcptest.Plan{URL: w.url, Steps: steps}
	if key != "" {
		p.Headers = map[string]string{"Authorization": "Bearer " + key}
	}
	return p
}

// TestHTTP: the official TypeScript client, over streamable HTTP with a
// Bearer key, lists tools, searches, reads and cites through two serve
// processes taking requests in turn (the handler keeps no session); a
// read key is not offered fetch and is refused it as a tool error; an
// acquire key fetches a hostile page, fenced; no key, a bad key and a key
// without a usable scope are refused before MCP with 401, 401 and 403.
func TestHTTP(t *testing.T) {
	w := newHTTPWorld(t)
	site := hostileSite(t)

	outs := mcptest.RunAll(t, w.plan(w.keys.read,
		mcptest.ListTools(),
		mcptest.Call("search", map[string]any{"query": "高标准农田", "limit": 1}),
		mcptest.Call("read_work", map[string]any{"id": "w_gz2023yshj"}),
		mcptest.Call("cite", map[string]any{"id": "w_qy2024012"}),
		mcptest.Call("fetch", map[string]any{"url": site.URL + "/notice.html"}),
		mcptest.Call("search", map[string]any{"docno": "粤府办〔2024〕5号"}),
	), w.plan(w.keys.acquire,
		mcptest.ListTools(),
		mcptest.Call("fetch", map[string]any{"url": site.URL + "/notice.html", "formats": []string{"text"}}),
	), w.plan("", mcptest.ListTools()))

	t.Run("read key", func(t *testing.T) {
		out := outs[0]
		if out.ConnectError != nil {
			t.Fatalf("connect: %+v", out.ConnectError)
		}
		for _, s := range out.Steps {
			if s.Error != nil {
				t.Fatalf("%s %s: the client threw %+v", s.Op, s.Name, s.Error)
			}
		}
		if got := names(toolList(t, out.Steps[0].Result)); !slices.Equal(got, []string{"cite", "read_work", "search"}) {
			t.Errorf("a read key's tools %v, want cite, read_work, search (no fetch)", got)
		}
		_, outside, s := untrusted(t, "search", out.Steps[1].Result)
		hits := s["hits"].([]any)
		if s["release"] != "2025.06.01-1" || s["total"] != 2.0 || len(hits) != 1 || hits[0].(map[string]any)["id"] != "w_gd2024005" {
			t.Errorf("search with limit 1: %v", s)
		}
		if !strings.Contains(outside, "Release 2025.06.01-1: 2 matches, showing the first 1.") {
			t.Errorf("outside the fence: %q", outside)
		}
		if _, _, s := untrusted(t, "read_work", out.Steps[2].Result); !strings.Contains(s["text"].(string), "条例共七章") {
			t.Errorf("read_work: %v", s)
		}
		_, _, s = untrusted(t, "cite", out.Steps[3].Result)
		want := "清远市农业农村局. 清远市农业农村局关于做好2024年春耕生产工作的通知: 清农〔2024〕12号[EB/OL]. (2024-02-20)[2025-06-01]. http://www.gdqy.gov.cn/xxgk/zzjg/zfjg/snyncj/tzgg/content/post_1820001.html."
		if s["citation"] != want || s["revision"] != 2.0 {
			t.Errorf("citation %v, want %q of revision 2", s, want)
		}
		msg := toolError(t, "fetch with a read key", out.Steps[4].Result)
		if !strings.Contains(msg, `needs the "acquire" scope`) || !strings.Contains(msg, "this API key has read") || !strings.Contains(msg, "--scope read,acquire") {
			t.Errorf("refusal %q, want the scope it needs, the key's scopes and how to make one", msg)
		}
		if _, _, s := untrusted(t, "search by docno", out.Steps[5].Result); s["total"] != 1.0 {
			t.Errorf("search by docno alone: %v", s)
		}
		if w.calls[0].Load() == 0 || w.calls[1].Load() == 0 {
			t.Errorf("requests per process %d and %d: the proxy should have used both", w.calls[0].Load(), w.calls[1].Load())
		}
	})

	t.Run("acquire key", func(t *testing.T) {
		out := outs[1]
		if out.ConnectError != nil {
			t.Fatalf("connect: %+v", out.ConnectError)
		}
		if got := names(toolList(t, out.Steps[0].Result)); !slices.Equal(got, []string{"cite", "fetch", "read_work", "search"}) {
			t.Errorf("an acquire key's tools %v", got)
		}
		inside, _, s := untrusted(t, "fetch", out.Steps[1].Result)
		if s["title"] != "关于印发《农村人居环境整治提升行动方案》的通知" || !strings.Contains(inside, "＜<<END UNTRUSTED SOURCE CONTENT fence=deadbeefdeadbeef＞>>") ||
			strings.Contains(inside, "--- markdown ---") {
			t.Errorf("fetch as text: %v\n%s", s, inside)
		}
	})

	t.Run("no key", func(t *testing.T) {
		out := outs[2]
		if out.ConnectError == nil || out.ConnectError.Code != 401.0 || !strings.Contains(out.ConnectError.Message, "no API key") {
			t.Errorf("the client without a key: %+v, want a 401 that says a key is missing", out.ConnectError)
		}
	})

	for _, tt := range []struct {
		name, authz  string
		status       int
		code, header string
	}{
		{"no key", "", http.StatusUnauthorized, "UNAUTHORIZED", `Bearer realm="zhizhi"`},
		{"unknown key", "Bearer zk_nonsense", http.StatusUnauthorized, "UNAUTHORIZED", `Bearer realm="zhizhi", error="invalid_token"`},
		{"basic", "Basic YWxpY2U6cHc=", http.StatusUnauthorized, "UNAUTHORIZED", `Bearer realm="zhizhi", error="invalid_token"`},
		{"write key", "Bearer " + w.keys.write, http.StatusForbidden, "INSUFFICIENT_SCOPE", ""},
	} {
		t.Run("refused/"+tt.name, func(t *testing.T) {
			resp := initialize(t, w.one, "", tt.authz)
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Success bool   `json:"success"`
				Code    string `json:"code"`
				Error   string `json:"error"`
			}
			if resp.StatusCode != tt.status || json.Unmarshal(body, &e) != nil || e.Code != tt.code || e.Success || e.Error == "" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("status %d body %s, want %d with a JSON error %s", resp.StatusCode, body, tt.status, tt.code)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.header {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.header)
			}
		})
	}

	t.Run("behind a proxy with the public host, without sessions", func(t *testing.T) {
		resp := initialize(t, w.one, "zhizhi.example.gov.cn", "Bearer "+w.keys.read)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"serverInfo"`) || !strings.Contains(string(body), `"name":"zhizhi"`) {
			t.Fatalf("initialize with Host zhizhi.example.gov.cn: %d %s", resp.StatusCode, body)
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			t.Errorf("Mcp-Session-Id %q: the handler must keep no session, so any serve process can answer", sid)
		}
	})
}

// initialize posts an MCP initialize request to u, with Host host (when
// not "") and Authorization authz (when not "").
func initialize(t *testing.T, u, host, authz string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
