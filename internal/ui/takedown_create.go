package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"zhizhi/internal/auth"
	"zhizhi/internal/review"
)

// takedownCreate records a site's request as it arrives — its 48-hour
// deadline runs from now — and, when 立即执行 is ticked, carries it out at
// once. A refused field records nothing and gives the form back as typed.
func (c *console) takedownCreate(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.takedownRefused(w, r, takedownForm{Scope: "urls"}, "请求无效，请重新填写。")
		return
	}
	v := func(k string) string { return r.PostFormValue(k) }
	f := takedownForm{SiteID: strings.TrimSpace(v("site_id")), Scope: v("scope"), URLs: v("urls"),
		Requester: v("requester"), Contact: v("contact"), Reason: v("reason"), FreezeNow: v("freeze_now") == "1"}
	siteID, _ := strconv.ParseInt(f.SiteID, 10, 64)
	p, _ := auth.FromContext(ctx)
	k, err := review.RecordTakedown(ctx, c.store, review.TakedownRequest{SiteID: siteID, Scope: f.Scope,
		URLs: strings.Split(f.URLs, "\n"), Requester: f.Requester, Contact: f.Contact, Reason: f.Reason,
		ReceivedAt: c.now(), RecordedBy: p.Actor(), FreezeNow: f.FreezeNow})
	var bad *review.InputError
	switch {
	case errors.As(err, &bad):
		f.Errors = map[string]string{}
		for _, pr := range bad.Problems {
			if f.Errors[pr.Field] != "" {
				f.Errors[pr.Field] += "；"
			}
			f.Errors[pr.Field] += pr.Message
		}
		c.takedownRefused(w, r, f, "有填写不正确的项（见标红处），未登记。")
		return
	case err != nil && k != nil:
		// Recorded, but the freeze failed: the request is open on its
		// page, where it can be carried out again.
		c.log.Error("takedown recorded, freeze failed", "takedown", k.ID, "err", err)
		http.Redirect(w, r, takedownURL(k.ID)+"?freeze_failed=1", http.StatusSeeOther)
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.log.Info("takedown recorded from the console", "takedown", k.ID, "actor", p.Actor(), "frozen", !k.Open())
	if !k.Open() {
		http.Redirect(w, r, takedownURL(k.ID)+"?done=1", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, takedownURL(k.ID)+"?recorded=1", http.StatusSeeOther)
}

func (c *console) takedownRefused(w http.ResponseWriter, r *http.Request, f takedownForm, msg string) {
	d, err := c.takedownsData(r.Context(), f)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusBadRequest, "takedowns", page{Title: "下架请求", Active: "takedowns", Error: msg, Data: d})
}

func takedownURL(id int64) string { return Prefix + "/takedowns/" + strconv.FormatInt(id, 10) }
