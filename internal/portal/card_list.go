package portal

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// pageSize is how many cards a list page shows.
const pageSize = 20

// maxQuery bounds the search text, in characters.
const maxQuery = 100

type listFilter struct {
	Dept, Channel, From, To, Q string
	Page                       int
}

// values is the filter as a query, without the page.
func (f listFilter) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"dept", f.Dept}, {"channel", f.Channel}, {"from", f.From}, {"to", f.To}, {"q", f.Q}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

func (f listFilter) pageURL(n int) string {
	v := f.values()
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

type listData struct {
	Filter         listFilter
	Cards          []model.SummaryCard
	Total          int
	Depts          []store.CardFacet
	Channels       []store.CardFacet
	DeptName       string
	Prev, Next     string
	Pages, PageNum int
	Filtered       bool
}

// cardList is the front page: the newest cards, filtered by department,
// channel and publish date, searched by title and summary.
func (p *portal) cardList(w http.ResponseWriter, r *http.Request) {
	p.record(r, ledger.Hit{Kind: ledger.KindPage})
	q := r.URL.Query()
	f := listFilter{Dept: strings.TrimSpace(q.Get("dept")), Channel: strings.TrimSpace(q.Get("channel")),
		From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")), Q: strings.TrimSpace(q.Get("q"))}
	if utf8.RuneCountInString(f.Q) > maxQuery {
		f.Q = string([]rune(f.Q)[:maxQuery])
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	d := listData{Filter: f, PageNum: f.Page}
	d.Filtered = len(f.values()) > 0
	cq := store.CardQuery{Public: true, Channel: f.Channel, Q: f.Q, Offset: (f.Page - 1) * pageSize, Limit: pageSize}
	var problem string
	if f.Dept != "" {
		id, err := strconv.ParseInt(f.Dept, 10, 64)
		if err != nil || id <= 0 {
			problem = "部门参数无效，请从列表中选择部门。"
		}
		cq.DeptID = &id
	}
	var err error
	if cq.From, err = p.parseDay(f.From); err != nil {
		problem = "起始日期格式不正确，请按“年-月-日”填写，例如 2026-04-23。"
	}
	if cq.To, err = p.parseDay(f.To); err != nil {
		problem = "截止日期格式不正确，请按“年-月-日”填写，例如 2026-04-23。"
	}
	if !cq.To.IsZero() {
		cq.To = cq.To.AddDate(0, 0, 1) // the end day itself is included
	}
	if d.Depts, d.Channels, err = p.store.PortalFacets(r.Context()); err != nil {
		p.serverError(w, r, err)
		return
	}
	for _, dept := range d.Depts {
		if cq.DeptID != nil && dept.ID == *cq.DeptID {
			d.DeptName = dept.Name
		}
	}
	if problem != "" {
		p.render(w, r, http.StatusBadRequest, "list", view{Title: "信息列表", Q: f.Q, Error: problem, Data: d})
		return
	}
	if d.Cards, d.Total, err = p.store.ListCards(r.Context(), cq); err != nil {
		p.serverError(w, r, err)
		return
	}
	d.Pages = (d.Total + pageSize - 1) / pageSize
	if f.Page > 1 {
		d.Prev = f.pageURL(f.Page - 1)
	}
	if f.Page < d.Pages {
		d.Next = f.pageURL(f.Page + 1)
	}
	title := "最新信息"
	if d.Filtered {
		title = "信息检索"
	}
	p.render(w, r, http.StatusOK, "list", view{Title: title, Q: f.Q, Data: d})
}

// parseDay reads a YYYY-MM-DD date as the start of that day in Shanghai;
// "" is no date.
func (p *portal) parseDay(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.ParseInLocation(time.DateOnly, s, p.loc)
}
