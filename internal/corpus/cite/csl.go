package cite

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// cslName is a CSL name variable. Government bodies are institutions, so
// they go whole into literal and are never split into family/given.
type cslName struct {
	Literal string `json:"literal"`
}

// cslDate is a CSL date variable in its structured form.
type cslDate struct {
	DateParts [][]int `json:"date-parts"`
}

// cslCustom is zhizhi's own data about the citation. CSL-JSON 1.0.2
// keeps custom data in "custom" (its "note" is for the user's
// annotations), so a processor carries these along without rendering
// them.
type cslCustom struct {
	WorkID     string `json:"zhizhi_work_id"`
	Revision   int    `json:"zhizhi_revision"`
	Release    string `json:"zhizhi_release"`
	ReleaseURL string `json:"zhizhi_release_url,omitempty"`
}

// cslItem is one CSL-JSON item; the field order is the order written.
type cslItem struct {
	ID              string    `json:"id"`
	Type            string    `json:"type"`
	CitationKey     string    `json:"citation-key"`
	Title           string    `json:"title"`
	Author          []cslName `json:"author,omitempty"`
	Authority       string    `json:"authority,omitempty"`
	Publisher       string    `json:"publisher,omitempty"`
	Number          string    `json:"number,omitempty"`
	Genre           string    `json:"genre,omitempty"`
	Issued          *cslDate  `json:"issued,omitempty"`
	Accessed        *cslDate  `json:"accessed,omitempty"`
	URL             string    `json:"URL"`
	Language        string    `json:"language"`
	Archive         string    `json:"archive"`
	ArchiveLocation string    `json:"archive_location"`
	Custom          cslCustom `json:"custom"`
}

func (c checked) csl() cslItem {
	it := cslItem{
		ID:          ItemID(c.Work),
		Type:        c.typ,
		CitationKey: Key(c.Work),
		Title:       c.Title,
		Authority:   c.Authority,
		Publisher:   c.publisher(),
		Number:      c.DocNo,
		Genre:       c.Category,
		URL:         c.URL,
		Language:    "zh-CN",
		// archive/archive_location say where the cited text is kept;
		// styles that print archival sources (Chicago, GB/T's [A]) show it.
		Archive:         "知止语料库",
		ArchiveLocation: c.location(),
		Custom: cslCustom{
			WorkID:     c.ID,
			Revision:   c.Revision,
			Release:    c.Release,
			ReleaseURL: c.ReleaseURL,
		},
	}
	for _, n := range c.issuers {
		it.Author = append(it.Author, cslName{Literal: n})
	}
	if !c.issued.zero() {
		it.Issued = &cslDate{DateParts: [][]int{c.issued.parts()}}
	}
	if !c.accessed.zero() {
		it.Accessed = &cslDate{DateParts: [][]int{c.accessed.parts()}}
	}
	return it
}

// location names the release and revision in the archive, in Chinese
// because a bibliography shows it to the reader.
func (c checked) location() string {
	s := fmt.Sprintf("发布版 %s，作品 %s，修订 %d", c.Release, c.ID, c.Revision)
	if c.ReleaseURL != "" {
		s += "，" + c.ReleaseURL
	}
	return s
}

// CSLJSON is w as one CSL-JSON item (a JSON object). Processors and the
// CSL-JSON schema take an array of items: use CSLJSONList for that.
func CSLJSON(w Work) ([]byte, error) {
	c, err := check(w)
	if err != nil {
		return nil, err
	}
	return marshal(c.csl())
}

// CSLJSONList is the works as a CSL-JSON array, the shape
// csl-data.json validates and citeproc-js, pandoc and Zotero import.
// The first invalid work fails the whole list.
func CSLJSONList(works []Work) ([]byte, error) {
	items := make([]cslItem, 0, len(works))
	for _, w := range works {
		c, err := check(w)
		if err != nil {
			return nil, err
		}
		items = append(items, c.csl())
	}
	return marshal(items)
}

// marshal writes indented JSON with Chinese, <, > and & as they are: a
// citation is not HTML, and a person reads the API response.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("cite: encode CSL-JSON: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
