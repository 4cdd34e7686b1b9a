package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"zhizhi/internal/store"
	"zhizhi/internal/target"
)

// maxColumnBatch bounds one bulk (un)subscription.
const maxColumnBatch = 500

type subscribeRequest struct {
	IDs      []int64         `json:"ids"`
	Defaults target.Defaults `json:"defaults"`
}

// columnSubscribe subscribes catalog columns in bulk, all or nothing: a
// column that cannot be subscribed yet refuses the batch with 409 naming
// each such column.
func (h *handler) columnSubscribe(w http.ResponseWriter, r *http.Request) {
	var req subscribeRequest
	err := newQuery(r).check()
	if err == nil {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if problems, err := h.checkColumnIDs(ctx, req.IDs); err != nil || len(problems) > 0 {
		h.failColumns(w, r, problems, err)
		return
	}
	subs, err := h.targets.Subscribe(ctx, req.IDs, req.Defaults, principal(r).Actor())
	var ie *target.InputError
	if errors.As(err, &ie) {
		// The ids were all checked above: what is left is either a default
		// (400) or columns that cannot be subscribed yet (409).
		fields := make([]fieldProblem, len(ie.Problems))
		status, code := http.StatusConflict, "conflict"
		for i, p := range ie.Problems {
			if p.Field == "registry_ids" {
				fields[i] = fieldProblem{Field: "ids", Message: p.Message}
				continue
			}
			fields[i] = fieldProblem{Field: "defaults." + p.Field, Message: p.Message}
			status, code = http.StatusBadRequest, "invalid_request"
		}
		h.failFields(w, r, status, code, fields)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answerSubscriptions(w, r, subs)
}

// checkColumnIDs names each id of a batch that is out of bounds or not in
// the catalog.
func (h *handler) checkColumnIDs(ctx context.Context, ids []int64) ([]fieldProblem, error) {
	switch {
	case len(ids) == 0:
		return []fieldProblem{{Field: "ids", Message: "至少选择一个栏目（栏目目录的 id，见 GET /api/v1/columns）"}}, nil
	case len(ids) > maxColumnBatch:
		return []fieldProblem{{Field: "ids", Message: fmt.Sprintf("一次最多 %d 个栏目，这次有 %d 个：分批提交", maxColumnBatch, len(ids))}}, nil
	}
	var out []fieldProblem
	err := h.st.WithTx(ctx, func(tx *store.Tx) error {
		out = nil
		for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
			if id <= 0 {
				out = append(out, fieldProblem{Field: "ids", Message: fmt.Sprintf("%d 不是栏目 id（从 1 起的整数）", id)})
				continue
			}
			if _, err := tx.ColumnEntryByID(ctx, id); errors.Is(err, store.ErrNotFound) {
				out = append(out, fieldProblem{Field: "ids", Message: fmt.Sprintf("栏目 %d 不在栏目目录中（见 GET /api/v1/columns）", id)})
			} else if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

func (h *handler) failColumns(w http.ResponseWriter, r *http.Request, problems []fieldProblem, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.failFields(w, r, http.StatusBadRequest, "invalid_request", problems)
}

// answerSubscriptions lists what happened to each column, with the id of
// its target (the API names targets by id).
func (h *handler) answerSubscriptions(w http.ResponseWriter, r *http.Request, subs []target.Subscription) {
	out := list[subscriptionView]{Items: []subscriptionView{}}
	for _, s := range subs {
		v := subscriptionView{RegistryID: s.RegistryID, SiteCode: s.SiteCode, ColumnID: s.ColumnID,
			ColumnName: s.ColumnName, TargetCode: orNull(s.TargetCode), Status: s.Status}
		if s.TargetCode != "" {
			t, err := h.st.TargetByCode(r.Context(), s.TargetCode)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			v.TargetID = &t.ID
		}
		out.Items = append(out.Items, v)
	}
	h.ok(w, r, out)
}
