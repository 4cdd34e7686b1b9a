package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"zhizhi/internal/chart"
	"zhizhi/internal/ledger"
)

// historyDays is how many days the dashboard's charts cover.
const historyDays = 30

// ledgerData is the dashboard page: the numbers and their charts.
type ledgerData struct {
	D        *ledger.Dashboard
	Today    string
	Requests template.HTML
	Traffic  template.HTML
	Readers  template.HTML
	Shares   template.HTML
}

// dashboard reads the ?day= asked for (today by default) and builds its
// numbers; a malformed day is the reader's mistake, told in a sentence.
func (p *portal) dashboard(r *http.Request) (*ledger.Dashboard, string, error) {
	today := ledger.DayOf(p.now())
	day := strings.TrimSpace(r.URL.Query().Get("day"))
	if day == "" {
		day = today
	}
	if _, err := ledger.ParseDay(day); err != nil || day > today {
		return nil, today, errBadDay
	}
	d, err := p.cachedDashboard(r.Context(), day)
	return d, today, err
}

// dashboardTTL is how long one reading of the dashboard is served: anyone
// may ask for the page as often as they like, the database is read once a
// minute per day asked.
const dashboardTTL = time.Minute

type cachedDashboard struct {
	d  *ledger.Dashboard
	at time.Time
}

func (p *portal) cachedDashboard(ctx context.Context, day string) (*ledger.Dashboard, error) {
	p.dashMu.Lock()
	defer p.dashMu.Unlock()
	now := p.now()
	if c, ok := p.dash[day]; ok && now.Sub(c.at) < dashboardTTL && !now.Before(c.at) {
		return c.d, nil
	}
	d, err := ledger.BuildDashboard(ctx, p.store, day, historyDays, now)
	if err != nil {
		return nil, err
	}
	if p.dash == nil || len(p.dash) > 64 {
		p.dash = map[string]cachedDashboard{} // a few days are asked for; forget the rest
	}
	p.dash[day] = cachedDashboard{d: d, at: now}
	return d, nil
}

var errBadDay = fmt.Errorf("bad day")

// ledgerShow is the public dashboard: what the crawler took from each
// site and what people read here, side by side, day by day.
func (p *portal) ledgerShow(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindPage})
	d, today, err := p.dashboard(r)
	if err == errBadDay {
		p.render(w, r, http.StatusBadRequest, "error", view{Title: "日期无效",
			Data: errorData{Code: http.StatusBadRequest, Heading: "日期无效", Message: "请按 年-月-日 填写日期（例如 " + today + "），且不晚于今天。"}})
		return
	}
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	var labels []string
	var reqs, kb, views, clicks, alpha, eta []float64
	for _, h := range d.History {
		labels = append(labels, h.Day[5:])
		reqs = append(reqs, float64(h.Crawler.Requests))
		kb = append(kb, float64(h.Crawler.Bytes)/1024)
		views = append(views, float64(h.Human.PageViews))
		clicks = append(clicks, float64(h.Human.Clicks))
		alpha = append(alpha, orNaN(h.Alpha))
		eta = append(eta, orNaN(h.Eta))
	}
	data := ledgerData{D: d, Today: today,
		Requests: chart.SVG(chart.Chart{Title: "爬虫请求（次/天）", Labels: labels, Bars: true, Unit: "次",
			Series: []chart.Series{{Name: "爬虫请求", Values: reqs}}}),
		Traffic: chart.SVG(chart.Chart{Title: "爬虫取用流量（KB/天）", Labels: labels, Bars: true, Unit: "KB",
			Series: []chart.Series{{Name: "取用流量", Values: kb, Color: "#b8860b"}}}),
		Readers: chart.SVG(chart.Chart{Title: "人工阅览（次/天）", Labels: labels, Unit: "次",
			Series: []chart.Series{{Name: "摘要浏览", Values: views, Color: "#2e8b57"}, {Name: "点击原文", Values: clicks, Color: "#c0392b"}}}),
		Shares: chart.SVG(chart.Chart{Title: "摘要满足率 α 与压力节省率 η", Labels: labels, Max: 1,
			Series: []chart.Series{{Name: "α", Values: alpha}, {Name: "η", Values: eta, Color: "#6a5acd"}}}),
	}
	p.render(w, r, http.StatusOK, "ledger", view{Title: "透明账本", Data: data})
}

// ledgerJSON is the same numbers for machines.
func (p *portal) ledgerJSON(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindOther})
	d, today, err := p.dashboard(r)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err == errBadDay {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad_day",
			"detail": "day must be a calendar day written YYYY-MM-DD, not after " + today})
		return
	}
	if err != nil {
		p.log.Error("portal: ledger", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "internal", "detail": "the numbers could not be read; try again later"})
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
}

// ledgerKey publishes the public key the daily seals are signed with, so
// anyone holding an export can check it.
func (p *portal) ledgerKey(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindOther})
	key, err := ledger.VerifierKey(r.Context(), p.store)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = fmt.Fprintln(w, key)
}

// ledgerHeads publishes every sealed day's signed head, for outsiders to
// keep: with a copy, 'zhizhi audit verify --known-heads' proves later that
// no published day was rewritten. Public, no cookie, cacheable for a few
// minutes (a new head appears once a day).
func (p *portal) ledgerHeads(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindOther})
	f, err := ledger.Heads(r.Context(), p.store)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err != nil {
		p.log.Error("portal: ledger heads", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "internal", "detail": "the heads could not be read; try again later"})
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(f)
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
