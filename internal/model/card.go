package model

import "time"

// Card grades: what the portal may show of a card.
const (
	GradeGreen  = "green"  // summary shown and searchable
	GradeYellow = "yellow" // waits for a person's rewrite; title and link only
	GradeRed    = "red"    // title and link only
)

// CardAnchor is one core anchor of a card's source: a date, a number with
// its unit, a document number, an organisation or a key term.
type CardAnchor struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

// SummaryCard is a row of summary_card: what the public portal shows of an
// article. Summary is the source's own sentences (or a person's rewrite);
// the full text stays at the source, one click away.
type SummaryCard struct {
	ID          int64
	ArticleID   int64
	SiteID      int64
	Title       string
	Summary     string
	AutoSummary string // the machine's cut, kept beside a rewrite
	SourceURL   string
	PublishTime *time.Time
	Simhash     uint64
	SourceDNA   string
	FetchedAt   time.Time
	Anchors     []CardAnchor
	Covered     int
	Sigma       float64
	Relevance   int
	Grade       string
	// ReferenceSimhash (of the source's first and last paragraphs) and
	// SummaryLimit (its length cap) grade a rewrite without the source.
	ReferenceSimhash uint64
	SummaryLimit     int
	RewrittenBy      string
	RewrittenAt      *time.Time
	DuplicateOf      *int64
	OriginalFrozen   bool   // the card DuplicateOf names is taken down (read, never written)
	TakedownID       *int64 // set: frozen by a takedown, hidden from the portal
	CreatedAt        time.Time
	UpdatedAt        time.Time

	// Read with the card for lists and pages, never written through it.
	SiteName    string
	DeptID      *int64
	DeptName    string
	ChannelName string
}

// Visible says whether the portal shows the card at all: not taken down,
// and not a reprint of a card the portal shows — a reprint stands in for
// its original when a takedown at the original's site froze that.
func (c *SummaryCard) Visible() bool {
	return c.TakedownID == nil && (c.DuplicateOf == nil || c.OriginalFrozen)
}

// ShowsSummary says whether the portal shows the card's summary text, not
// only its title and link.
func (c *SummaryCard) ShowsSummary() bool { return c.Grade == GradeGreen && c.Summary != "" }

// Takedown scopes.
const (
	TakedownSite = "site" // every card of the site, present and future
	TakedownURLs = "urls" // the cards of the listed pages
)

// Takedown is a row of takedown: a source site's request to take its cards
// off the portal.
type Takedown struct {
	ID          int64
	SiteID      int64
	Scope       string
	URLs        []string
	Requester   string
	Contact     string
	Reason      string
	ReceivedAt  time.Time
	DeadlineAt  time.Time
	RecordedBy  string
	FrozenAt    *time.Time
	FrozenBy    string
	CardsFrozen int
	Receipt     string

	SiteName string // read with the row
}

// Open says whether the request still waits to be carried out.
func (t *Takedown) Open() bool { return t.FrozenAt == nil }
