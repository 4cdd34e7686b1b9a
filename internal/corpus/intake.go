package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"zhizhi/internal/corpus/warc"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/summary"
)

// nearDistance is the largest simhash distance, of 64 bits, at which two
// works that name the same document are near-duplicate candidates.
const nearDistance = 3

// IntakeResult is what one intake did.
type IntakeResult struct {
	WorkID      string
	Rev         int
	NewWork     bool
	NewRevision bool // false: the corpus held this content already
	NewSnapshot bool
	SnapshotID  string
	QA          []string // failed checks, in Chinese
	Candidates  int
}

// ErrNotReady is an intake of an article that is not ready (raw or
// failed): there is nothing trustworthy to copy.
var ErrNotReady = errors.New("only ready articles enter the corpus")

// IntakeArticle copies article id into the corpus as actor ("user:wang",
// "rule:3", "cli:root"): a snapshot of its exchange and text, a new work
// or a new revision of its work, QA, rights, duplicate candidates and the
// provenance of each step. The same content twice changes nothing.
func (c *Service) IntakeArticle(ctx context.Context, id int64, actor string) (*IntakeResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.intakeArticle(ctx, id, actor)
		if errors.Is(err, store.ErrCorpusRace) && attempt < 3 {
			continue
		}
		return res, err
	}
}

func (c *Service) intakeArticle(ctx context.Context, id int64, actor string) (*IntakeResult, error) {
	a, err := c.Store.ArticleByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.Status != model.StatusReady {
		return nil, fmt.Errorf("article %d is %s: %w", id, a.Status, ErrNotReady)
	}
	site, err := c.Store.SiteByID(ctx, a.SiteID)
	if err != nil {
		return nil, err
	}
	card, err := c.Store.CardByArticle(ctx, a.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	// What the crawler was allowed to keep: a full-access site's page and
	// body text; a summary site's card, never more.
	src := &source{a: a, site: site, card: card, provider: "direct", origin: fmt.Sprintf("文章 #%d", a.ID),
		aliases: []string{articleAlias(a.ID), urlAlias(a.URL)}}
	if a.FetchStrategy == "playwright" {
		src.provider = "browser"
	}
	if site.Access == model.AccessFull {
		if a.RawHTMLPath != "" {
			if src.raw, err = c.readBlob(ctx, a.RawHTMLPath); err != nil {
				return nil, fmt.Errorf("article %d raw page: %w", id, err)
			}
		}
		src.text = a.ContentText
	} else if card != nil {
		src.text = card.Summary
	}
	return c.take(ctx, src, actor)
}

// source is what one intake copies: an article of the crawler's, or an
// acquisition result made to look like one (a.ID 0).
type source struct {
	a        *model.Article
	site     *model.Site
	card     *model.SummaryCard
	raw      []byte
	text     string
	provider string   // direct | browser
	origin   string   // for the provenance: "文章 #12", "获取结果"
	aliases  []string // the first one finds the work
	// status and contentType of the stored answer, when known (an
	// acquisition result keeps them; the crawler keeps a page's as 200
	// text/html).
	status      int
	contentType string
}

// take is the intake of src: the snapshot, the work or its new revision,
// QA, rights, candidates and the provenance, in one transaction.
func (c *Service) take(ctx context.Context, src *source, actor string) (*IntakeResult, error) {
	a, site, card := src.a, src.site, src.card
	raw, text := src.raw, src.text
	var err error
	text = Normalize(text)
	rawSHA, textSHA := sha(raw), sha([]byte(text))

	res := &IntakeResult{}
	in := &store.CorpusIntake{}
	var work *store.CorpusWork
	err = store.ErrNotFound
	for _, al := range src.aliases {
		if work, err = c.Store.CorpusWorkByAlias(ctx, al); !errors.Is(err, store.ErrNotFound) {
			break
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		work = &store.CorpusWork{ID: newWorkID(), SourceURL: a.URL, SiteID: &site.ID,
			Status: store.WorkActive, Review: store.ReviewNone}
		if a.ID != 0 {
			work.ArticleID = &a.ID
		}
		in.NewWork, res.NewWork = true, true
	case err != nil:
		return nil, err
	}
	in.Work = work
	in.Aliases = src.aliases
	res.WorkID = work.ID
	if !in.NewWork && work.CurrentRev > 0 {
		cur, err := c.Store.CorpusRevision(ctx, work.ID, work.CurrentRev)
		if err != nil {
			return nil, err
		}
		if cur.TextSHA256 == textSHA {
			if n, err := c.Store.CorpusSnapshot(ctx, cur.SnapshotID); err == nil && n.RawSHA256 == rawSHA {
				res.Rev, res.SnapshotID = cur.Rev, cur.SnapshotID
				return res, nil // held already: nothing to do twice
			}
		}
	}

	snap, err := c.Store.CorpusSnapshotByContent(ctx, rawSHA, textSHA)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if snap, err = c.makeSnapshot(ctx, src, rawSHA, textSHA); err != nil {
			return nil, err
		}
		in.Snapshot, res.NewSnapshot = snap, true
	case err != nil:
		return nil, err
	}
	res.SnapshotID = snap.ID

	attrs, err := c.attrs(ctx, a)
	if err != nil {
		return nil, err
	}
	ab, _ := json.Marshal(attrs)
	grade := ""
	if card != nil {
		grade = card.Grade
	}
	fails := CheckQA(QAInput{Title: a.Title, Text: text, Access: site.Access, PublishDate: a.PublishDate,
		Publisher: a.Publisher, Source: a.SourceRaw, IndexNo: a.IndexNo, CMSAdapter: site.CMSAdapter != "",
		CardGrade: grade, Now: c.now()})
	qa, qb := "pass", []byte("[]")
	if len(fails) > 0 {
		qa = "fail"
		qb, _ = json.Marshal(fails)
	}
	res.QA = fails
	rev := &store.CorpusRevision{Rev: work.CurrentRev + 1, SnapshotID: snap.ID, TextSHA256: textSHA,
		Simhash: summary.Simhash(text), Title: strings.TrimSpace(a.Title), DocNo: strings.TrimSpace(a.DocNo),
		Publisher: strings.TrimSpace(a.Publisher), Attrs: ab, Chars: utf8.RuneCountInString(text), QA: qa, QAProblems: qb}
	in.Revision = rev
	res.Rev, res.NewRevision = rev.Rev, true

	cands, err := c.candidates(ctx, work.ID, rev)
	if err != nil {
		return nil, err
	}
	in.Candidates = cands
	res.Candidates = len(cands)
	if len(cands) > 0 && work.Review != store.ReviewRejected {
		work.Review = store.ReviewPending
	}

	ev := func(kind, detail, evidence string) {
		in.Events = append(in.Events, store.CorpusEvent{WorkID: work.ID, Rev: rev.Rev, Kind: kind, Actor: actor,
			Detail: detail, Evidence: evidence})
	}
	evidence := "snapshot:" + snap.ID
	if snap.CrawlLogID != nil {
		evidence = fmt.Sprintf("crawl_log:%d snapshot:%s", *snap.CrawlLogID, snap.ID)
	}
	what := "新作品"
	if !in.NewWork {
		what = fmt.Sprintf("新修订（第 %d 版）", rev.Rev)
	}
	ev("intake", fmt.Sprintf("摄取%s（%s）：%s", src.origin, site.SiteName, what), evidence)
	ev("normalize", fmt.Sprintf("规范化正文 %d 字（NFC、统一换行）", rev.Chars), "text:"+textSHA)
	if qa == "pass" {
		ev("qa", "质量检查通过", "")
	} else {
		ev("qa", "质量检查未通过："+strings.Join(fails, "；"), "")
	}
	ev("rights", "来源权利："+rightsName(site.CorpusRights)+"；访问方式："+accessName(site.Access), "site:"+site.SiteCode)
	for _, k := range cands {
		other := k.WorkA
		if other == work.ID {
			other = k.WorkB
		}
		ev("candidate", fmt.Sprintf("发现重复候选（%s）：%s", candidateName(k.Kind), other), "")
	}
	if err := c.Store.SaveCorpusIntake(ctx, in); err != nil {
		return nil, err
	}
	return res, nil
}

func articleAlias(id int64) string { return "article:" + strconv.FormatInt(id, 10) }
func urlAlias(u string) string     { return "url:" + u }

// makeSnapshot writes a snapshot's objects as blobs: the WARC of the
// exchange, the normalized text, and the manifest naming them.
func (c *Service) makeSnapshot(ctx context.Context, src *source, rawSHA, textSHA string) (*store.CorpusSnapshot, error) {
	a, site, raw, text := src.a, src.site, src.raw, src.text
	logID, err := c.Store.CrawlLogIDForURL(ctx, a.URL, a.FetchedAt)
	if err != nil {
		return nil, err
	}
	robots := "allowed"
	if !site.RespectRobots {
		robots = "not-consulted"
	}
	provider := src.provider
	n := &store.CorpusSnapshot{ID: sha([]byte(rawSHA + ":" + textSHA)), RawSHA256: rawSHA, TextSHA256: textSHA,
		SourceURL: a.URL, FetchedAt: a.FetchedAt, Provider: provider, Robots: robots, Access: site.Access,
		Rights: orUnknown(site.CorpusRights)}
	if logID > 0 {
		n.CrawlLogID = &logID
	}
	meta := map[string]string{
		"provider": provider, "robots": robots, "access": site.Access, "rights": n.Rights,
		"trust":          "untrusted-source",
		"origin":         src.origin,
		"site":           site.SiteCode,
		"text-sha256":    textSHA,
		"zhizhi-version": c.Version,
	}
	if logID > 0 {
		meta["crawl-log-id"] = strconv.FormatInt(logID, 10)
	}
	if a.ID != 0 {
		meta["article-id"] = strconv.FormatInt(a.ID, 10)
	}
	status := http.StatusOK
	if src.status != 0 {
		status = src.status
	}
	hdr := http.Header{}
	ctype := "text/html"
	if src.contentType != "" {
		ctype = src.contentType
	}
	if len(raw) == 0 {
		// A summary site: the crawler kept no page, only what it was
		// allowed to read, and the WARC says so.
		meta["body"] = "not-kept"
		ctype = "text/plain; charset=utf-8"
	}
	hdr.Set("Content-Type", ctype)
	ex := warc.Exchange{TargetURI: a.URL, Method: http.MethodGet, RequestHeader: http.Header{"User-Agent": {"zhizhi/" + c.Version}},
		Status: status, ResponseHeader: hdr, Body: raw, FetchedAt: a.FetchedAt, HeadersReconstructed: true,
		Metadata: meta, Software: "zhizhi/" + c.Version}
	var buf bytes.Buffer
	if _, err := warc.Write(&buf, ex); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", a.URL, err)
	}
	if n.WARCPath, n.WARCSHA256, err = c.Store.Blobs().Put(ctx, buf.Bytes()); err != nil {
		return nil, err
	}
	if n.TextPath, _, err = c.Store.Blobs().Put(ctx, []byte(text)); err != nil {
		return nil, err
	}
	man := map[string]any{
		"snapshot": n.ID, "source_url": a.URL, "fetched_at": a.FetchedAt.UTC(), "provider": provider,
		"crawl_log_id": logID, "robots": robots, "access": site.Access, "rights": n.Rights, "trust": "untrusted-source",
		"objects": map[string]any{
			"warc": map[string]string{"path": n.WARCPath, "sha256": n.WARCSHA256},
			"text": map[string]string{"path": n.TextPath, "sha256": textSHA},
			"raw":  map[string]any{"sha256": rawSHA, "bytes": len(raw), "in": "warc response record"},
		},
		"zhizhi": c.Version,
	}
	mb, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	if n.ManifestPath, n.ManifestSHA256, err = c.Store.Blobs().Put(ctx, mb); err != nil {
		return nil, err
	}
	return n, nil
}

// attrs collects a revision's attributes from its article.
func (c *Service) attrs(ctx context.Context, a *model.Article) (*Attrs, error) {
	at := &Attrs{IndexNo: a.IndexNo, DocNo: a.DocNo, Publisher: a.Publisher, PublishDate: a.PublishDate,
		EffectiveDate: a.EffectiveDate, TopicWords: a.TopicWords, OpenCategory: a.OpenCategory,
		Category: a.ContentCategory, Subcategory: a.ContentSubcategory, Source: a.SourceRaw, Channel: a.ChannelName}
	if at.PublishDate == "" && a.PublishTime != nil {
		at.PublishDate = a.PublishTime.In(c.localNow().Location()).Format("2006-01-02")
	}
	if a.DeptID != nil {
		d, err := c.Store.DepartmentByID(ctx, *a.DeptID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if d != nil {
			at.DeptCode, at.DeptName = d.DeptCode, d.DeptName
		}
	}
	return at, nil
}

// candidates finds the works that may be the same document as rev, of
// work id: the same text (exact), a simhash within nearDistance of a work
// with the same title or 文号 (near), or the same 文号 and 发布机构
// (biblio). They are candidates only: a person decides.
func (c *Service) candidates(ctx context.Context, id string, rev *store.CorpusRevision) ([]store.CorpusCandidate, error) {
	looks, err := c.Store.CorpusLookalikes(ctx, id, rev.TextSHA256, rev.Title, rev.DocNo)
	if err != nil {
		return nil, err
	}
	var out []store.CorpusCandidate
	pair := func(other, kind string, dist int, detail string) {
		a, b := id, other
		if b < a {
			a, b = b, a
		}
		out = append(out, store.CorpusCandidate{WorkA: a, WorkB: b, Kind: kind, Distance: dist, Detail: detail})
	}
	for _, l := range looks {
		if l.TextSHA256 == rev.TextSHA256 {
			pair(l.WorkID, "exact", 0, "正文完全相同")
			continue
		}
		sameDoc := l.Title == rev.Title || (rev.DocNo != "" && l.DocNo == rev.DocNo)
		if d := summary.Hamming(l.Simhash, rev.Simhash); sameDoc && d <= nearDistance {
			pair(l.WorkID, "near", d, fmt.Sprintf("正文指纹相差 %d 位，且标题或文号相同", d))
		}
		if rev.DocNo != "" && l.DocNo == rev.DocNo && rev.Publisher != "" && l.Publisher == rev.Publisher {
			pair(l.WorkID, "biblio", 0, "文号与发布机构相同："+rev.DocNo)
		}
	}
	return out, nil
}

var (
	blankRun = regexp.MustCompile(`\n{3,}`)
	trailing = regexp.MustCompile(`[ \t\x{3000}]+\n`)
)

// Normalize is the canonical text of a body: Unicode NFC, one kind of
// line end, no trailing blanks on a line, at most one empty line in a
// row, no blank start or end.
func Normalize(s string) string {
	s = norm.NFC.String(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = trailing.ReplaceAllString(s+"\n", "\n")
	s = blankRun.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

func orUnknown(r string) string {
	if r == "" {
		return model.RightsUnknown
	}
	return r
}

func rightsName(r string) string {
	switch r {
	case model.RightsPublicInfo:
		return "政府信息公开（可发布）"
	case model.RightsReference:
		return "仅供参考（不发布）"
	}
	return "未确认（暂不发布）"
}

func accessName(a string) string {
	if a == model.AccessFull {
		return "全文"
	}
	return "仅摘要"
}

func candidateName(k string) string {
	switch k {
	case "exact":
		return "正文相同"
	case "near":
		return "近似重复"
	}
	return "文号与发布机构相同"
}
