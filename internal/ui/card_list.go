package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// cardPageSize is how many cards one page of the review list shows.
const cardPageSize = 50

// gradeAll is the grade filter's value for every grade; with no grade in
// the query the list shows the yellow cards, the ones waiting for a person.
const gradeAll = "all"

var cardGrades = []labelValue{
	{model.GradeYellow, "黄 · 待人工改写"}, {model.GradeGreen, "绿 · 已收录"},
	{model.GradeRed, "红 · 仅标题和链接"}, {gradeAll, "全部"},
}

type cardRow struct {
	model.SummaryCard
	Badge     badge
	Sigma     string
	Total     int
	Frozen    bool
	Rewritten bool
}

type cardListData struct {
	Site, Grade string
	Sites       []model.Site
	Grades      []labelValue
	Rows        []cardRow
	Total       int
	Page        int
	PrevURL     string
	NextURL     string
}

// cardList lists summary cards for review, newest first: by default the
// yellow ones, whose summary waits for a person's rewrite.
func (c *console) cardList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	d := cardListData{Site: strings.TrimSpace(q.Get("site")), Grade: q.Get("grade"), Grades: cardGrades, Page: 1}
	if d.Grade == "" {
		d.Grade = model.GradeYellow
	}
	sites, err := c.store.ListSites(ctx)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Sites = sites
	refuse := func(msg string) {
		c.render(w, r, http.StatusBadRequest, "cards", page{Title: "摘要审核", Active: "cards", Error: msg, Data: d})
	}
	cq := store.CardQuery{Limit: cardPageSize}
	switch d.Grade {
	case gradeAll:
	case model.GradeGreen, model.GradeYellow, model.GradeRed:
		cq.Grade = d.Grade
	default:
		refuse("评级筛选无效，请从列表中选择。")
		return
	}
	siteID, _, msg, err := c.siteTargetIDs(ctx, sites, d.Site, "")
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if msg != "" {
		refuse(msg)
		return
	}
	cq.SiteID = siteID
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100000 {
			refuse(badPageMsg)
			return
		}
		d.Page = n
	}
	cq.Offset = (d.Page - 1) * cardPageSize
	cards, total, err := c.store.ListCards(ctx, cq)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d.Total = total
	for _, card := range cards {
		d.Rows = append(d.Rows, cardRow{SummaryCard: card, Badge: gradeBadge(card.Grade), Sigma: fmtSigma(card.Sigma),
			Total: len(card.Anchors), Frozen: card.TakedownID != nil, Rewritten: card.RewrittenBy != ""})
	}
	v := url.Values{}
	if d.Site != "" {
		v.Set("site", d.Site)
	}
	if d.Grade != model.GradeYellow {
		v.Set("grade", d.Grade)
	}
	pageURL := func(n int) string {
		v.Set("page", strconv.Itoa(n))
		if n == 1 {
			v.Del("page")
		}
		return listURL("/cards", v)
	}
	if d.Page > 1 {
		d.PrevURL = pageURL(d.Page - 1)
	}
	if d.Page*cardPageSize < total {
		d.NextURL = pageURL(d.Page + 1)
	}
	c.render(w, r, http.StatusOK, "cards", page{Title: "摘要审核", Active: "cards", Data: d})
}

// fmtSigma is σ as the pages show it: two decimals, the precision of its
// thresholds (0.85, 0.70).
func fmtSigma(s float64) string { return fmt.Sprintf("%.2f", s) }
