package corpus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"zhizhi/internal/charset"
	"zhizhi/internal/extract"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// ErrNotCopyable is an acquisition result the corpus may not copy: its
// host is not a configured full-access site (a site nobody configured is
// summary-only), or it is not a page.
var ErrNotCopyable = errors.New("this acquisition result may not be copied into the corpus")

// IntakeFetch copies the acquisition API's stored answer for rawURL (the
// last /v1/fetch or /v1/render of it) into the corpus as actor, like an
// article: a snapshot of the exchange and the page's main text, a work
// (or a new revision of the work of that address), QA, rights,
// candidates and provenance. Only HTML pages of configured full-access
// sites are copied: the corpus never holds more of a site than the
// crawler may keep.
func (c *Service) IntakeFetch(ctx context.Context, rawURL, actor string) (*IntakeResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.intakeFetch(ctx, rawURL, actor)
		if errors.Is(err, store.ErrCorpusRace) && attempt < 3 {
			continue
		}
		return res, err
	}
}

func (c *Service) intakeFetch(ctx context.Context, rawURL, actor string) (*IntakeResult, error) {
	snap, body, err := c.Store.FetchSnapshot(ctx, rawURL)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no acquisition result is stored for %s: fetch it with the acquisition API first", rawURL)
	}
	if err != nil {
		return nil, err
	}
	if snap.Status < 200 || snap.Status > 299 {
		return nil, fmt.Errorf("%s answered HTTP %d: %w", rawURL, snap.Status, ErrNotCopyable)
	}
	if !strings.Contains(strings.ToLower(snap.ContentType), "html") {
		return nil, fmt.Errorf("%s is %s, not an HTML page: %w", rawURL, snap.ContentType, ErrNotCopyable)
	}
	final := snap.FinalURL
	if final == "" {
		final = snap.URL
	}
	u, err := url.Parse(final)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	site, err := c.siteOfHost(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	if site == nil || site.Access != model.AccessFull {
		return nil, fmt.Errorf("%s is not a page of a configured full-access site: %w", u.Hostname(), ErrNotCopyable)
	}
	html, _, err := charset.DecodeHTML(body, snap.ContentType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	page, err := extract.Generic(html, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	a := &model.Article{URL: final, SiteID: site.ID, Title: page.Title, ContentText: page.Text, FetchedAt: snap.FetchedAt,
		IndexNo: page.Canonical[extract.FieldIndexNo], DocNo: page.Canonical[extract.FieldDocNo],
		Publisher: page.Canonical[extract.FieldPublisher]}
	if d, err := extract.DateOnly(page.Canonical[extract.FieldPublishDate]); err == nil {
		a.PublishDate = d
	} else if page.PublishTime != nil {
		a.PublishDate = page.PublishTime.In(c.localNow().Location()).Format("2006-01-02")
	}
	provider := "direct"
	if snap.Tier == "browser" || snap.Tier == "playwright" {
		provider = "browser"
	}
	return c.take(ctx, &source{a: a, site: site, raw: body, text: page.Text, provider: provider, origin: "获取结果",
		aliases: []string{urlAlias(final)}, status: snap.Status, contentType: snap.ContentType}, actor)
}

// siteOfHost returns the configured site whose base URL has host, nil
// when none does.
func (c *Service) siteOfHost(ctx context.Context, host string) (*model.Site, error) {
	sites, err := c.Store.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	for i := range sites {
		if b, err := url.Parse(sites[i].BaseURL); err == nil && strings.EqualFold(b.Hostname(), host) {
			return &sites[i], nil
		}
	}
	return nil, nil
}
