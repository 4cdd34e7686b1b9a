package ui

import (
	"errors"
	"net/http"
	"strconv"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type takedownData struct {
	K       *takedownRow // a pointer: the page calls the request's Open
	BaseURL string       // the site's address, named on the receipt
}

// takedownShow is one request: while open, its deadline and the button
// that carries it out; once carried out, the receipt a person prints or
// sends back to the site.
func (c *console) takedownShow(w http.ResponseWriter, r *http.Request) {
	k, ok := c.takedownOfPath(w, r)
	if !ok {
		return
	}
	p := page{}
	// Each notice names only what the stored request shows, so a crafted
	// link cannot make the page claim a takedown that did not happen.
	q := r.URL.Query()
	switch {
	case q.Get("done") == "1" && !k.Open():
		p.Flash = "已执行下架：冻结 " + strconv.Itoa(k.CardsFrozen) + " 张摘要卡。下方回执可打印或发送给提出人。"
	case q.Get("recorded") == "1" && k.Open():
		p.Flash = "已登记下架请求，请在截止时间前执行。"
	case q.Get("freeze_failed") == "1" && k.Open():
		p.Error = "下架请求已登记，但立即执行失败（已记录日志）。请点击「执行下架」重试。"
	}
	c.renderTakedown(w, r, http.StatusOK, k, p)
}

func (c *console) renderTakedown(w http.ResponseWriter, r *http.Request, status int, k *model.Takedown, p page) {
	row := c.takedownRow(*k, c.now())
	d := takedownData{K: &row}
	if s, err := c.store.SiteByID(r.Context(), k.SiteID); err == nil {
		d.BaseURL = s.BaseURL
	}
	p.Title, p.Active, p.Data = "下架请求 · "+k.SiteName, "takedowns", d
	if !k.Open() {
		p.Title = "下架回执 · " + k.Receipt
	}
	c.render(w, r, status, "takedown", p)
}

// takedownOfPath loads the request named by the path, answering 404 itself.
func (c *console) takedownOfPath(w http.ResponseWriter, r *http.Request) (*model.Takedown, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r, "没有这条下架请求。")
		return nil, false
	}
	k, err := c.store.TakedownByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有这条下架请求。")
		return nil, false
	}
	if err != nil {
		c.serverError(w, r, err)
		return nil, false
	}
	return k, true
}
