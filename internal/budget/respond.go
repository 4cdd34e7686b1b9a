package budget

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
)

// envelope is the answer shape Firecrawl's clients read: {success, data}
// on success, {success: false, error, code} on failure.
type envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data,omitempty"`
	Error   string `json:"error,omitempty"`
	Code    string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("budget encode response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"success":false,"error":"the server could not answer","code":"INTERNAL"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeFailure(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, envelope{Error: msg, Code: code})
}

func internalError(w http.ResponseWriter, r *http.Request, err error) {
	slog.Error("budget request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeFailure(w, http.StatusInternalServerError, "INTERNAL", "the server could not answer; the cause is in its log")
}

// WriteError answers a refused reservation: 402 Payment Required with
// {success: false, code: "BUDGET_EXCEEDED", error} naming the budget, and
// reports true. Any other error is left to the caller (false, nothing
// written).
func WriteError(w http.ResponseWriter, err error) bool {
	var over *OverError
	if !errors.As(err, &over) {
		return false
	}
	writeFailure(w, http.StatusPaymentRequired, "BUDGET_EXCEEDED", over.Error())
	return true
}
