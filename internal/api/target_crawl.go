package api

import (
	"net/http"
	"strconv"

	"zhizhi/internal/store"
)

type crawlAccepted struct {
	TargetID   int64  `json:"target_id"`
	TargetCode string `json:"target_code"`
	Status     string `json:"status"`
}

// targetCrawl queues a crawl of the target ahead of the scheduled ones and
// answers 202: the crawl runs in the background, politely, like any other.
func (h *handler) targetCrawl(w http.ResponseWriter, r *http.Request) {
	t, err := h.targetOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	if !t.Enabled {
		h.fail(w, r, errorf(http.StatusConflict, "conflict",
			"target %s is disabled; enable it before asking for a crawl", t.TargetCode))
		return
	}
	if err := h.crawlNow(ctx, t.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	err = h.st.RecordAudit(ctx, &store.AuditEntry{Actor: principal(r).Actor(), Action: "target.crawl_now",
		ObjectType: "target", ObjectID: strconv.FormatInt(t.ID, 10), Detail: "立即采集：" + t.TargetCode})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusAccepted, crawlAccepted{TargetID: t.ID, TargetCode: t.TargetCode, Status: "queued"})
}
