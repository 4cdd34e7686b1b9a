package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"zhizhi/internal/adapter"
	"zhizhi/internal/config"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// effectiveTemplate is the site template with the target's override merged
// over it: the override stored in the database (admin targets and YAML
// targets alike carry it as parser_override_json).
func (j *job) effectiveTemplate() (*config.Template, error) {
	sf, err := j.siteFile()
	if err != nil {
		return nil, err
	}
	var override *config.Template
	if len(j.target.ParserOverride) > 0 && string(j.target.ParserOverride) != "null" {
		override = &config.Template{}
		if err := json.Unmarshal(j.target.ParserOverride, override); err != nil {
			return nil, fmt.Errorf("parser_override of %s: %w", j.target.TargetCode, err)
		}
	}
	t := sf.Template.Merge(override)
	if t == nil || t.List.IsZero() || t.Detail.IsZero() {
		return nil, fmt.Errorf("site %s has no template (config/sites/*.yaml: template.list and template.detail)", j.site.SiteCode)
	}
	return t, nil
}

func templateParser(tmpl *config.Template) detailParser {
	return func(body []byte, u *url.URL) (*adapter.Detail, error) {
		return adapter.ParseDetail(body, u, tmpl.Detail)
	}
}

// runTemplate walks a template-site target's list pages, by next link or
// URL pattern, recording every article link in the frontier; the walk ends
// at the last page, the page limit, or a page of links settled by an
// earlier finished walk.
func (j *job) runTemplate(ctx context.Context) error {
	tmpl, err := j.effectiveTemplate()
	if err != nil {
		return err
	}
	entry, err := url.Parse(j.target.EntryURL)
	if err != nil || entry.Host == "" {
		return fmt.Errorf("entry_url %q is not an absolute URL", j.target.EntryURL)
	}
	maxPages := tmpl.List.MaxPages
	if maxPages <= 0 {
		maxPages = j.c.maxListPages()
	}
	j.parse = templateParser(tmpl)
	if err := j.startWalk(ctx); err != nil {
		return err
	}
	pageURL := entry.String()
	seen := map[string]bool{}
	for n := 0; ; n++ {
		if pageURL == "" || seen[pageURL] {
			return j.finishWalk(ctx, store.WalkReachedEnd)
		}
		if n >= maxPages {
			return j.finishWalk(ctx, store.WalkReachedLimit)
		}
		if j.c.draining() {
			return ErrInterrupted
		}
		seen[pageURL] = true
		resp, err := j.get(ctx, j.request(model.PurposeList, pageURL))
		if err != nil {
			if n > 0 && resp != nil && resp.Status == 404 {
				return j.finishWalk(ctx, store.WalkReachedEnd) // pattern pagination ran past the last page
			}
			if fetch.IsRobotsDisallowed(err) && n == 0 && !fetch.IsHostStop(err) {
				j.res.Blocked = err.Error()
				return nil
			}
			return fmt.Errorf("list page %d (%s): %w", n+1, pageURL, err)
		}
		j.res.Pages++
		j.c.emit(Event{Target: j.target.TargetCode, Kind: "page"})
		var body []byte
		if tmpl.List.Format == config.ListJSON {
			body, _, err = resp.Text()
		} else {
			body, _, err = resp.HTML()
		}
		if err != nil {
			return fmt.Errorf("list page %s: decode: %w", pageURL, err)
		}
		page, err := adapter.ParseList(body, mustParse(resp.URL), tmpl.List)
		if err != nil {
			return fmt.Errorf("list page %s: %w", pageURL, err)
		}
		if len(page.Items) == 0 {
			if n == 0 {
				return emptyListError(pageURL, tmpl.List, page)
			}
			return j.finishWalk(ctx, store.WalkReachedEnd)
		}
		settled, err := j.discover(ctx, n+1, page.Items)
		if err != nil {
			return err
		}
		if settled {
			return j.finishWalk(ctx, store.WalkReachedKnown) // nothing new beyond this page
		}
		switch {
		case page.Next != "":
			pageURL = page.Next
		case tmpl.List.PageURL != "" && page.PageCount > 0 && n+1 >= page.PageCount:
			pageURL = "" // the page says it is the last: no request for a page that is not there
		case tmpl.List.PageURL != "":
			pageURL, _ = adapter.PageURL(entry, tmpl.List, n+1)
		default:
			pageURL = ""
		}
	}
}

// emptyListError says why a first list page gave no article links.
func emptyListError(pageURL string, l config.ListTemplate, page adapter.ListPage) error {
	if page.Matched == 0 {
		return fmt.Errorf("list page %s: the item selector %q matched nothing (has the list page changed shape?)", pageURL, listSelector(l))
	}
	link := l.Link
	if link == "" {
		link = "a@href"
	}
	return fmt.Errorf("list page %s: the item selector %q matched %d items but the link selector %q found no article link in them (has the list page changed shape?)",
		pageURL, listSelector(l), page.Matched, link)
}

func listSelector(l config.ListTemplate) string {
	if l.Format == config.ListJSON {
		return l.Items
	}
	return l.Item
}

func (c *Crawler) maxListPages() int {
	if c.MaxListPages > 0 {
		return c.MaxListPages
	}
	return 50
}
