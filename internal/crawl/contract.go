package crawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"zhizhi/internal/extract"
	"zhizhi/internal/model"
)

var (
	hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)
	isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// ValidateArticle checks the normalized article output contract
// that every adapter and tier must meet before an article is stored: ids
// set, URL normalized and hashed, status and strategy from their sets,
// dates in their formats, publish_time sane, attributes in metadata_json.raw.
func ValidateArticle(a *model.Article, now time.Time) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if a.SiteID <= 0 || a.TargetID <= 0 {
		bad("site_id and target_id must be set")
	}
	norm, hash, err := extract.URLHash(a.URL)
	switch {
	case err != nil:
		bad("url: %v", err)
	case norm != a.URL:
		bad("url %q is not normalized (%q)", a.URL, norm)
	case a.URLHash != hash:
		bad("url_hash does not match the url")
	}
	if !hexHash.MatchString(a.URLHash) {
		bad("url_hash must be 64 lower-case hex digits")
	}
	if !model.Contains([]string{model.StatusRaw, model.StatusReady, model.StatusFailed}, a.Status) {
		bad("status %q is not raw, ready or failed", a.Status)
	}
	if a.Status == model.StatusFailed && a.StatusReason == "" {
		bad("a failed article needs its reason")
	}
	if a.Status == model.StatusReady && a.Title == "" {
		bad("a ready article needs a title")
	}
	if !model.Contains([]string{model.StrategyDirect, model.StrategyBrowser}, a.FetchStrategy) {
		bad("fetch_strategy %q is not httpx or playwright", a.FetchStrategy)
	}
	if a.PublishTime != nil {
		if a.PublishTime.Location() != time.UTC {
			bad("publish_time must be UTC")
		}
		if a.PublishTime.Year() < 1949 || a.PublishTime.After(now.Add(48*time.Hour)) {
			bad("publish_time %s is not plausible", a.PublishTime.Format(time.RFC3339))
		}
	}
	for name, d := range map[string]string{"publish_date": a.PublishDate, "effective_date": a.EffectiveDate} {
		if d != "" && !isoDate.MatchString(d) {
			bad("%s %q is not YYYY-MM-DD", name, d)
		}
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(a.MetadataJSON, &meta); err != nil {
		bad("metadata_json is not a JSON object: %v", err)
	} else if _, ok := meta["raw"]; !ok {
		bad("metadata_json has no raw attribute dictionary")
	}
	if a.FetchedAt.IsZero() {
		bad("fetched_at must be set")
	}
	return errors.Join(errs...)
}
