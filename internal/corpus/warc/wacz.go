package warc

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// WACZVersion is the WACZ specification version WriteWACZ follows.
const WACZVersion = "1.1.1"

// WACZInput is what goes into a WACZ package.
type WACZInput struct {
	Title       string
	Description string // Markdown (plain text is Markdown)
	// Created dates the package and every entry in the ZIP, so the same
	// input always gives the same bytes. Required.
	Created  time.Time
	Software string // e.g. "zhizhi 0.9.0"
	// MainPageURL and MainPageDate optionally name the page a replay tool
	// opens first.
	MainPageURL  string
	MainPageDate time.Time
	// WARCs are the gzip-per-record WARC files, stored under archive/ by
	// Name in this order.
	WARCs []WACZWARC
	// Pages are the entry points listed in pages/pages.jsonl, in order.
	Pages []WACZPage
}

// WACZWARC is one WARC file for a WACZ. Open is called twice (once to
// verify, hash and index it, once to copy it), and both reads must return
// the same bytes.
type WACZWARC struct {
	// Name is the file name inside archive/: lowercase letters, digits,
	// ".", "_", "-", ending in ".warc.gz".
	Name string
	Open func() (io.ReadCloser, error)
}

// WARCFile is a WACZWARC read from a file on disk.
func WARCFile(name, path string) WACZWARC {
	return WACZWARC{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// WACZPage is one line of pages/pages.jsonl.
type WACZPage struct {
	ID    string // defaults to a hash of URL and TS
	URL   string
	TS    time.Time
	Title string
	Text  string // optional extracted text, for full-text search in replay tools
}

var warcNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*\.warc\.gz$`)

type waczResource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

type waczPackage struct {
	Profile      string         `json:"profile"`
	WACZVersion  string         `json:"wacz_version"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description,omitempty"`
	Created      string         `json:"created"`
	Modified     string         `json:"modified"`
	Software     string         `json:"software,omitempty"`
	MainPageURL  string         `json:"mainPageUrl,omitempty"`
	MainPageDate string         `json:"mainPageDate,omitempty"`
	Resources    []waczResource `json:"resources"`
}

// WriteWACZ writes a WACZ 1.1.1 package: archive/<name>.warc.gz (stored,
// not compressed again, so replay tools can read records by range),
// indexes/index.cdxj (every response and resource record, sorted),
// pages/pages.jsonl (header line first), datapackage.json (profile
// "data-package", wacz_version, and for every file its path, sha256 and
// size) and datapackage-digest.json (the sha256 of datapackage.json).
// Every WARC is verified first; a damaged one stops the export with the
// error that names its record. The same input gives the same bytes.
func WriteWACZ(w io.Writer, in WACZInput) error {
	if in.Created.IsZero() {
		return errors.New("wacz: Created is required: it dates the package and every ZIP entry")
	}
	if len(in.WARCs) == 0 {
		return errors.New("wacz: no WARC files to package")
	}
	created := in.Created.UTC().Truncate(time.Second)
	if created.Year() < 1980 || created.Year() > 2107 {
		return fmt.Errorf("wacz: Created %s is outside the years a ZIP can date (1980–2107)", created.Format(time.RFC3339))
	}
	seen := map[string]bool{}
	for _, f := range in.WARCs {
		if !warcNameRE.MatchString(f.Name) {
			return fmt.Errorf("wacz: WARC name %q must be lowercase letters, digits, \".\", \"_\", \"-\" and end in .warc.gz", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("wacz: WARC name %q is given twice", f.Name)
		}
		seen[f.Name] = true
		if f.Open == nil {
			return fmt.Errorf("wacz: WARC %q has no Open function", f.Name)
		}
	}

	// Pass 1: verify, index and fingerprint every WARC.
	type warcInfo struct {
		size   int64
		crc    uint32
		sha256 string
	}
	infos := make([]warcInfo, len(in.WARCs))
	var lines []string
	for i, f := range in.WARCs {
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("wacz: open %s: %w", f.Name, err)
		}
		sh, cr := sha256.New(), crc32.NewIEEE()
		cnt := &countingReader{r: io.TeeReader(rc, io.MultiWriter(sh, cr))}
		recs, err := Verify(cnt)
		if err == nil {
			_, err = io.Copy(io.Discard, cnt)
		}
		rc.Close()
		if err != nil {
			return fmt.Errorf("wacz: %s: %w", f.Name, err)
		}
		infos[i] = warcInfo{size: cnt.n, crc: cr.Sum32(), sha256: "sha256:" + hex.EncodeToString(sh.Sum(nil))}
		for _, r := range recs {
			if r.Type == "response" || r.Type == "resource" || r.Type == "revisit" {
				lines = append(lines, CDXJLine(r, f.Name))
			}
		}
	}
	slices.Sort(lines)

	zw := zip.NewWriter(w)
	var resources []waczResource
	add := func(path string, data []byte) error {
		if err := addPlain(zw, path, data, created); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		resources = append(resources, waczResource{Name: pathBase(path), Path: path, Hash: "sha256:" + hex.EncodeToString(sum[:]), Bytes: int64(len(data))})
		return nil
	}

	// Pass 2: copy the WARCs as stored entries with the sizes and CRC
	// known up front, so each entry's local header carries them and a
	// range reader finds the records at their indexed offsets.
	for i, f := range in.WARCs {
		path := "archive/" + f.Name
		// CreateRaw, unlike CreateHeader, does not turn Modified into the
		// MS-DOS date and time fields; set them here.
		fh := &zip.FileHeader{Name: path, Method: zip.Store, Modified: created,
			ModifiedDate: uint16(created.Day() + int(created.Month())<<5 + (created.Year()-1980)<<9),
			ModifiedTime: uint16(created.Second()/2 + created.Minute()<<5 + created.Hour()<<11),
			CRC32:        infos[i].crc, CompressedSize64: uint64(infos[i].size), UncompressedSize64: uint64(infos[i].size)}
		fw, err := zw.CreateRaw(fh)
		if err != nil {
			return fmt.Errorf("wacz: add %s: %w", path, err)
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("wacz: reopen %s: %w", f.Name, err)
		}
		sh := sha256.New()
		n, err := io.Copy(io.MultiWriter(fw, sh), rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("wacz: copy %s: %w", f.Name, err)
		}
		if got := "sha256:" + hex.EncodeToString(sh.Sum(nil)); n != infos[i].size || got != infos[i].sha256 {
			return fmt.Errorf("wacz: %s changed while it was packaged (%d bytes %s, then %d bytes %s)", f.Name, infos[i].size, infos[i].sha256, n, got)
		}
		resources = append(resources, waczResource{Name: f.Name, Path: path, Hash: infos[i].sha256, Bytes: n})
	}

	var idx bytes.Buffer
	for _, l := range lines {
		idx.WriteString(l)
		idx.WriteByte('\n')
	}
	if err := add("indexes/index.cdxj", idx.Bytes()); err != nil {
		return err
	}

	pages, err := pagesJSONL(in.Pages)
	if err != nil {
		return err
	}
	if err := add("pages/pages.jsonl", pages); err != nil {
		return err
	}

	pkg := waczPackage{
		Profile: "data-package", WACZVersion: WACZVersion,
		Title: in.Title, Description: in.Description,
		Created: created.Format(time.RFC3339), Modified: created.Format(time.RFC3339),
		Software: in.Software, MainPageURL: in.MainPageURL, Resources: resources,
	}
	if !in.MainPageDate.IsZero() {
		pkg.MainPageDate = in.MainPageDate.UTC().Format(time.RFC3339)
	}
	dp, err := jsonIndent(pkg)
	if err != nil {
		return fmt.Errorf("wacz: datapackage.json: %w", err)
	}
	if err := addPlain(zw, "datapackage.json", dp, created); err != nil {
		return err
	}
	sum := sha256.Sum256(dp)
	digest, err := jsonIndent(struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}{"datapackage.json", "sha256:" + hex.EncodeToString(sum[:])})
	if err != nil {
		return fmt.Errorf("wacz: datapackage-digest.json: %w", err)
	}
	if err := addPlain(zw, "datapackage-digest.json", digest, created); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("wacz: finish the ZIP: %w", err)
	}
	return nil
}

func addPlain(zw *zip.Writer, path string, data []byte, created time.Time) error {
	fw, err := zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: created})
	if err == nil {
		_, err = fw.Write(data)
	}
	if err != nil {
		return fmt.Errorf("wacz: add %s: %w", path, err)
	}
	return nil
}

func pagesJSONL(pages []WACZPage) ([]byte, error) {
	type line struct {
		ID    string `json:"id"`
		URL   string `json:"url"`
		TS    string `json:"ts"`
		Title string `json:"title,omitempty"`
		Text  string `json:"text,omitempty"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Format string `json:"format"`
		ID     string `json:"id"`
		Title  string `json:"title"`
	}{"json-pages-1.0", "pages", "All Pages"})
	for i, p := range pages {
		if p.URL == "" || p.TS.IsZero() {
			return nil, fmt.Errorf("wacz: page %d needs both URL and TS (got %q, %v)", i+1, p.URL, p.TS)
		}
		ts := p.TS.UTC().Format(time.RFC3339Nano)
		id := p.ID
		if id == "" {
			sum := sha256.Sum256([]byte(p.URL + " " + ts))
			id = hex.EncodeToString(sum[:8])
		}
		if err := enc.Encode(line{ID: id, URL: p.URL, TS: ts, Title: p.Title, Text: p.Text}); err != nil {
			return nil, fmt.Errorf("wacz: page %d (%s): %w", i+1, p.URL, err)
		}
	}
	return b.Bytes(), nil
}

func jsonIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func pathBase(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}
