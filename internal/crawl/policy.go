package crawl

import (
	"context"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// Resilience maps a site to its CMS adapter's resilience section (when a
// direct answer is a challenge for the browser tier), for
// fetch.Client.LoadSitePolicies. Template sites have none.
func Resilience(b *config.Bundle) func(model.Site) fetch.Resilience {
	return func(s model.Site) fetch.Resilience {
		if b == nil || s.CMSAdapter == "" {
			return fetch.Resilience{}
		}
		a := b.CMS[s.CMSAdapter]
		if a == nil {
			return fetch.Resilience{}
		}
		return fetch.Resilience{
			EscalateStatus:     a.Resilience.EscalateStatus,
			EscalateSignatures: a.Resilience.EscalateBodySignatures,
			CookieTTL:          time.Duration(a.Resilience.CookieTTLSeconds) * time.Second,
		}
	}
}

// NewClient makes the polite client opts describe, with every site's policy
// from the database (opts.Store) and the resilience rules of b's adapters:
// the client the crawl workers and everything beside them fetch with.
func NewClient(ctx context.Context, opts fetch.ClientOptions, b *config.Bundle) (*fetch.Client, error) {
	c, err := fetch.NewClient(opts)
	if err != nil {
		return nil, err
	}
	if err := c.LoadSitePolicies(ctx, Resilience(b)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
