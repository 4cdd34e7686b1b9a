package crawl

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/adapter"
	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// Validation is the dry-run report: does the template
// really read this column? Only the requests are recorded (crawl_log, and
// the host's politeness state any fetch keeps); no article, attachment,
// url_state, probe or column registry row is written.
type Validation struct {
	Site           string            `json:"site"`
	Entry          string            `json:"entry_url"`
	Sample         string            `json:"sample_url"`
	ListItems      int               `json:"list_items"`
	ListFirst      []string          `json:"list_first,omitempty"` // a few item titles
	NextPage       string            `json:"next_page,omitempty"`
	Title          string            `json:"title"`
	PublishTime    string            `json:"publish_time,omitempty"`
	ContentChars   int               `json:"content_chars"`
	ContentHead    string            `json:"content_head,omitempty"`
	Attributes     map[string]string `json:"attributes"`
	Canonical      map[string]string `json:"canonical"`
	Attachments    []string          `json:"attachments,omitempty"`
	SelectorsMiss  []string          `json:"selectors_missed,omitempty"`
	Problems       []string          `json:"problems,omitempty"`
	Green          bool              `json:"green"`
	FetchStrategy  string            `json:"fetch_strategy,omitempty"`
	SampleFromList bool              `json:"sample_from_list,omitempty"`
	Said           []string          `json:"-"` // each of Problems in the console's words, same order
}

// Validate fetches the entry (list) page and one sample article politely and
// reports what the site's parser finds. It is green only when the list
// selectors hit, the title is non-empty and the body has at least
// MinContentChars characters. sample may be empty: the first list item is
// used.
func (c *Crawler) Validate(ctx context.Context, site *model.Site, target *model.Target, entry, sample string) (*Validation, error) {
	v := &Validation{Site: site.SiteCode, Entry: entry, Sample: sample, Attributes: map[string]string{}, Canonical: map[string]string{}}
	j := &job{c: c, site: site, res: &Result{}, dryRun: true}
	if target != nil {
		j.target = *target
	}
	var (
		items  []adapter.ListItem
		parse  detailParser
		listOK bool
	)
	if site.CMSAdapter != "" {
		a := c.Bundle.CMS[site.CMSAdapter]
		if a == nil {
			return nil, fmt.Errorf("adapter %q is not configured", site.CMSAdapter)
		}
		parse = func(b []byte, u *url.URL) (*adapter.Detail, error) {
			return adapter.ParseDetail(b, u, a.Detail.DetailTemplate)
		}
		if target != nil && target.SiteDepartmentID != nil && target.ColumnID != "" {
			got, err := j.gkmlptFirstPage(ctx, a)
			if err == nil && len(got) == 0 {
				err = fmt.Errorf("list API: column %s returned no articles", target.ColumnID)
			}
			if err != nil {
				v.problem(err.Error(), fetch.Explain("栏目列表", err))
			} else {
				items, listOK = got, true
			}
		} else {
			v.problem("a gkmlpt site is validated per target: use --target CODE", "gkmlpt 站点按采集目标逐个试运行，请选择一个目标")
		}
	} else {
		tmpl, err := j.effectiveTemplate()
		if err != nil {
			return nil, err
		}
		parse = func(b []byte, u *url.URL) (*adapter.Detail, error) { return adapter.ParseDetail(b, u, tmpl.Detail) }
		if entry != "" {
			resp, err := j.get(ctx, j.request(model.PurposeProbe, entry))
			if err != nil {
				v.problem("list page: "+err.Error(), fetch.Explain("列表页", err))
			} else {
				var body []byte
				if tmpl.List.Format == config.ListJSON {
					body, _, err = resp.Text()
				} else {
					body, _, err = resp.HTML()
				}
				var page adapter.ListPage
				if err == nil {
					page, err = adapter.ParseList(body, mustParse(resp.URL), tmpl.List)
					items, v.NextPage = page.Items, page.Next
				}
				if err != nil {
					v.problem("list page: "+err.Error(), "列表页读不出条目："+err.Error())
				}
				listOK = len(items) > 0
				if !listOK && err == nil {
					v.problem(emptyListError(entry, tmpl.List, page).Error(), "列表页上没有找到条目：请检查列表选择器是否与页面相符")
				}
			}
		}
	}
	v.ListItems = len(items)
	for i, it := range items {
		if i == 3 {
			break
		}
		v.ListFirst = append(v.ListFirst, it.Title)
	}
	if sample == "" && len(items) > 0 {
		sample, v.SampleFromList = items[0].URL, true
		v.Sample = sample
	}
	if sample == "" {
		v.problem("no sample article: give --sample URL", "没有样例文章：请填写样例文章网址")
		return v, nil
	}
	resp, err := j.get(ctx, j.request(model.PurposeProbe, sample))
	if err != nil {
		v.problem("sample page: "+err.Error(), fetch.Explain("样例文章", err))
		return v, nil
	}
	v.FetchStrategy = resp.Tier
	html, _, err := resp.HTML()
	if err != nil {
		v.problem("sample page: "+err.Error(), "样例文章无法解析："+err.Error())
		return v, nil
	}
	d, err := parse(html, mustParse(resp.URL))
	if err != nil {
		v.problem("sample page: "+err.Error(), "样例文章无法解析："+err.Error())
		return v, nil
	}
	v.Title = d.Title
	if d.PublishTime != nil {
		v.PublishTime = d.PublishTime.Format("2006-01-02T15:04:05Z07:00")
	}
	v.ContentChars = utf8.RuneCountInString(d.Text)
	v.ContentHead = truncateRunes(d.Text, 80)
	if d.Attributes != nil {
		v.Attributes = d.Attributes.Raw
		v.Canonical = d.Attributes.Canonical
	}
	for _, a := range d.Attachments {
		v.Attachments = append(v.Attachments, a.URL)
	}
	v.SelectorsMiss = d.Missing
	if v.Title == "" {
		v.problem("the title selector found no title", "标题选择器没有找到标题")
	}
	if v.ContentChars < MinContentChars {
		v.problem(fmt.Sprintf("the body has %d characters, fewer than %d", v.ContentChars, MinContentChars),
			fmt.Sprintf("正文只有 %d 字，少于 %d 字", v.ContentChars, MinContentChars))
	}
	v.Green = (listOK || entry == "") && v.Title != "" && v.ContentChars >= MinContentChars
	if entry == "" && site.CMSAdapter == "" {
		v.Green = false
		v.problem("no entry URL: the list selectors were not checked", "没有列表页网址：列表选择器未经检查")
	}
	return v, nil
}

// problem records what went wrong, for the command line (en) and in the
// console's words (zh).
func (v *Validation) problem(en, zh string) {
	v.Problems = append(v.Problems, en)
	v.Said = append(v.Said, zh)
}

// PreviewColumn reads the newest page of a CMS column's article list, as a
// crawl of target t would (the department's index, then the list API's
// first page, both politely, logged as probes), and stores nothing: the
// console shows it before anyone subscribes to the column.
func (c *Crawler) PreviewColumn(ctx context.Context, site *model.Site, t *model.Target) ([]adapter.ListItem, error) {
	a := c.Bundle.CMS[site.CMSAdapter]
	if a == nil {
		return nil, fmt.Errorf("adapter %q is not configured", site.CMSAdapter)
	}
	if t.SiteDepartmentID == nil || t.ColumnID == "" {
		return nil, fmt.Errorf("target %s names no department and column", t.TargetCode)
	}
	j := &job{c: c, site: site, target: *t, res: &Result{}, dryRun: true}
	return j.gkmlptFirstPage(ctx, a)
}

// gkmlptFirstPage reads the index and the first list API page of the
// job's target; a column with no articles is an empty page, not an error.
func (j *job) gkmlptFirstPage(ctx context.Context, a *config.Adapter) ([]adapter.ListItem, error) {
	dept, err := j.c.Store.SiteDepartmentByID(ctx, *j.target.SiteDepartmentID)
	if err != nil {
		return nil, err
	}
	idx, err := j.gkmlptIndex(ctx, a, dept)
	if err != nil {
		return nil, err
	}
	u := config.ExpandURL(a.List.URL, map[string]string{
		"base_url": strings.TrimRight(j.site.BaseURL, "/"), "dept_path": dept.DeptPath,
		"column_id": j.target.ColumnID, "sid": idx.SID, "page": fmt.Sprint(a.List.FirstPage),
	})
	resp, err := j.get(ctx, j.request(model.PurposeProbe, u))
	if err != nil {
		return nil, fmt.Errorf("list API: %w", err)
	}
	body, _, err := resp.Text()
	if err != nil {
		return nil, err
	}
	lp, _, err := adapter.ParseGkmlptList(body, mustParse(resp.URL), a.List)
	if err != nil {
		return nil, err
	}
	return lp.Items, nil
}

func truncateRunes(s string, n int) string {
	s = extract.CleanText(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
