package ui

import (
	"net/http"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/config"
	"zhizhi/internal/onboard"
)

type onboardNewData struct {
	Enabled  bool
	Paste    string
	Adapter  *config.Adapter // the adapter page the person came from
	Problems []onboard.LineProblem
	Runs     []runSummary
	MaxSites int
	TTLHours int
}

type runSummary struct {
	ID      string
	Started time.Time
	Sites   int
	State   runState
	Drafts  int
}

// onboardNew is the wizard's first step: paste the base URLs. It lists
// the person's own runs of the last day.
func (c *console) onboardNew(w http.ResponseWriter, r *http.Request) {
	c.renderOnboardNew(w, r, http.StatusOK, r.URL.Query().Get("adapter"), "", nil, "")
}

func (c *console) renderOnboardNew(w http.ResponseWriter, r *http.Request, status int, adapterID, paste string,
	problems []onboard.LineProblem, msg string) {
	d := onboardNewData{Enabled: c.onboard != nil, Paste: paste, Problems: problems, MaxSites: onboard.MaxSites,
		TTLHours: int(runTTL / time.Hour)}
	if adapterID != "" {
		if b := c.bundle(); b != nil {
			d.Adapter = b.CMS[adapterID]
		}
	}
	p, _ := auth.FromContext(r.Context())
	if owner := runOwner(p); owner != "" {
		runs, err := c.store.OnboardRunsOf(r.Context(), owner, c.now().Add(-runTTL))
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		for _, run := range runs {
			state := runState(run.State)
			if state == runRunning && c.now().Sub(run.Started) >= staleAfter {
				state = runFailed // as its page will say
			}
			d.Runs = append(d.Runs, runSummary{ID: run.ID, Started: run.Started, Sites: run.LineCount, State: state,
				Drafts: run.DraftCount})
		}
	}
	if !d.Enabled && msg == "" {
		msg = "批量接入向导未启用：需要由 zhizhi serve 提供抓取客户端与当前配置。"
	}
	c.render(w, r, status, "onboard", page{Title: "批量接入向导", Active: "wizard", Error: msg, Data: d})
}
