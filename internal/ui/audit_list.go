package ui

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"zhizhi/internal/store"
)

const auditPageSize = 50

type auditData struct {
	ObjectType, Actor string
	ActorLabel        string // the filter's actor in words
	Objects           []auditOption
	Entries           []auditRow
	NextURL           string
}

// auditOption is one kind of object the list can be narrowed to.
type auditOption struct{ Code, Label string }

// auditRow is one entry with its codes said in words.
type auditRow struct {
	store.AuditEntry
	ActorLabel, ActionLabel, ObjectLabel string
}

// auditList is the audit trail, newest first: who changed what, when, and
// the object before and after.
func (c *console) auditList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := auditData{ObjectType: strings.TrimSpace(q.Get("object_type")), Actor: auditActorCode(q.Get("actor"))}
	if d.Actor != "" {
		d.ActorLabel = auditActor(d.Actor)
	}
	for code, label := range auditObjects {
		d.Objects = append(d.Objects, auditOption{Code: code, Label: label})
	}
	sort.Slice(d.Objects, func(i, j int) bool { return d.Objects[i].Code < d.Objects[j].Code })
	f := store.AuditFilter{ObjectType: d.ObjectType, Actor: d.Actor, Limit: auditPageSize + 1}
	if b := q.Get("before"); b != "" {
		id, err := strconv.ParseInt(b, 10, 64)
		if err != nil || id <= 0 {
			c.render(w, r, http.StatusBadRequest, "audit", page{Title: "审计日志", Active: "audit",
				Error: "分页参数无效，请从第一页重新浏览。", Data: d})
			return
		}
		f.BeforeID = id
	}
	entries, err := c.store.ListAudit(r.Context(), f)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if len(entries) > auditPageSize {
		entries = entries[:auditPageSize]
		v := url.Values{}
		if d.ObjectType != "" {
			v.Set("object_type", d.ObjectType)
		}
		if d.Actor != "" {
			v.Set("actor", d.Actor)
		}
		v.Set("before", strconv.FormatInt(entries[len(entries)-1].ID, 10))
		d.NextURL = Prefix + "/audit?" + v.Encode()
	}
	for _, e := range entries {
		d.Entries = append(d.Entries, auditRow{AuditEntry: e, ActorLabel: auditActor(e.Actor),
			ActionLabel: auditAction(e.Action), ObjectLabel: auditObject(e.ObjectType)})
	}
	c.render(w, r, http.StatusOK, "audit", page{Title: "审计日志", Active: "audit", Data: d})
}
