package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"zhizhi/internal/auth"
)

// ServeStdio speaks MCP over in and out (newline-delimited JSON-RPC, as
// `zhizhi mcp` does on standard input and output) until the client closes
// in or ctx ends. The server acts for p, whom the CLI chooses: the local
// operator, or the holder of a key it was given; a nil p may use nothing.
// A client that closes in is the normal end and returns nil.
func ServeStdio(ctx context.Context, b Backend, p *auth.Principal, opt Options, in io.Reader, out io.Writer) error {
	t := &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := NewServer(b, p, opt).Run(ctx, t)
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("mcp stdio: %w", err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Codes of the HTTP handler's refusals, the acquisition API's own.
const (
	CodeUnauthorized      = "UNAUTHORIZED"
	CodeInsufficientScope = "INSUFFICIENT_SCOPE"
	CodeUnavailable       = "UNAVAILABLE"
)

// serverKey carries the request's server from HTTPHandler to the SDK's
// handler, which asks for it more than once per request.
type serverKey struct{}

// HTTPHandler is MCP's streamable HTTP transport as serve mounts it at
// /mcp. Each request must carry an API key as "Authorization: Bearer
// zk_…": without one, or with an unknown, expired or revoked one, the
// answer is 401 with a JSON error and a WWW-Authenticate header; a key
// that holds neither the read nor the acquire scope gets 403. A console
// session cookie is not enough: tools are for agents with keys, and a
// cookie must not let a web page drive them.
//
// The handler is stateless (the SDK's Stateless mode: no Mcp-Session-Id,
// a fresh server for each request, acting for that request's key, and
// plain JSON answers rather than event streams), so any serve process
// behind a load balancer answers any request. Server-to-client requests
// (sampling, elicitation) and the GET event stream are therefore not
// offered; no tool needs them. The SDK's DNS-rebinding check (refusing a
// loopback listener's requests whose Host is not loopback) is off: serve
// runs behind a reverse proxy on the same machine, whose requests carry
// the public Host, and a rebinding page could not send the key anyway.
func HTTPHandler(b Backend, users auth.Authenticator, opt Options) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		s, _ := r.Context().Value(serverKey{}).(*sdk.Server)
		return s
	}, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     opt.Logger,
		DisableLocalhostProtection: true,
	})
	log := opt.logger()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zhizhi"`)
			writeError(w, http.StatusUnauthorized, CodeUnauthorized,
				`no API key: send one as "Authorization: Bearer zk_…" (an admin makes one with zhizhi apikey create --user NAME --name LABEL --scope read)`)
			return
		}
		p, err := users.Authenticate(r)
		switch {
		case errors.Is(err, auth.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="zhizhi", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, CodeUnauthorized,
				`this API key is unknown, expired or revoked, or the Authorization header is not "Bearer zk_…": ask an admin for a valid key`)
			return
		case err != nil:
			log.Error("mcp authenticate", "err", err)
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "zhizhi cannot check API keys right now; try again shortly")
			return
		case !p.Allows(auth.ScopeRead) && !p.Allows(auth.ScopeAcquire):
			writeError(w, http.StatusForbidden, CodeInsufficientScope,
				"this API key allows no MCP tool: the corpus tools need the read scope, fetch needs acquire (and an operator or admin user)")
			return
		}
		s := NewServer(b, p, opt)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, s)))
	})
}

// errorBody is a refusal's JSON, in the acquisition API's shape.
type errorBody struct {
	Success bool   `json:"success"`
	Code    string `json:"code"`
	Error   string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Code: code, Error: msg})
}
