package api

import (
	"fmt"
	"time"

	"zhizhi/internal/model"
)

// The JSON shapes of the portal's hand work (openapi.yaml's Card,
// CardDetail, Anchor, RewriteRefusal and Takedown).

type anchorView struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

func anchorsOf(as []model.CardAnchor) []anchorView {
	out := make([]anchorView, 0, len(as))
	for _, a := range as {
		out = append(out, anchorView(a))
	}
	return out
}

type cardView struct {
	ID          int64        `json:"id"`
	ArticleID   int64        `json:"article_id"`
	SiteID      int64        `json:"site_id"`
	SiteName    string       `json:"site_name"`
	DeptID      *int64       `json:"dept_id"`
	DeptName    *string      `json:"dept_name"`
	ChannelName string       `json:"channel_name"`
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	AutoSummary string       `json:"auto_summary"`
	SourceURL   string       `json:"source_url"`
	PublishTime *time.Time   `json:"publish_time"`
	FetchedAt   time.Time    `json:"fetched_at"`
	Simhash     string       `json:"simhash"`
	SourceDNA   string       `json:"source_dna"`
	Anchors     []anchorView `json:"anchors"`
	Covered     int          `json:"covered"`
	Sigma       float64      `json:"sigma"`
	Relevance   int          `json:"relevance"`
	Grade       string       `json:"grade"`
	RewrittenBy *string      `json:"rewritten_by"`
	RewrittenAt *time.Time   `json:"rewritten_at"`
	DuplicateOf *int64       `json:"duplicate_of"`
	TakedownID  *int64       `json:"takedown_id"`
	Public      bool         `json:"public"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

func cardOf(c *model.SummaryCard) cardView {
	return cardView{ID: c.ID, ArticleID: c.ArticleID, SiteID: c.SiteID, SiteName: c.SiteName, DeptID: c.DeptID,
		DeptName: orNull(c.DeptName), ChannelName: c.ChannelName, Title: c.Title, Summary: c.Summary,
		AutoSummary: c.AutoSummary, SourceURL: c.SourceURL, PublishTime: c.PublishTime, FetchedAt: c.FetchedAt,
		Simhash: fmt.Sprintf("%016x", c.Simhash), SourceDNA: c.SourceDNA, Anchors: anchorsOf(c.Anchors),
		Covered: c.Covered, Sigma: c.Sigma, Relevance: c.Relevance, Grade: c.Grade, RewrittenBy: orNull(c.RewrittenBy),
		RewrittenAt: c.RewrittenAt, DuplicateOf: c.DuplicateOf, TakedownID: c.TakedownID, Public: c.Visible(),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// cardDetailView adds the core anchors the card's summary misses.
type cardDetailView struct {
	cardView
	MissingAnchors []anchorView `json:"missing_anchors"`
}

type rewriteRefusal struct {
	Error          string       `json:"error"`
	Detail         string       `json:"detail"`
	Grade          string       `json:"grade"`
	Sigma          float64      `json:"sigma"`
	Covered        int          `json:"covered"`
	Total          int          `json:"total"`
	MissingAnchors []anchorView `json:"missing_anchors"`
}

type takedownView struct {
	ID          int64      `json:"id"`
	SiteID      int64      `json:"site_id"`
	SiteName    string     `json:"site_name"`
	Scope       string     `json:"scope"`
	URLs        []string   `json:"urls"`
	Requester   string     `json:"requester"`
	Contact     string     `json:"contact"`
	Reason      string     `json:"reason"`
	ReceivedAt  time.Time  `json:"received_at"`
	DeadlineAt  time.Time  `json:"deadline_at"`
	RecordedBy  string     `json:"recorded_by"`
	Open        bool       `json:"open"`
	Overdue     bool       `json:"overdue"`
	FrozenAt    *time.Time `json:"frozen_at"`
	FrozenBy    *string    `json:"frozen_by"`
	CardsFrozen int        `json:"cards_frozen"`
	Receipt     *string    `json:"receipt"`
}

// takedownOf is k as of now: an open request past its deadline is overdue.
func takedownOf(k *model.Takedown, now time.Time) takedownView {
	v := takedownView{ID: k.ID, SiteID: k.SiteID, SiteName: k.SiteName, Scope: k.Scope, URLs: k.URLs,
		Requester: k.Requester, Contact: k.Contact, Reason: k.Reason, ReceivedAt: k.ReceivedAt, DeadlineAt: k.DeadlineAt,
		RecordedBy: k.RecordedBy, Open: k.Open(), Overdue: k.Open() && now.After(k.DeadlineAt), FrozenAt: k.FrozenAt,
		FrozenBy: orNull(k.FrozenBy), CardsFrozen: k.CardsFrozen, Receipt: orNull(k.Receipt)}
	if v.URLs == nil {
		v.URLs = []string{}
	}
	return v
}
