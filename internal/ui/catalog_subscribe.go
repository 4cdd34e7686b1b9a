package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"zhizhi/internal/auth"
	"zhizhi/internal/target"
)

// catalogSubscribe subscribes the ticked columns, one new target each, all
// with the one schedule and category chosen in the bottom bar. A column
// whose department is still pending refuses the whole batch, naming it;
// nothing is written then and the ticks are kept.
func (c *console) catalogSubscribe(w http.ResponseWriter, r *http.Request) {
	c.catalogBulk(w, r, true)
}

// catalogUnsubscribe stops crawling the ticked columns: their targets are
// disabled, never deleted, so their articles stay.
func (c *console) catalogUnsubscribe(w http.ResponseWriter, r *http.Request) {
	c.catalogBulk(w, r, false)
}

func (c *console) catalogBulk(w http.ResponseWriter, r *http.Request, subscribe bool) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		c.catalogRefused(w, r, nil, catalogDefaults{}, "请求无效，请重新选择。")
		return
	}
	defaults := catalogDefaults{Schedule: r.PostFormValue("schedule"), Cadence: strings.TrimSpace(r.PostFormValue("expected_cadence_days")),
		Category: strings.TrimSpace(r.PostFormValue("content_category")), Subcategory: strings.TrimSpace(r.PostFormValue("content_subcategory"))}
	var ids []int64
	picked := r.PostForm["id"]
	// A row's own 一键订阅 button acts on that row alone, whatever is ticked.
	if one := r.PostFormValue("one"); one != "" {
		picked = []string{one}
	}
	for _, s := range picked {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			c.catalogRefused(w, r, ids, defaults, "请求无效：栏目编号有误，请重新勾选。")
			return
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		c.catalogRefused(w, r, ids, defaults, "请先勾选至少一个栏目。")
		return
	}
	p, _ := auth.FromContext(ctx)
	var (
		subs   []target.Subscription
		err    error
		action = "退订"
	)
	if subscribe {
		action = "订阅"
		cadence := 0
		if defaults.Cadence != "" {
			if cadence, err = strconv.Atoi(defaults.Cadence); err != nil {
				c.catalogRefused(w, r, ids, defaults, "预期更新周期「"+defaults.Cadence+"」不是整数。")
				return
			}
		}
		subs, err = c.targets.Subscribe(ctx, ids, target.Defaults{Schedule: defaults.Schedule, ExpectedCadenceDays: cadence,
			ContentCategory: defaults.Category, ContentSubcategory: defaults.Subcategory}, p.Actor())
	} else {
		subs, err = c.targets.Unsubscribe(ctx, ids, p.Actor())
	}
	var in *target.InputError
	if errors.As(err, &in) {
		d, _, derr := c.catalogData(ctx, carriedFilter(r))
		if derr != nil {
			c.serverError(w, r, derr)
			return
		}
		d.Defaults, d.Action = defaults, action
		for _, id := range ids {
			d.Selected[id] = true
		}
		for _, pr := range in.Problems {
			d.Refused = append(d.Refused, pr.Message)
		}
		c.renderCatalog(w, r, http.StatusUnprocessableEntity, d, "未"+action+"任何栏目：以下问题需先处理（可取消勾选这些栏目后重试）。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d, _, err := c.catalogData(ctx, carriedFilter(r))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Defaults, d.Action, d.Results = defaults, action, subs
	c.render(w, r, http.StatusOK, "catalog", page{Title: "栏目目录", Active: "catalog",
		Flash: "批量" + action + "完成：共 " + strconv.Itoa(len(subs)) + " 个栏目，结果见下表。", Data: d})
}

// carriedFilter is the catalog filter the bulk form carried, so the page
// after the change shows the same columns.
func carriedFilter(r *http.Request) url.Values {
	v, err := url.ParseQuery(r.PostFormValue("filter"))
	if err != nil {
		return url.Values{}
	}
	return v
}

func (c *console) catalogRefused(w http.ResponseWriter, r *http.Request, ids []int64, defaults catalogDefaults, msg string) {
	d, _, err := c.catalogData(r.Context(), carriedFilter(r))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if defaults != (catalogDefaults{}) {
		d.Defaults = defaults
	}
	for _, id := range ids {
		d.Selected[id] = true
	}
	c.renderCatalog(w, r, http.StatusBadRequest, d, msg)
}
