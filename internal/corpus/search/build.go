package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// formatVersion names the file layout; Open refuses any other.
const formatVersion = "zhizhi-search/1"

// batchSize is how many documents one build transaction writes.
const batchSize = 2000

// Doc is one document of a release as the index stores it.
type Doc struct {
	ID       string // stable public ID; unique in one index
	Revision int
	Title    string
	Body     string // plain text; kept for snippets
	DeptCode string
	DeptName string
	Channel  string
	// Publisher is the issuing body as printed (发布机构).
	Publisher string
	// DocNo is the document number (文号) as printed, e.g. 国办发〔2024〕12号.
	DocNo string
	// Date is the publication date, YYYY-MM-DD, or "" when unknown.
	Date string
	URL  string
}

// Stats says what Build wrote.
type Stats struct {
	Docs      int           // documents indexed
	TextRunes int64         // runes of title, body and 文号 indexed
	FileBytes int64         // size of the finished file
	Elapsed   time.Duration // wall time of the whole build
	Load      time.Duration // of which inserting the documents
}

const schema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE doc (
	rid        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	revision   INTEGER NOT NULL,
	title      TEXT NOT NULL,
	dept_code  TEXT NOT NULL,
	dept_name  TEXT NOT NULL,
	channel    TEXT NOT NULL,
	publisher  TEXT NOT NULL,
	doc_no     TEXT NOT NULL,
	doc_no_key TEXT NOT NULL,
	date       TEXT NOT NULL,
	url        TEXT NOT NULL
);
CREATE TABLE body (rid INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE VIRTUAL TABLE text USING fts5(
	tu, tb, bu, bb, nu, nb,
	content = '', tokenize = 'ascii'
);
`

// indexes are created after the load, which is faster than keeping them
// up to date row by row.
const indexes = `
CREATE INDEX doc_date ON doc (date DESC, rid);
CREATE INDEX doc_dept ON doc (dept_code, date DESC);
CREATE INDEX doc_channel ON doc (channel, date DESC);
CREATE INDEX doc_publisher ON doc (publisher, date DESC);
CREATE INDEX doc_no_key ON doc (doc_no_key) WHERE doc_no_key <> '';
`

// row is one document made ready for insertion.
type row struct {
	d                      *Doc
	n                      int // sequence number, for error messages
	docNoKey               string
	tu, tb, bu, bb, nu, nb string
	runes                  int
	err                    error
}

// Build writes a new index file at path from the documents next returns,
// one at a time, until next returns io.EOF or a nil *Doc. It refuses to
// overwrite: path must not exist. The file is written under a temporary
// name in the same directory and appears at path only when complete, merged
// into one FTS5 segment and vacuumed, so a reader never sees half an index.
func Build(ctx context.Context, path string, next func() (*Doc, error)) (Stats, error) {
	start := time.Now()
	var st Stats
	if _, err := os.Lstat(path); err == nil {
		return st, fmt.Errorf("search build: %s already exists: an index is written once; choose a new path", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("search build: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return st, fmt.Errorf("search build: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	db, err := sql.Open("sqlite", fileURI(tmpPath)+"?_pragma=journal_mode(off)&_pragma=synchronous(off)&_pragma=cache_size(-16384)&_pragma=temp_store(memory)")
	if err != nil {
		return st, fmt.Errorf("search build: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := load(ctx, db, next, &st); err != nil {
		return st, err
	}
	st.Load = time.Since(start)
	for _, q := range []string{indexes, `INSERT INTO text(text) VALUES ('optimize')`, `ANALYZE`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("search build: finish (%.30s…): %w", q, err)
		}
	}
	// VACUUM INTO writes a compact copy (the segments 'optimize' replaced
	// leave free pages behind) straight into a second temporary file, which
	// is cheaper than VACUUM's copy-and-copy-back.
	final := tmpPath + ".final"
	defer os.Remove(final)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, final); err != nil {
		return st, fmt.Errorf("search build: vacuum: %w", err)
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("search build: close: %w", err)
	}
	// Link, unlike rename, fails when path appeared meanwhile.
	if err := os.Link(final, path); err != nil {
		return st, fmt.Errorf("search build: publish %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("search build: %w", err)
	}
	st.FileBytes = fi.Size()
	st.Elapsed = time.Since(start)
	return st, nil
}

// load inserts every document. A second goroutine turns documents into
// token rows while this one writes them, so the build uses two cores.
func load(ctx context.Context, db *sql.DB, next func() (*Doc, error), st *Stats) error {
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("search build: schema: %w", err)
	}
	// A larger pending-data buffer means fewer, larger segments to merge.
	if _, err := db.ExecContext(ctx, `INSERT INTO text(text, rank) VALUES ('hashsize', 16777216)`); err != nil {
		return fmt.Errorf("search build: configure fts5: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('format', ?), ('built_at', ?)`,
		formatVersion, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("search build: meta: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make(chan row, 256)
	go func() {
		defer close(rows)
		for n := 1; ; n++ {
			d, err := next()
			if errors.Is(err, io.EOF) || (err == nil && d == nil) {
				return
			}
			var r row
			if err != nil {
				r = row{n: n, err: fmt.Errorf("search build: document %d: %w", n, err)}
			} else {
				r = prepare(d, n)
			}
			select {
			case rows <- r:
			case <-ctx.Done():
				return
			}
			if r.err != nil {
				return
			}
		}
	}()
	var tx *sql.Tx
	var insDoc, insBody, insText *sql.Stmt
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := tx.Commit()
		tx = nil
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	inBatch := 0
	for r := range rows {
		if r.err != nil {
			return r.err
		}
		if tx == nil {
			var err error
			if tx, err = db.BeginTx(ctx, nil); err != nil {
				return fmt.Errorf("search build: %w", err)
			}
			if insDoc, err = tx.PrepareContext(ctx, `INSERT INTO doc (rid, id, revision, title, dept_code, dept_name,
				channel, publisher, doc_no, doc_no_key, date, url) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`); err != nil {
				return fmt.Errorf("search build: %w", err)
			}
			if insBody, err = tx.PrepareContext(ctx, `INSERT INTO body (rid, body) VALUES (?, ?)`); err != nil {
				return fmt.Errorf("search build: %w", err)
			}
			if insText, err = tx.PrepareContext(ctx, `INSERT INTO text (rowid, tu, tb, bu, bb, nu, nb) VALUES (?,?,?,?,?,?,?)`); err != nil {
				return fmt.Errorf("search build: %w", err)
			}
		}
		d := r.d
		if _, err := insDoc.ExecContext(ctx, r.n, d.ID, d.Revision, d.Title, d.DeptCode, d.DeptName, d.Channel,
			d.Publisher, d.DocNo, r.docNoKey, d.Date, d.URL); err != nil {
			if strings.Contains(err.Error(), "UNIQUE") {
				return fmt.Errorf("search build: document %d: id %q appears twice: a release holds one revision per document", r.n, d.ID)
			}
			return fmt.Errorf("search build: document %d (%q): %w", r.n, d.ID, err)
		}
		if _, err := insBody.ExecContext(ctx, r.n, d.Body); err != nil {
			return fmt.Errorf("search build: document %d (%q): %w", r.n, d.ID, err)
		}
		if _, err := insText.ExecContext(ctx, r.n, r.tu, r.tb, r.bu, r.bb, r.nu, r.nb); err != nil {
			return fmt.Errorf("search build: document %d (%q): %w", r.n, d.ID, err)
		}
		st.Docs++
		st.TextRunes += int64(r.runes)
		if inBatch++; inBatch == batchSize {
			inBatch = 0
			if err := commit(); err != nil {
				return fmt.Errorf("search build: commit: %w", err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("search build: %w", err)
	}
	if err := commit(); err != nil {
		return fmt.Errorf("search build: commit: %w", err)
	}
	_, err := db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('docs', ?)`, strconv.Itoa(st.Docs))
	return err
}

// prepare checks d and computes its token columns.
func prepare(d *Doc, n int) row {
	bad := func(format string, args ...any) row {
		return row{n: n, err: fmt.Errorf("search build: document %d (id %q): %s", n, d.ID, fmt.Sprintf(format, args...))}
	}
	if d.ID == "" {
		return bad("empty id: every document needs its stable id")
	}
	for name, v := range map[string]string{"id": d.ID, "title": d.Title, "body": d.Body, "dept_code": d.DeptCode,
		"dept_name": d.DeptName, "channel": d.Channel, "publisher": d.Publisher, "doc_no": d.DocNo, "url": d.URL} {
		if !utf8.ValidString(v) {
			return bad("%s is not valid UTF-8: convert the text before indexing", name)
		}
	}
	if d.Date != "" && !validDate(d.Date) {
		return bad("date %q is not YYYY-MM-DD: give a calendar date or \"\"", d.Date)
	}
	t, b, no := normalize(d.Title), normalize(d.Body), normalize(d.DocNo)
	return row{
		d: d, n: n, docNoKey: string(no),
		tu: unigrams(t), tb: bigrams(t),
		bu: unigrams(b), bb: bigrams(b),
		nu: unigrams(no), nb: bigrams(no),
		runes: len(t) + len(b) + len(no),
	}
}

// validDate reports whether s is a real calendar date written YYYY-MM-DD.
func validDate(s string) bool {
	if len(s) != 10 {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// fileURI turns a file path into an SQLite "file:" URI; characters that
// would end the path part are escaped.
func fileURI(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(path)}
	return u.String()
}
