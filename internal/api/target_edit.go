package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/target"
)

// What the target-editing endpoints share: finding the target of the path,
// reading a patch, and answering internal/target's refusals.

// fieldProblem is one refused field of a request body.
type fieldProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// inputErrorBody is openapi.yaml's InputError: {error, detail} with each
// refused field.
type inputErrorBody struct {
	Error  string         `json:"error"`
	Detail string         `json:"detail"`
	Fields []fieldProblem `json:"fields,omitempty"`
}

type dryRunRefusal struct {
	Error  string      `json:"error"`
	Detail string      `json:"detail"`
	DryRun *dryRunView `json:"dry_run"`
}

// targetOfPath finds the target the path's {id} names. The service works
// by code; the API by id, so an id is looked up here (after the guard:
// nobody learns which ids exist without the role).
func (h *handler) targetOfPath(r *http.Request) (*model.Target, error) {
	return byPath(r, h.st.TargetByID, "no target with id %d")
}

// failFields answers a refusal that names fields.
func (h *handler) failFields(w http.ResponseWriter, r *http.Request, status int, code string, fields []fieldProblem) {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Message
	}
	h.writeJSON(w, r, status, inputErrorBody{Error: code, Detail: strings.Join(parts, "; "), Fields: fields})
}

// failTarget answers an error of internal/target: a red dry-run is a 422
// carrying it; refused fields a 400 naming each (409 when the target code
// is taken); a change made by someone else meanwhile a 409. rename maps the
// service's field names to the request body's (nil: the same).
func (h *handler) failTarget(w http.ResponseWriter, r *http.Request, res *target.Result, err error, rename func(string) string) {
	var ie *target.InputError
	switch {
	case errors.Is(err, target.ErrDryRunFailed) && res != nil && res.DryRun != nil:
		var failed []string
		for _, c := range res.DryRun.Failed() {
			failed = append(failed, c.Name+"（"+c.Detail+"）")
		}
		h.writeJSON(w, r, http.StatusUnprocessableEntity, dryRunRefusal{Error: "dry_run_failed",
			Detail: "试运行未通过，未保存：" + strings.Join(failed, "；") + "。修正样例文章网址或入口后再试",
			DryRun: dryRunOf(res.DryRun)})
	case errors.As(err, &ie):
		fields := make([]fieldProblem, len(ie.Problems))
		for i, p := range ie.Problems {
			f := p.Field
			if rename != nil {
				f = rename(f)
			}
			fields[i] = fieldProblem{Field: f, Message: p.Message}
		}
		status, code := http.StatusBadRequest, "invalid_request"
		if errors.Is(err, target.ErrCodeTaken) {
			status, code = http.StatusConflict, "conflict"
		}
		h.failFields(w, r, status, code, fields)
	case errors.Is(err, target.ErrConflict):
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"someone else changed the target while its dry-run ran; nothing was saved: read it again and repeat the change"))
	case errors.Is(err, target.ErrNotFound):
		h.fail(w, r, notFoundf("the target no longer exists"))
	default:
		h.fail(w, r, err)
	}
}

// decodePatch reads a merge patch of a target's fields. A field left out
// stays as it is; null is refused rather than read as "left out", so a
// client that means "clear" learns to send "". empty reports a request
// with no body at all.
func decodePatch(w http.ResponseWriter, r *http.Request) (patch target.Patch, empty bool, err error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(w, r, &raw); err != nil {
		return patch, false, err
	}
	if raw == nil {
		return patch, true, nil
	}
	var nulls []string
	for k, v := range raw {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			nulls = append(nulls, k)
		}
	}
	if len(nulls) > 0 {
		sort.Strings(nulls)
		return patch, false, invalid("request body: %s: null is not a value here; leave a field out to keep it, or send \"\" to clear a text", strings.Join(nulls, ", "))
	}
	b, _ := json.Marshal(raw)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&patch); err != nil {
		return patch, false, invalid("request body: %v", err)
	}
	return patch, false, nil
}
