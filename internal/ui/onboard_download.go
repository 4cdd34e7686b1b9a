package ui

import (
	"net/http"
	"strconv"

	"zhizhi/internal/onboard"
)

// onboardDownload sends the drafts as one zip, sites/<site_code>.yaml
// inside, for review; the console keeps no copy anywhere but the run.
func (c *console) onboardDownload(w http.ResponseWriter, r *http.Request) {
	run, ok := c.run(w, r)
	if !ok {
		return
	}
	drafts := run.drafts
	if len(drafts) == 0 {
		c.notFound(w, r, "这个向导任务还没有生成草稿：请先在扫描结果中选好每行的绑定方式并提交。")
		return
	}
	now := c.now()
	body, err := onboard.Zip(drafts, now)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	name := "zhizhi-onboard-drafts-" + now.In(c.loc).Format("20060102-1504") + ".zip"
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}
