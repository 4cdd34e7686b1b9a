package crawl

import (
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
