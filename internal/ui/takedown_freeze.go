package ui

import (
	"errors"
	"net/http"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// takedownFreeze carries a request out: the cards it names are frozen —
// hidden from the portal, kept in the store — and the page shows the
// receipt. A request already carried out is not carried out again; the
// person is shown its receipt instead.
func (c *console) takedownFreeze(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	k, ok := c.takedownOfPath(w, r)
	if !ok {
		return
	}
	p, _ := auth.FromContext(ctx)
	done, err := c.store.FreezeTakedown(ctx, k.ID, p.Actor())
	if errors.Is(err, store.ErrTakedownDone) {
		if k, err = c.store.TakedownByID(ctx, k.ID); err != nil {
			c.serverError(w, r, err)
			return
		}
		c.renderTakedown(w, r, http.StatusConflict, k, page{Error: "这条请求已于 " + c.fmtTime(*k.FrozenAt) +
			" 由 " + k.FrozenBy + " 执行（回执号 " + k.Receipt + "），无需重复执行。回执如下。"})
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("takedown carried out from the console", "takedown", done.ID, "actor", p.Actor(), "cards", done.CardsFrozen)
	http.Redirect(w, r, takedownURL(done.ID)+"?done=1", http.StatusSeeOther)
}
