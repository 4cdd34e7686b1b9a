package api

import (
	"errors"
	"net/http"

	"zhizhi/internal/store"
)

// takedownFreeze carries a request out: the cards it names are frozen —
// hidden from the portal, kept in the store — and the answer carries the
// receipt. A request already carried out is a 409 naming its receipt.
func (h *handler) takedownFreeze(w http.ResponseWriter, r *http.Request) {
	k, err := byPath(r, h.st.TakedownByID, "no takedown request with id %d")
	if err == nil {
		err = decodeJSON(w, r, &struct{}{})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	done, err := h.st.FreezeTakedown(r.Context(), k.ID, principal(r).Actor())
	if errors.Is(err, store.ErrTakedownDone) {
		if k, err = h.st.TakedownByID(r.Context(), k.ID); err == nil {
			err = errorf(http.StatusConflict, "conflict", "takedown request %d was already carried out on %s by %s (receipt %s); nothing changed",
				k.ID, k.FrozenAt.Format("2006-01-02T15:04:05Z07:00"), k.FrozenBy, k.Receipt)
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, takedownOf(done, h.now()))
}
