package model

import "time"

// HumanTally is one card's count of a day in the human ledger: how many
// times visitors scored human viewed it and clicked through to its source.
// It holds statistics only — never who the visitors were.
type HumanTally struct {
	CardID int64
	Views  int64
	Clicks int64
}

// LedgerDay is one sealed day of the ledgers: the roots of its two Merkle
// trees, its place in the chain and the signed note that states them.
// Hashes are lower-case hex of 32 bytes.
type LedgerDay struct {
	Day          string // YYYY-MM-DD, Asia/Shanghai
	PrevHead     string
	HumanCount   int64
	HumanRoot    string
	CrawlerCount int64
	CrawlerRoot  string
	Head         string
	Note         string // the signed note, as sumdb/note writes it
	SealedAt     time.Time
}

// Ledger names.
const (
	LedgerHuman   = "human"
	LedgerCrawler = "crawler"
)
