package api

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

type articlePage struct {
	Items []struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
	} `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

func (p articlePage) titles() []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Title)
	}
	return out
}

// TestArticleFilters: each filter RAG users search with finds exactly the
// articles it names, on both databases.
func TestArticleFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		q := url.QueryEscape
		cases := []struct {
			name  string
			query string
			want  []string // titles, newest first
		}{
			{"no filter", "", []string{"完成率公告", "国务院文件", "省政府文件", "市政府通知", "发改局工作动态", "发改局规范性文件"}},
			{"local department", "dept_id=37", []string{"发改局工作动态", "发改局规范性文件"}},
			{"department without articles", "dept_id=38", nil},
			{"channel path contains", "channel_path=" + q("政策文件"), []string{"国务院文件", "市政府通知", "发改局规范性文件"}},
			{"channel path taken literally", "channel_path=" + q("%_"), []string{"完成率公告"}},
			{"publisher exactly", "publisher=" + q("清远市发展和改革局"), []string{"发改局工作动态", "发改局规范性文件"}},
			{"publisher is not a substring match", "publisher=" + q("清远市"), nil},
			{"topic word", "topic_words=" + q("营商环境"), []string{"国务院文件", "省政府文件"}},
			{"document number", "doc_no=" + q("清府〔2026〕3号"), []string{"市政府通知"}},
			// The city-level article has no department either, but its site
			// is local: only the reference sites count as external.
			{"external reference", "external_ref=true", []string{"国务院文件", "省政府文件"}},
			{"status", "status=failed", []string{"国务院文件"}},
			{"date range, both ends included", "date_from=2026-03-01&date_to=2026-04-10", []string{"发改局工作动态", "发改局规范性文件"}},
			{"date from", "date_from=2026-04-11", []string{"市政府通知"}},
			{"date to", "date_to=2026-01-05", []string{"国务院文件"}},
			{"site", idPath("site_id=%d", w.provSite), []string{"省政府文件"}},
			{"target", idPath("target_id=%d", w.tgtCity), []string{"完成率公告", "市政府通知"}},
			{"filters combine", "dept_id=37&status=ready", []string{"发改局规范性文件"}},
			{"external and status", "external_ref=true&status=ready", []string{"省政府文件"}},
		}
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				a.t = t
				var p articlePage
				a.expect(get("/api/v1/articles?"+c.query, tokViewer), 200).decode(t, &p)
				if got := p.titles(); !slices.Equal(got, c.want) {
					t.Errorf("?%s: %q, want %q", c.query, got, c.want)
				}
				if p.NextCursor != nil {
					t.Errorf("?%s: next_cursor %q on a page that is not full", c.query, *p.NextCursor)
				}
			})
		}
	})
}

// TestArticleFilterRefusals: filters that cannot mean what the caller
// thinks are refused with the reason, not answered with everything.
func TestArticleFilterRefusals(t *testing.T) {
	st := storetest.SQLite(t)
	buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	for _, query := range []string{
		"dept=37",                                 // misspelt filter
		"dept_id=37&dept_id=38",                   // given twice
		"dept_id=0",                               // not an id
		"dept_id=37&external_ref=true",            // contradiction
		"external_ref=false",                      // only true filters
		"date_from=2026-04-10&date_to=2026-03-01", // reversed range
		"date_from=20260301",                      // not YYYY-MM-DD
		"status=published",                        // unknown status
		"limit=0", "limit=501", "limit=ten",
		"cursor=bm9wZQ", // not a cursor of ours
		"cursor=" + encodePageCursor(crawlLogCursor, 5), // a crawl log cursor
		"channel_path=" + strings.Repeat("长", 201),
	} {
		e := a.expect(get("/api/v1/articles?"+query, tokViewer), 400).errorBody(t)
		if e.Error != "invalid_request" || e.Detail == "" {
			t.Errorf("?%.40s: %+v", query, e)
		}
	}
}

// TestArticlePagingIsStable: following next_cursor visits every article
// once, in order, even when articles are stored between two pages.
func TestArticlePagingIsStable(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := buildWorld(t, st)
		a := newAPITest(t, st, fixedNow)
		before := map[string]bool{}
		for title := range w.articles {
			before[title] = true
		}
		var seen []string
		cursor := ""
		pages := 0
		for {
			target := "/api/v1/articles?limit=2"
			if cursor != "" {
				target += "&cursor=" + cursor
			}
			var p articlePage
			a.expect(get(target, tokViewer), 200).decode(t, &p)
			pages++
			seen = append(seen, p.titles()...)
			if pages == 1 {
				// New articles arrive, and an article of the first page is
				// updated, while the reader is between pages.
				for _, title := range []string{"新到文章一", "新到文章二"} {
					m := &model.Article{SiteID: w.cmsSite, TargetID: w.tgtFGW, DeptID: ptr(37), URL: "https://example.gov.test/new/" + title,
						Title: title, Status: model.StatusReady, FetchedAt: w.now}
					if _, _, err := st.UpsertArticle(context.Background(), m); err != nil {
						t.Fatal(err)
					}
				}
				upd := &model.Article{SiteID: w.cmsSite, TargetID: w.tgtCity, URL: "https://example.gov.test/a/f.html",
					Title: "完成率公告", ChannelPath: "统计/100%_完成", Publisher: "清远市人民政府", TopicWords: "统计（更新）",
					Status: model.StatusReady, ContentText: "正文：完成率公告", FetchedAt: w.now}
				if _, outcome, err := st.UpsertArticle(context.Background(), upd); err != nil || outcome != store.OutcomeUpdated {
					t.Fatalf("update: %s %v", outcome, err)
				}
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
			if pages > 10 {
				t.Fatal("paging does not end")
			}
		}
		want := []string{"完成率公告", "国务院文件", "省政府文件", "市政府通知", "发改局工作动态", "发改局规范性文件"}
		if !slices.Equal(seen, want) {
			t.Errorf("pages visited %q, want each article present at the start once, newest first: %q", seen, want)
		}
		if pages != 3 {
			t.Errorf("%d pages of 2 for 6 articles, want 3", pages)
		}
		// The new articles are on the first page of a fresh read.
		var p articlePage
		a.expect(get("/api/v1/articles?limit=2", tokViewer), 200).decode(t, &p)
		if got := p.titles(); !slices.Equal(got, []string{"新到文章二", "新到文章一"}) {
			t.Errorf("fresh first page %q, want the two new articles", got)
		}
	})
}

// TestArticleUnexported: the list of articles RAG has not pulled shrinks
// as the export marks them.
func TestArticleUnexported(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	if err := st.MarkExported(context.Background(), []int64{w.articles["发改局规范性文件"], w.articles["省政府文件"]}, fixedNow); err != nil {
		t.Fatal(err)
	}
	var p articlePage
	a.expect(get("/api/v1/articles/unexported", tokViewer), 200).decode(t, &p)
	if got, want := p.titles(), []string{"完成率公告", "国务院文件", "市政府通知", "发改局工作动态"}; !slices.Equal(got, want) {
		t.Errorf("unexported %q, want %q", got, want)
	}
	a.expect(get("/api/v1/articles/unexported?dept_id=37", tokViewer), 200).decode(t, &p)
	if got, want := p.titles(), []string{"发改局工作动态"}; !slices.Equal(got, want) {
		t.Errorf("unexported of department 37: %q, want %q", got, want)
	}
}

// TestArticleDetail: the detail carries the text, the public attributes
// and the attachments.
func TestArticleDetail(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	var d struct {
		Title       string `json:"title"`
		ContentText string `json:"content_text"`
		DocNo       string `json:"doc_no"`
		DeptID      *int64 `json:"dept_id"`
		Attachments []struct {
			FileName string `json:"file_name"`
			Stored   bool   `json:"stored"`
		} `json:"attachments"`
	}
	a.expect(get(idPath("/api/v1/articles/%d", w.articles["发改局规范性文件"]), tokViewer), 200).decode(t, &d)
	if d.ContentText != "正文：发改局规范性文件" || d.DocNo != "清发改〔2026〕1号" || d.DeptID == nil || *d.DeptID != 37 {
		t.Errorf("detail %+v", d)
	}
	if len(d.Attachments) != 1 || d.Attachments[0].FileName != "附件.pdf" || d.Attachments[0].Stored {
		t.Errorf("attachments %+v, want the one listed, not stored", d.Attachments)
	}
}
