package api

import (
	"net/http"
	"time"

	"zhizhi/internal/health"
	"zhizhi/internal/store"
)

type staleView struct {
	TargetID        int64      `json:"target_id"`
	TargetCode      string     `json:"target_code"`
	TargetName      string     `json:"target_name"`
	SiteCode        string     `json:"site_code"`
	CadenceDays     int        `json:"expected_cadence_days"`
	LastArticleTime *time.Time `json:"last_article_time"`
	QuietSince      time.Time  `json:"quiet_since"`
	QuietDays       float64    `json:"quiet_days"`
	StaleAfterDays  int        `json:"stale_after_days"`
}

// targetStaleList lists the enabled targets that have gone quiet for
// longer than their expected cadence allows, the same list `zhizhi health`
// and the alerts report.
func (h *handler) targetStaleList(w http.ResponseWriter, r *http.Request) {
	if err := newQuery(r).check(); err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	rep, err := health.Check(ctx, h.st, h.now())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	targets, err := h.st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ids := make(map[string]int64, len(targets))
	for _, t := range targets {
		ids[t.TargetCode] = t.ID
	}
	out := list[staleView]{Items: []staleView{}}
	for _, s := range rep.Stale {
		out.Items = append(out.Items, staleView{TargetID: ids[s.TargetCode], TargetCode: s.TargetCode,
			TargetName: s.TargetName, SiteCode: s.SiteCode, CadenceDays: s.CadenceDays,
			LastArticleTime: s.LastArticleTime, QuietSince: s.QuietSince, QuietDays: s.QuietDays,
			StaleAfterDays: s.LimitDays})
	}
	h.ok(w, r, out)
}
