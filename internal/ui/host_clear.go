package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

// maxReasonRunes bounds the reason a person gives; the audit trail keeps it whole.
const maxReasonRunes = 500

// hostAudit is the part of a host's state a clear changes, as recorded in
// the audit trail before and after.
type hostAudit struct {
	ConsecutiveErrors int        `json:"consecutive_errors"`
	BackoffUntil      *time.Time `json:"backoff_until"`
	BreakerUntil      *time.Time `json:"breaker_until"`
	NeedsReview       bool       `json:"needs_review"`
	BlockReason       string     `json:"block_reason"`
	RobotsFailing     []string   `json:"robots_failing"` // origins whose robots.txt could not be fetched
}

// hostClear is an admin's decision that a blocked host may be asked again,
// with the reason they give: the same change as `zhizhi host clear`, and
// recorded in the audit trail in the same transaction.
func (c *console) hostClear(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	host := r.PathValue("host")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		c.hostClearRefused(w, r, host, "", "请求无效，请重新填写。")
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	switch {
	case reason == "":
		c.hostClearRefused(w, r, host, reason, "请填写解除原因：说明已核查的情况，将记入审计日志。")
		return
	case utf8.RuneCountInString(reason) > maxReasonRunes:
		c.hostClearRefused(w, r, host, reason, fmt.Sprintf("解除原因过长，请控制在 %d 字以内。", maxReasonRunes))
		return
	}
	before, err := c.hostAuditState(r, host)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p, _ := auth.FromContext(ctx)
	after := hostAudit{BlockReason: "", RobotsFailing: []string{}}
	err = c.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.ClearHostBlock(ctx, host); err != nil {
			return err
		}
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		return tx.RecordAudit(ctx, &store.AuditEntry{Actor: p.Actor(), Action: "host.clear", ObjectType: "host",
			ObjectID: host, Before: b, After: a, Detail: reason})
	})
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, "没有主机 "+host+" 的状态记录，无需解除。")
		return
	}
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.Info("host cleared from the console", "host", host, "actor", p.Actor())
	http.Redirect(w, r, Prefix+"/hosts?cleared="+url.QueryEscape(host), http.StatusSeeOther)
}

func (c *console) hostClearRefused(w http.ResponseWriter, r *http.Request, host, reason, msg string) {
	d, err := c.hostsData(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Reason, d.ReasonFor = reason, host
	c.render(w, r, http.StatusBadRequest, "hosts", page{Title: "主机状态", Active: "hosts", Error: msg, Data: d})
}

func (c *console) hostAuditState(r *http.Request, host string) (hostAudit, error) {
	ctx := r.Context()
	st, err := c.store.GetHostState(ctx, host)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return hostAudit{}, err
	}
	a := hostAudit{ConsecutiveErrors: st.ConsecutiveErrors, BackoffUntil: st.BackoffUntil,
		BreakerUntil: st.BreakerUntil, NeedsReview: st.NeedsReview, BlockReason: st.BlockReason, RobotsFailing: []string{}}
	robots, err := c.store.FailingRobots(ctx)
	if err != nil {
		return hostAudit{}, err
	}
	for _, rs := range robots {
		if rs.Host == host {
			a.RobotsFailing = append(a.RobotsFailing, rs.Origin)
		}
	}
	return a, nil
}
