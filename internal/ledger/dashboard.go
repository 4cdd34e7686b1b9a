package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Healthy band of the bot-to-human ratio of portal traffic: outside it a
// person should look at who is visiting.
const (
	RatioLow  = 1.0
	RatioHigh = 5.0
)

// CrawlerDay is the crawler's side of one day: what it asked of the sites.
type CrawlerDay struct {
	Requests     int   `json:"requests"`
	Bytes        int64 `json:"bytes"`
	BytesSaved   int64 `json:"bytes_saved"`
	NotSent      int   `json:"not_sent"`
	Errors       int   `json:"errors"`
	BreakerTrips int   `json:"breaker_trips"`
	Hosts        int   `json:"hosts"`
}

// Traffic is one band's share of a day's portal traffic.
type Traffic struct {
	Visitors  int64 `json:"visitors"`
	PageViews int64 `json:"page_views"`
	Clicks    int64 `json:"clicks"`
}

// DashboardDay is one day's public numbers. The two ledgers stay apart:
// Crawler is what zhizhi took from the sites, Human what people read here.
type DashboardDay struct {
	Day     string     `json:"day"`
	Crawler CrawlerDay `json:"crawler"`
	Human   Traffic    `json:"human"`
	Review  Traffic    `json:"review"`
	Bot     Traffic    `json:"bot"`
	// Alpha is the share of human card views that needed no click-through
	// to the source: 1 − clicks/views. Nil without human views.
	Alpha *float64 `json:"alpha"`
	// Eta is the share of source traffic saved against fetching every
	// page in full for every reader: α − card size / page size.
	Eta *float64 `json:"eta"`
	// Ratio is bot page views per human page view; RatioBand says whether
	// it lies in the healthy band ("healthy") or wants a look ("review").
	Ratio     *float64 `json:"ratio"`
	RatioBand string   `json:"ratio_band,omitempty"`
	Sealed    bool     `json:"sealed"`
	Head      string   `json:"head,omitempty"` // the sealed day's chain head
	// Problem, on a sealed day, says how the rows it was sealed from
	// differ from its sealed records now, naming the record; the crawler's
	// requests, bytes and held-back requests are the sealed ones.
	Problem string `json:"problem,omitempty"`
}

// OpenTakedown is a takedown request still waiting, as the public sees it:
// which site asked and by when it is due, not who wrote.
type OpenTakedown struct {
	Site       string    `json:"site"`
	ReceivedAt time.Time `json:"received_at"`
	DeadlineAt time.Time `json:"deadline_at"`
	Overdue    bool      `json:"overdue"`
}

// Dashboard is the public dashboard: one day, the days before it, the
// pressure on each source host that day, the sizes behind η, the cards'
// grades, open takedown requests and the key that signs the seals.
type Dashboard struct {
	Day         DashboardDay         `json:"day"`
	History     []DashboardDay       `json:"history"` // oldest first, ending with Day
	Hosts       []store.HostPressure `json:"hosts"`
	Sizes       store.Sizes          `json:"sizes"`
	Grades      map[string]int       `json:"grades"`
	Takedowns   []OpenTakedown       `json:"open_takedowns"`
	VerifierKey string               `json:"verifier_key,omitempty"`
	LastSealed  string               `json:"last_sealed,omitempty"`
	GeneratedAt time.Time            `json:"generated_at"`
	sealedDays  map[string]model.LedgerDay
}

// BuildDashboard gathers the dashboard of day (YYYY-MM-DD, the users' day)
// with the history days before it.
func BuildDashboard(ctx context.Context, st *store.Store, day string, history int, now time.Time) (*Dashboard, error) {
	if _, err := ParseDay(day); err != nil {
		return nil, err
	}
	history = max(history, 1)
	first := day
	for range history - 1 {
		first = PrevDay(first)
	}
	d := &Dashboard{GeneratedAt: now.UTC(), sealedDays: map[string]model.LedgerDay{}}
	sealed, err := st.LedgerDays(ctx, first, day)
	if err != nil {
		return nil, err
	}
	for _, s := range sealed {
		d.sealedDays[s.Day] = s
	}
	if last, ok, err := st.LastLedgerDay(ctx); err != nil {
		return nil, err
	} else if ok {
		d.LastSealed = last.Day
	}
	if d.Sizes, err = st.MeasuredSizes(ctx); err != nil {
		return nil, err
	}
	for x := first; ; x = NextDay(x) {
		dd, hosts, err := d.day(ctx, st, x)
		if err != nil {
			return nil, err
		}
		d.History = append(d.History, dd)
		if x == day {
			d.Day, d.Hosts = dd, hosts
			break
		}
	}
	if d.Grades, err = st.CardGrades(ctx); err != nil {
		return nil, err
	}
	open, err := st.ListTakedowns(ctx, true)
	if err != nil {
		return nil, err
	}
	d.Takedowns = []OpenTakedown{}
	for _, k := range open {
		d.Takedowns = append(d.Takedowns, OpenTakedown{Site: k.SiteName, ReceivedAt: k.ReceivedAt,
			DeadlineAt: k.DeadlineAt, Overdue: now.After(k.DeadlineAt)})
	}
	if d.VerifierKey, err = VerifierKey(ctx, st); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Dashboard) day(ctx context.Context, st *store.Store, day string) (DashboardDay, []store.HostPressure, error) {
	out := DashboardDay{Day: day}
	from := dayStart(day)
	hosts, err := st.HostPressures(ctx, from, from.AddDate(0, 0, 1))
	if err != nil {
		return out, nil, err
	}
	for _, h := range hosts {
		out.Crawler.Requests += h.Requests
		out.Crawler.Bytes += h.Bytes
		out.Crawler.BytesSaved += h.BytesSaved
		out.Crawler.NotSent += h.NotSent
		out.Crawler.Errors += h.Errors
		out.Crawler.BreakerTrips += h.BreakerTrips
		if h.Requests > 0 {
			out.Crawler.Hosts++
		}
	}
	portal, err := st.PortalDayStats(ctx, day)
	if err != nil {
		return out, nil, fmt.Errorf("dashboard %s: %w", day, err)
	}
	band := func(name string) Traffic {
		b := portal.Band(name)
		return Traffic{Visitors: b.Visitors, PageViews: b.PageViews, Clicks: b.Clicks}
	}
	out.Human, out.Review, out.Bot = band(store.BandHuman), band(store.BandReview), band(store.BandBot)
	if out.Human.PageViews > 0 {
		alpha := 1 - float64(out.Human.Clicks)/float64(out.Human.PageViews)
		alpha = max(alpha, 0) // more click-throughs than views: a reader who came through a shared link
		out.Alpha = &alpha
		if d.Sizes.PageBytes > 0 {
			eta := alpha - d.Sizes.CardBytes/d.Sizes.PageBytes
			out.Eta = &eta
		}
		ratio := float64(out.Bot.PageViews) / float64(out.Human.PageViews)
		out.Ratio = &ratio
		out.RatioBand = "healthy"
		if ratio < RatioLow || ratio > RatioHigh {
			out.RatioBand = "review"
		}
	}
	if s, ok := d.sealedDays[day]; ok {
		out.Sealed, out.Head = true, s.Head
		if err := sealedCrawler(ctx, st, day, &out); err != nil {
			return out, nil, fmt.Errorf("dashboard %s: %w", day, err)
		}
	}
	return out, hosts, nil
}

// sealedCrawler draws a sealed day's crawler numbers from its sealed
// records, not from crawl_log as it is now, and notes where the two part.
func sealedCrawler(ctx context.Context, st *store.Store, day string, out *DashboardDay) error {
	sl, err := st.SealedLedger(ctx, day, model.LedgerCrawler)
	if err != nil {
		return err
	}
	var c CrawlerDay
	hosts := map[string]bool{}
	records := make([]recordData, 0, len(sl.Records))
	for _, r := range sl.Records {
		records = append(records, recordData{index: r.Seq, data: []byte(r.Data)})
		var l crawlerLine
		if err := json.Unmarshal([]byte(r.Data), &l); err != nil {
			out.Problem = fmt.Sprintf("%s: crawler record %d is not a ledger record — run zhizhi audit verify", day, r.Seq)
			continue
		}
		if !l.Sent {
			c.NotSent++
			continue
		}
		c.Requests++
		c.Bytes += l.Bytes
		c.BytesSaved += l.BytesSaved
		hosts[l.Host] = true
	}
	c.Hosts = len(hosts)
	c.Errors, c.BreakerTrips = out.Crawler.Errors, out.Crawler.BreakerTrips // not in the records
	out.Crawler = c
	err = checkSources(ctx, st, dayData{day: day, crawler: ledgerData{records: records}}, nil)
	var p *Problem
	if errors.As(err, &p) {
		out.Problem = p.Error()
		return nil
	}
	return err
}
