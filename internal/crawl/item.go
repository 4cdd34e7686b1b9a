package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/adapter"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// MinContentChars is the shortest body text of a ready article (issue 5).
const MinContentChars = 50

// detailParser reads a detail page.
type detailParser func(body []byte, pageURL *url.URL) (*adapter.Detail, error)

// processItem takes one frontier link to the store and records the
// outcome on its entry: fetched (stored), failed (with the next retry),
// gone or disallowed. Failures are recorded on the result too; only what
// stops the target (host stop, interruption, the store failing) is
// returned, and then the entry is left as it was, due for the next run.
func (j *job) processItem(ctx context.Context, e *store.FrontierEntry, item adapter.ListItem, parse detailParser) error {
	norm, hash, err := extract.URLHash(item.URL)
	if err != nil {
		j.fail("%s: %v", item.URL, err)
		j.count(model.StatusFailed)
		return j.markEntry(ctx, e, store.FrontierMark{State: store.FrontierGone, ErrorClass: classParse, Error: err.Error(), Attempt: true})
	}
	var existing *model.Article
	if item.NativePostID != "" {
		existing, err = j.c.Store.ArticleByNativeID(ctx, j.site.ID, item.NativePostID)
	} else {
		existing, err = j.c.Store.ArticleByURLHash(ctx, hash)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("look up %s: %w", norm, err)
	}
	if errors.Is(err, store.ErrNotFound) {
		existing = nil
	}
	if existing != nil && existing.ID != 0 {
		if existing.Attachments, err = j.c.Store.ArticleAttachments(ctx, existing.ID); err != nil {
			return fmt.Errorf("look up %s: %w", norm, err)
		}
	}
	failed := func(class, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		j.fail("%s: %s", norm, msg)
		j.count(model.StatusFailed)
		return j.markEntry(ctx, e, j.failedMark(e, class, msg, false))
	}

	summary := j.site.Access != model.AccessFull
	req := j.request(model.PurposeDetail, norm)
	// A known, good article is re-fetched only if the site says it
	// changed; a failed one is fetched again in full.
	req.Conditional = existing != nil && existing.Status == model.StatusReady && existing.URLHash == hash
	if req.Conditional && summary {
		// A summary-access article stored before cards existed has no
		// text to make its card from: its head is read again, once.
		has, err := j.c.Store.HasCard(ctx, existing.ID)
		if err != nil {
			return fmt.Errorf("look up %s: %w", norm, err)
		}
		req.Conditional = has
	}
	if summary {
		req.MaxBytes = j.c.summaryHead()
		req.Head = true
	}
	resp, err := j.get(ctx, req)
	if err != nil {
		if isStop(err) {
			return err
		}
		mark := j.fetchFailure(e, resp, err)
		switch mark.State {
		case store.FrontierDisallowed:
			j.res.Skipped++
		default:
			j.fail("%s: %v", norm, err)
			j.count(model.StatusFailed)
		}
		return j.markEntry(ctx, e, mark)
	}
	if resp.NotModified {
		j.count(store.OutcomeUnchanged)
		if existing != nil {
			j.noteNewest(existing.PublishTime)
		}
		return j.markEntry(ctx, e, store.FrontierMark{State: store.FrontierFetched})
	}
	html, _, err := resp.HTML()
	if err != nil {
		return failed(classDecode, "decode: %v", err)
	}
	pageURL := mustParse(resp.URL)
	if resp.URL == "" {
		pageURL = mustParse(norm)
	}
	d, err := parse(html, pageURL)
	if err != nil {
		return failed(classParse, "%v", err)
	}

	a := j.buildArticle(item, norm, hash, d, resp)
	if !summary {
		// Like the save below, storing what was fetched outlives a cancel.
		rawPath, _, err := j.c.Blobs.Put(context.WithoutCancel(ctx), resp.Body)
		if err != nil {
			return fmt.Errorf("store raw html of %s: %w", norm, err)
		}
		a.RawHTMLPath = rawPath
		if a.ContentText != "" {
			textPath, _, err := j.c.Blobs.Put(context.WithoutCancel(ctx), []byte(a.ContentText))
			if err != nil {
				return fmt.Errorf("store text of %s: %w", norm, err)
			}
			a.TextPath = textPath
		}
	} else {
		// Summary access: nothing of the body is kept.
		a.ContentText = ""
	}

	var atts []model.Attachment
	attachmentRetry := false // failed only for an attachment's passing fault
	if !summary {
		var attProblems []string
		var tooLarge, retry string
		atts, attProblems, tooLarge, retry, err = j.attachments(ctx, existing, append(item.Attachments, d.Attachments...))
		if err != nil {
			return err
		}
		if len(attProblems) > 0 {
			// An attachment that could not be taken is named in the
			// article's metadata, so a reader knows one is missing.
			a.MetadataJSON = withMeta(a.MetadataJSON, "attachments_skipped", attProblems)
		}
		if tooLarge != "" && a.Status == model.StatusReady {
			// Over the size limit is not a passing fault: the article is
			// incomplete until a person raises the limit. Its text is
			// kept; RAG reads only ready articles.
			a.Status, a.StatusReason = model.StatusFailed, tooLarge
		}
		if retry != "" && a.Status == model.StatusReady {
			// An article and its attachments are one unit: not ready
			// until every attachment that can be had is stored.
			a.Status, a.StatusReason = model.StatusFailed, retry
			attachmentRetry = true
		}
	}
	a.HasAttachment = len(atts) > 0

	if a.Status == model.StatusReady {
		if a.Card, err = j.card(ctx, a, existing, d.Text); err != nil {
			return fmt.Errorf("card of %s: %w", norm, err)
		}
	}
	if err := ValidateArticle(a, j.c.now()); err != nil {
		// A contract breach is our bug, not the site's: store nothing.
		return failed(classContent, "output contract: %v", err)
	}
	mark := store.FrontierMark{State: store.FrontierFetched}
	if a.Status == model.StatusFailed {
		mark = j.failedMark(e, classContent, a.StatusReason, attachmentRetry)
	}
	var entryID int64
	if e != nil {
		entryID = e.ID
	}
	_, outcome, err := j.c.Store.SaveArticle(context.WithoutCancel(ctx), a, atts, entryID, mark)
	if err != nil {
		if errors.Is(err, store.ErrSummaryContent) || store.ConstraintViolation(err) != "" {
			return failed(classStore, "store: %v", err)
		}
		return fmt.Errorf("store %s: %w", norm, err)
	}
	j.indexCard(a.Card)
	j.noteNewest(a.PublishTime)
	if a.Status == model.StatusFailed {
		j.fail("%s: %s", norm, a.StatusReason)
		j.count(model.StatusFailed)
		return nil
	}
	j.count(outcome)
	return nil
}

func (c *Crawler) summaryHead() int64 {
	if c.SummaryHeadBytes > 0 {
		return c.SummaryHeadBytes
	}
	return 64 << 10
}

// buildArticle assembles the normalized article: fields
// from the page first, the list (or CMS API) where the page says nothing,
// department and channel inherited from the target (§7.2, §7.3).
func (j *job) buildArticle(item adapter.ListItem, norm, hash string, d *adapter.Detail, resp *fetch.Response) *model.Article {
	t := j.target
	a := &model.Article{
		SiteID: j.site.ID, TargetID: t.ID, DeptID: t.DeptID,
		NativePostID: item.NativePostID,
		URL:          norm, URLHash: hash,
		ChannelName: t.ChannelName, ChannelPath: t.ChannelPath,
		ContentCategory: t.ContentCategory, ContentSubcategory: t.ContentSubcategory,
		FetchStrategy: resp.Tier,
		FetchedAt:     j.c.now().UTC(),
		ContentText:   d.Text,
	}
	a.Title = d.Title
	if a.Title == "" {
		a.Title = item.Title
	}
	a.SourceRaw = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(d.Source, "来源："), "来源:"))

	attr := d.Attributes
	if attr == nil {
		attr = extract.ParseAttributes(nil)
	}
	pick := func(field string) string {
		if v := attr.Canonical[field]; v != "" {
			return v
		}
		return item.Fields[field]
	}
	a.IndexNo = pick(extract.FieldIndexNo)
	a.DocNo = pick(extract.FieldDocNo)
	a.Publisher = pick(extract.FieldPublisher)
	a.TopicWords = pick(extract.FieldTopicWords)
	a.OpenCategory = pick(extract.FieldOpenCategory)

	var problems []string
	dateCol := func(field string) string {
		raw := pick(field)
		if raw == "" {
			return ""
		}
		v, err := extract.DateOnly(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q does not parse", field, raw))
			return ""
		}
		return v
	}
	a.PublishDate = dateCol(extract.FieldPublishDate)
	a.EffectiveDate = dateCol(extract.FieldEffectiveDate)

	// publish_time: the page's own time, else the attribute block's date,
	// else the list's date; all in UTC.
	var dateTexts []string
	for _, raw := range []string{d.PublishTimeRaw, attr.Canonical[extract.FieldPublishDate], item.Date, item.Fields["publish_time"]} {
		if raw == "" {
			continue
		}
		dateTexts = append(dateTexts, raw)
		if tm, _, err := extract.ParseDate(raw); err == nil {
			tm = tm.UTC()
			a.PublishTime = &tm
			break
		}
	}
	if a.PublishTime == nil && len(dateTexts) > 0 {
		problems = append(problems, fmt.Sprintf("publish time %q does not parse", dateTexts[0]))
	}

	meta := map[string]any{"raw": attr.Raw}
	if len(attr.Order) > 0 {
		meta["labels"] = attr.Order
	}
	if len(item.Fields) > 0 {
		meta["list"] = item.Fields
	}
	if item.Abolished {
		meta["abolished"] = true
	}
	if resp.Truncated {
		meta["head_read_bytes"] = len(resp.Body)
	}
	if note := resp.CharsetNote(); note != "" {
		meta["charset_note"] = note
	}
	if len(d.Missing) > 0 {
		meta["selectors_missed"] = d.Missing
	}
	a.MetadataJSON = marshal(meta)

	summary := j.site.Access != model.AccessFull
	switch {
	case a.Title == "":
		a.Status, a.StatusReason = model.StatusFailed, "no title: the title selector matched nothing"
	case !summary && utf8.RuneCountInString(a.ContentText) < MinContentChars:
		a.Status, a.StatusReason = model.StatusFailed,
			fmt.Sprintf("body text has %d characters, fewer than %d (body selector missed?)", utf8.RuneCountInString(a.ContentText), MinContentChars)
	case a.PublishTime == nil && len(dateTexts) > 0:
		a.Status, a.StatusReason = model.StatusFailed, strings.Join(problems, "; ")
	default:
		a.Status = model.StatusReady
		if len(problems) > 0 {
			a.StatusReason = strings.Join(problems, "; ")
		}
	}
	if a.PublishTime != nil && a.PublishTime.After(j.c.now().Add(48*time.Hour)) {
		a.StatusReason = strings.TrimPrefix(a.StatusReason+"; publish time is in the future", "; ")
	}
	return a
}

// attachments downloads the attachments of a full-access article under the
// fetcher's limits. One already stored for this article under the same URL
// is kept as it is.
// problems name those that could not be taken; tooLarge says why when one
// was over the size limit.
// retry says why when one failed for a passing reason (network, 5xx, 429):
// the article is then not ready until a later attempt brings it.
func (j *job) attachments(ctx context.Context, existing *model.Article, refs []adapter.AttachmentRef) (out []model.Attachment, problems []string, tooLarge, retry string, err error) {
	have := map[string]model.Attachment{}
	if existing != nil {
		for _, a := range existing.Attachments {
			have[a.URL] = a
		}
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		norm, err := extract.NormalizeURL(ref.URL)
		if err != nil || seen[norm] {
			continue
		}
		seen[norm] = true
		if a, ok := have[norm]; ok {
			a.ID = 0
			out = append(out, a)
			continue
		}
		req := j.request(model.PurposeAttachment, norm)
		req.MaxBytes = j.c.maxAttachment()
		resp, err := j.get(ctx, req)
		if err != nil {
			if isStop(err) {
				return nil, nil, "", "", err
			}
			problem := fmt.Sprintf("%s: %v", norm, err)
			var big *fetch.ErrTooLarge
			switch {
			case errors.As(err, &big):
				if tooLarge == "" {
					tooLarge = fmt.Sprintf("attachment %s is larger than the %d-byte limit", norm, big.Limit)
				}
			case fetch.IsRobotsDisallowed(err), resp != nil && resp.Status >= 400 && resp.Status < 500 && resp.Status != 429:
				// A dead link or a forbidden file: the article is complete
				// without it, and says so in its metadata.
			default:
				if retry == "" {
					retry = fmt.Sprintf("attachment %s could not be downloaded (%v); it is tried again later", norm, err)
				}
			}
			if !fetch.IsRobotsDisallowed(err) {
				j.fail("attachment %s", problem)
			}
			problems = append(problems, problem)
			continue
		}
		path, sum, err := j.c.Blobs.Put(context.WithoutCancel(ctx), resp.Body)
		if err != nil {
			return nil, nil, "", "", fmt.Errorf("store attachment %s: %w", norm, err)
		}
		name := ref.Name
		if name == "" {
			name = norm[strings.LastIndexByte(norm, '/')+1:]
		}
		att := model.Attachment{
			URL: norm, FileName: name, FileExt: ref.Ext, SizeBytes: int64(len(resp.Body)),
			FilePath: path, FileHash: sum, DownloadedAt: j.c.now().UTC(),
		}
		j.readAttachmentText(ctx, &att, resp.Body)
		out = append(out, att)
	}
	return out, problems, tooLarge, retry, nil
}

// withMeta adds key to a metadata_json object.
func withMeta(raw []byte, key string, v any) []byte {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	m[key] = v
	return marshal(m)
}

func (c *Crawler) maxAttachment() int64 {
	if c.MaxAttachmentBytes > 0 {
		return c.MaxAttachmentBytes
	}
	return 50 << 20
}
