package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/warc"
)

// exportCitation is a work's citation in an export line.
type exportCitation struct {
	CSL     json.RawMessage `json:"csl"`
	GBT7714 string          `json:"gbt7714"`
}

// exportProvenance says where a work's text came from.
type exportProvenance struct {
	Release    string    `json:"release"`
	IntakeAt   time.Time `json:"intake_at"`
	FetchedAt  time.Time `json:"fetched_at"`
	SnapshotID string    `json:"snapshot_id"`
	CrawlLogID *int64    `json:"crawl_log_id"`
	Access     string    `json:"access"`
	Rights     string    `json:"rights"`
}

// exportWork is one line of format=works.
type exportWork struct {
	ID          string           `json:"id"`
	Rev         int              `json:"rev"`
	Title       string           `json:"title"`
	URL         string           `json:"url"`
	Site        string           `json:"site"`
	SiteName    string           `json:"site_name"`
	DocNo       string           `json:"doc_no"`
	Publisher   string           `json:"publisher"`
	PublishDate string           `json:"publish_date"`
	Attributes  json.RawMessage  `json:"attributes"`
	Text        string           `json:"text"`
	TextSHA256  string           `json:"text_sha256"`
	Chars       int              `json:"chars"`
	Citation    exportCitation   `json:"citation"`
	Provenance  exportProvenance `json:"provenance"`
}

// exportPassage is one line of format=passages.
type exportPassage struct {
	ID       string `json:"id"` // {work}:{rev}:{start}-{end}
	Work     string `json:"work"`
	Rev      int    `json:"rev"`
	Release  string `json:"release"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Text     string `json:"text"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Citation string `json:"citation"` // GB/T 7714, naming the release
}

// releaseExport streams a verified release for a knowledge base or an
// archive: format=works (the default) as JSON Lines, one work a line with
// its canonical text, attributes, citation and provenance summary;
// format=passages as JSON Lines, one passage a line with its stable id
// {work}:{rev}:{start}-{end} (character offsets into the canonical text,
// see passages); format=wacz as one WACZ of the release's snapshots
// (their WARC files, a CDXJ index, pages = works, a datapackage with
// every file's hash). The same release always exports the same bytes.
func (h *handler) releaseExport(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	version := r.PathValue("version")
	err := versionOf("path", version)
	q := newQuery(r)
	format := q.oneOf("format", "works", "passages", "wacz")
	if err == nil {
		err = q.check()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if format == "" {
		format = "works"
	}
	ctx := r.Context()
	rel, err := h.releaseFor(ctx, version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sw := &streamWriter{w: w, h: h, r: r}
	switch format {
	case "wacz":
		sw.contentType, sw.filename = "application/zip", "zhizhi-release-"+version+".wacz"
		err = h.exportWACZ(ctx, sw, rel)
	default:
		sw.contentType, sw.filename = "application/x-ndjson", "zhizhi-release-"+version+"-"+format+".jsonl"
		bw := bufio.NewWriterSize(sw, 64<<10)
		if format == "works" {
			err = h.exportWorks(ctx, bw, rel)
		} else {
			err = exportPassages(bw, rel)
		}
		if err == nil {
			err = bw.Flush()
		}
	}
	sw.finish(err)
}

func (h *handler) exportWorks(ctx context.Context, w io.Writer, rel *corpus.Release) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rel.Entries {
		e := &rel.Entries[i]
		text, err := rel.Text(e)
		if err != nil {
			return err
		}
		csl, err := rel.Citation(e.ID, "csl-json")
		if err != nil {
			return err
		}
		gb, err := rel.Citation(e.ID, "gbt7714")
		if err != nil {
			return err
		}
		rev, err := h.st.CorpusRevision(ctx, e.ID, e.Rev)
		if err != nil {
			return err
		}
		snap, err := h.st.CorpusSnapshot(ctx, e.Snapshot)
		if err != nil {
			return err
		}
		attrs := e.Attrs
		if len(attrs) == 0 {
			attrs = json.RawMessage("{}")
		}
		line := exportWork{ID: e.ID, Rev: e.Rev, Title: e.Title, URL: e.URL, Site: e.Site, SiteName: e.SiteName, DocNo: e.DocNo,
			Publisher: e.Publisher, PublishDate: e.PublishDate, Attributes: attrs, Text: text, TextSHA256: e.TextSHA256,
			Chars: len([]rune(text)), Citation: exportCitation{CSL: json.RawMessage(csl), GBT7714: gb},
			Provenance: exportProvenance{Release: rel.Version, IntakeAt: rev.CreatedAt.UTC(), FetchedAt: e.FetchedAt.UTC(),
				SnapshotID: e.Snapshot, CrawlLogID: snap.CrawlLogID, Access: snap.Access, Rights: snap.Rights}}
		if err := enc.Encode(&line); err != nil {
			return err
		}
	}
	return nil
}

func exportPassages(w io.Writer, rel *corpus.Release) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rel.Entries {
		e := &rel.Entries[i]
		text, err := rel.Text(e)
		if err != nil {
			return err
		}
		gb, err := rel.Citation(e.ID, "gbt7714")
		if err != nil {
			return err
		}
		rs := []rune(text)
		for _, p := range passages(text) {
			line := exportPassage{ID: passageID(e.ID, e.Rev, p), Work: e.ID, Rev: e.Rev, Release: rel.Version,
				Start: p.start, End: p.end, Text: string(rs[p.start:p.end]), Title: e.Title, URL: e.URL, Citation: gb}
			if err := enc.Encode(&line); err != nil {
				return err
			}
		}
	}
	return nil
}

// passageID is a passage's stable id: the same work, revision and text
// give the same id in every export and every release.
func passageID(work string, rev int, p passageSpan) string {
	return work + ":" + strconv.Itoa(rev) + ":" + strconv.Itoa(p.start) + "-" + strconv.Itoa(p.end)
}

// exportWACZ writes the release's snapshots as one WACZ: each work's
// snapshot WARC (once, however many works share it) under
// archive/<snapshot>.warc.gz, its pages the release's works. Dated with
// the release's build time, so the same release gives the same bytes.
func (h *handler) exportWACZ(ctx context.Context, w io.Writer, rel *corpus.Release) error {
	rec, err := h.st.CorpusRelease(ctx, rel.Version)
	if err != nil {
		return err
	}
	in := warc.WACZInput{Title: "知止语料库发布版 " + rel.Version, Created: rec.BuiltAt,
		Description: fmt.Sprintf("zhizhi corpus release %s: the WARC snapshots of its %d works.", rel.Version, len(rel.Entries)),
		Software:    "zhizhi " + h.corpus.Version}
	seen := map[string]bool{}
	for i := range rel.Entries {
		e := &rel.Entries[i]
		in.Pages = append(in.Pages, warc.WACZPage{ID: e.ID, URL: e.URL, TS: e.FetchedAt, Title: e.Title})
		if seen[e.Snapshot] {
			continue
		}
		seen[e.Snapshot] = true
		snap, err := h.st.CorpusSnapshot(ctx, e.Snapshot)
		if err != nil {
			return err
		}
		path := snap.WARCPath
		in.WARCs = append(in.WARCs, warc.WACZWARC{Name: snap.ID + ".warc.gz",
			Open: func() (io.ReadCloser, error) { return h.st.Blobs().Open(ctx, path) }})
	}
	if len(in.WARCs) == 0 {
		return notFoundf("release %s holds no works, so it has no snapshots to package", rel.Version)
	}
	return warc.WriteWACZ(w, in)
}

// streamWriter sends a streamed download's headers with its first byte,
// so a failure before any byte is answered as a JSON error, and a failure
// after it cuts the connection (the client sees an incomplete download,
// never a short file that looks whole).
type streamWriter struct {
	w                     http.ResponseWriter
	h                     *handler
	r                     *http.Request
	contentType, filename string
	started               bool
}

func (s *streamWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		hdr := s.w.Header()
		hdr.Set("Content-Type", s.contentType)
		hdr.Set("Content-Disposition", `attachment; filename="`+s.filename+`"`)
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("X-Content-Type-Options", "nosniff")
		s.w.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

func (s *streamWriter) finish(err error) {
	switch {
	case err == nil && !s.started:
		// An empty export (a release of no works) is still a 200.
		_, _ = s.Write(nil)
	case err == nil:
	case !s.started:
		s.h.fail(s.w, s.r, err)
	default:
		s.h.log.Error("api export cut short", "path", s.r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}
