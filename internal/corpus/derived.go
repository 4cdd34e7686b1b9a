package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"zhizhi/internal/corpus/cite"
	"zhizhi/internal/corpus/search"
	"zhizhi/internal/corpus/warc"
)

// A derivedStep writes a derived file of a release (the search index, the
// citations) from its works; a derivedCheck re-checks one beyond its hash.
type (
	derivedStep  func(ctx context.Context, dir string, entries []WorkEntry) error
	derivedCheck func(ctx context.Context, dir string, entries []WorkEntry) []VerifyProblem
)

func (c *Service) derived() []derivedStep {
	return []derivedStep{c.buildSearch, c.buildCitations}
}

func (c *Service) derivedChecks() []derivedCheck {
	return []derivedCheck{checkSearch}
}

// buildSearch indexes every work's title, text and attributes.
func (c *Service) buildSearch(ctx context.Context, dir string, entries []WorkEntry) error {
	r := &Release{Dir: dir, spans: map[string][2]int64{}}
	shards := map[string]bool{}
	for _, e := range entries {
		if !shards[e.Shard] {
			shards[e.Shard] = true
			if err := r.indexShard(e.Shard); err != nil {
				return err
			}
		}
	}
	i := 0
	_, err := search.Build(ctx, filepath.Join(dir, searchFile), func() (*search.Doc, error) {
		if i == len(entries) {
			return nil, io.EOF
		}
		e := &entries[i]
		i++
		text, err := r.Text(e)
		if err != nil {
			return nil, err
		}
		var a Attrs
		_ = json.Unmarshal(e.Attrs, &a)
		return &search.Doc{ID: e.ID, Revision: e.Rev, Title: e.Title, Body: text, DeptCode: a.DeptCode,
			DeptName: a.DeptName, Channel: a.Channel, Publisher: e.Publisher, DocNo: e.DocNo, Date: e.PublishDate,
			URL: e.URL}, nil
	})
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

// checkSearch opens the index and compares its documents with the
// release's works.
func checkSearch(ctx context.Context, dir string, entries []WorkEntry) []VerifyProblem {
	x, err := search.Open(filepath.Join(dir, searchFile))
	if err != nil {
		return []VerifyProblem{{searchFile, err.Error()}}
	}
	defer x.Close()
	if x.Docs() != len(entries) {
		return []VerifyProblem{{searchFile, fmt.Sprintf("indexes %d works, the release has %d", x.Docs(), len(entries))}}
	}
	return nil
}

// CitationRecord is one line of a release's citations.jsonl: the work's
// citation in every format, pinned to the release.
type CitationRecord struct {
	ID      string          `json:"id"`
	Rev     int             `json:"rev"`
	CSL     json.RawMessage `json:"csl"`
	GBT7714 string          `json:"gbt7714"`
	BibTeX  string          `json:"bibtex"`
}

// CiteWork is the citation input of a release's work.
func CiteWork(version string, e *WorkEntry) cite.Work {
	var a Attrs
	_ = json.Unmarshal(e.Attrs, &a)
	category := a.Category
	for _, s := range []string{a.Subcategory, a.OpenCategory} {
		if s != "" {
			category = strings.TrimSpace(category + " " + s)
		}
	}
	issuer := e.Publisher
	if issuer == "" {
		issuer = a.Source
	}
	return cite.Work{ID: e.ID, Revision: e.Rev, Release: version, Title: e.Title, IssuingBody: issuer,
		Authority: e.SiteName, DocNo: e.DocNo, Category: category, Issued: e.PublishDate, Accessed: e.FetchedAt, URL: e.URL}
}

// buildCitations writes citations.jsonl. The manifest's version is not
// known to the step, so the version is read from the directory's name.
func (c *Service) buildCitations(ctx context.Context, dir string, entries []WorkEntry) error {
	version := releaseVersionOf(dir)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range entries {
		rec, err := citationRecord(version, &entries[i])
		if err != nil {
			return err
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return writeFileSync(filepath.Join(dir, citationsFile), buf.Bytes())
}

func citationRecord(version string, e *WorkEntry) (*CitationRecord, error) {
	w := CiteWork(version, e)
	csl, err := cite.CSLJSON(w)
	if err != nil {
		return nil, err
	}
	gb, err := cite.GBT7714(w)
	if err != nil {
		return nil, err
	}
	bib, err := cite.BibTeX(w)
	if err != nil {
		return nil, err
	}
	return &CitationRecord{ID: e.ID, Rev: e.Rev, CSL: csl, GBT7714: gb, BibTeX: bib}, nil
}

// releaseVersionOf reads a version from a build directory's name
// (".build-<version>-<random>") or a release directory's ("<version>").
func releaseVersionOf(dir string) string {
	base := filepath.Base(dir)
	if rest, ok := strings.CutPrefix(base, ".build-"); ok {
		if i := strings.LastIndex(rest, "-"); i > 0 {
			return rest[:i]
		}
	}
	return base
}

// verifyWARC checks every record of a snapshot's WARC file.
func verifyWARC(b []byte) error {
	_, err := warc.Verify(bytes.NewReader(b))
	return err
}

// releaseIndexes are a release's derived indexes, opened for reading.
type releaseIndexes struct {
	search *search.Index
}

func (c *Service) openDerived(r *Release) error {
	x, err := search.Open(filepath.Join(r.Dir, searchFile))
	if err != nil {
		return fmt.Errorf("release %s: %w", r.Version, err)
	}
	r.derived.search = x
	return nil
}

func (r *Release) closeDerived() {
	if r.derived.search != nil {
		r.derived.search.Close()
	}
}

// Search runs q over the release's index.
func (r *Release) Search(ctx context.Context, q search.Query) (*search.Result, error) {
	return r.derived.search.Search(ctx, q)
}
