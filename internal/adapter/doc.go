// Package adapter reads what a site serves into the normalized shape the
// pipeline stores: list pages into ListItems and detail
// pages into Details. Template sites are read with the selectors of their
// YAML; CMS sites (gkmlpt) with their adapter contract. Adapters parse; they
// never fetch, store or decide politeness.
package adapter

import (
	"time"

	"zhizhi/internal/extract"
)

// ListItem is one article found on a list page or in a list API.
type ListItem struct {
	URL          string
	NativePostID string // the CMS's own stable id; empty when it has none
	Title        string
	Date         string            // the list's date text, unparsed
	Fields       map[string]string // article fields the list already carries (gkmlpt API)
	Attachments  []AttachmentRef
	Abolished    bool
}

// AttachmentRef is an attachment link before download.
type AttachmentRef struct {
	URL  string
	Name string
	Ext  string
	Size int64
}

// ListPage is one page of a list.
type ListPage struct {
	Items []ListItem
	Next  string // absolute URL of the next page, or ""
	Total int    // total articles when the list says so, else 0
	// Matched counts the elements the item selector matched (HTML lists),
	// links or not, so "the selector found nothing" and "the items have no
	// links" can be told apart.
	Matched int
	// PageCount is the number of list pages when the page says so (the
	// createPageHTML(total, current, …) call of TRS-style sites, or
	// "共N页"); 0 when it does not.
	PageCount int
}

// Detail is what a detail page holds.
type Detail struct {
	Title          string
	PublishTimeRaw string
	PublishTime    *time.Time
	Source         string
	Text           string
	Attributes     *extract.Attributes
	Attachments    []AttachmentRef
	Missing        []string // selectors that matched nothing
}
