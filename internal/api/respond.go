package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// apiError is a failure the caller can act on: its status, a stable code
// and a sentence saying what to change.
type apiError struct {
	status int
	code   string
	detail string
}

func (e *apiError) Error() string { return e.code + ": " + e.detail }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, detail: fmt.Sprintf(format, args...)}
}

// invalid is a 400 for a request that breaks a rule of openapi.yaml.
func invalid(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "invalid_request", format, args...)
}

// notFoundf is a 404 for an id that names nothing.
func notFoundf(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "not_found", format, args...)
}

type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

func isUnauthenticated(err error) bool { return errors.Is(err, auth.ErrUnauthenticated) }

// fail answers with the error's status. Anything not meant for the caller
// (a database failure, a bug) is logged here and answered with a bare 500,
// so no internals leak.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		ae      *apiError
		tooBig  *http.MaxBytesError
		payload errorBody
		status  int
	)
	switch {
	case errors.As(err, &ae):
		status, payload = ae.status, errorBody{ae.code, ae.detail}
	case errors.As(err, &tooBig):
		status, payload = http.StatusRequestEntityTooLarge, errorBody{"body_too_large",
			fmt.Sprintf("the request body is over %d bytes; send less", tooBig.Limit)}
	case errors.Is(err, store.ErrNotFound):
		status, payload = http.StatusNotFound, errorBody{"not_found", "no such object"}
	case isUnauthenticated(err):
		status, payload = http.StatusUnauthorized, errorBody{"unauthenticated", "sign in or send a valid API key"}
	default:
		h.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		status, payload = http.StatusInternalServerError, errorBody{"internal",
			"the server could not answer; the cause is in its log"}
	}
	h.writeJSON(w, r, status, payload)
}

// writeJSON answers with v as JSON.
func (h *handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		h.log.Error("api encode response", "method", r.Method, "path", r.URL.Path, "err", err)
		status = http.StatusInternalServerError
		body = []byte(`{"error":"internal","detail":"the server could not answer; the cause is in its log"}`)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func (h *handler) ok(w http.ResponseWriter, r *http.Request, v any) {
	h.writeJSON(w, r, http.StatusOK, v)
}

// decodeJSON reads a JSON body of at most maxJSONBody bytes into v,
// refusing unknown fields and trailing data. An empty body leaves v as it
// is, for endpoints whose every field is optional. A body must say it is
// JSON: a form a hostile page posts across sites cannot.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return invalid("request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as Content-Type: application/json")
	}
	if place, bad := badBodyText(body); bad {
		return invalid("%s: holds a control character; send plain text (tab and line breaks only in summary and reason)", printable(place))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("request body: %v", err)
	}
	if dec.More() {
		return invalid("request body: one JSON object expected, more found")
	}
	return nil
}

// byPath loads the object named by the id in the request's path, which
// takes no query parameters; notFound (with the id for its %d) is the 404's
// detail.
func byPath[T any](r *http.Request, load func(ctx context.Context, id int64) (*T, error), notFound string) (*T, error) {
	id, err := pathID(r)
	if err == nil {
		err = newQuery(r).check()
	}
	if err != nil {
		return nil, err
	}
	obj, err := load(r.Context(), id)
	if err != nil {
		return nil, notFoundOr(err, notFound, id)
	}
	return obj, nil
}

// getOne answers a GET of one object by the id in its path: 404 naming
// what when there is no such object, else its view.
func getOne[T, V any](h *handler, w http.ResponseWriter, r *http.Request, what string,
	load func(ctx context.Context, id int64) (*T, error), view func(*T) V) {
	obj, err := byPath(r, load, "no "+what+" with id %d")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, view(obj))
}
