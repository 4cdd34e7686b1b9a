package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Problem is the first thing a verification found wrong: the day, and the
// ledger and record when one is to blame (Record is -1 otherwise).
type Problem struct {
	Day    string
	Ledger string
	Record int64
	Msg    string
}

func (p *Problem) Error() string { return p.Day + ": " + p.Msg }

// Summary is what a verification checked.
type Summary struct {
	Days           int
	First, Last    string
	HumanRecords   int64
	CrawlerRecords int64
	LastHead       string
	// ContinuesFrom is the previous head of the first day when the checked
	// days do not start the chain (an export of a later range).
	ContinuesFrom string
	// Heads is each checked day's head (hex), by day.
	Heads map[string]string
}

// ParseVerifierKey reads a verifier key as `zhizhi audit key` prints it.
func ParseVerifierKey(vkey string) (note.Verifier, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("not a verifier key: %w", err)
	}
	return v, nil
}

// dayData is one sealed day as a verifier finds it, in the store or in an
// export.
type dayData struct {
	day     string           // as the source names it: the row's key or the directory's name
	note    []byte           // the signed head note
	row     *model.LedgerDay // the stored columns; nil in an export
	human   ledgerData
	crawler ledgerData
}

type ledgerData struct {
	records []recordData
	// hashes are the stored hashes (store); nil in an export, whose records
	// carry their own proofs.
	hashes   []store.LedgerRow
	exported bool
	missing  string // the export's file is absent
}

type recordData struct {
	index int64 // the stored seq, or the index the exported line carries
	data  []byte
	proof tlog.RecordProof
	bad   string // why an exported line could not be read
}

// chain checks days handed to it oldest first.
type chain struct {
	verifiers note.Verifiers
	// fromStart: the first day must start the chain (the live store holds
	// it all; an export may be a later range).
	fromStart bool
	prev      *Head
	sum       Summary
}

func (c *chain) check(d dayData) error {
	fail := func(format string, args ...any) error {
		return &Problem{Day: d.day, Record: -1, Msg: fmt.Sprintf(format, args...)}
	}
	n, err := note.Open(d.note, c.verifiers)
	if err != nil {
		var invalid *note.InvalidSignatureError
		var unverified *note.UnverifiedNoteError
		switch {
		case errors.As(err, &invalid):
			return fail("the signature on the day's head note does not verify — the note or its signature was changed after signing")
		case errors.As(err, &unverified):
			return fail("the day's head note carries no signature by the given key — it was re-signed with another key or its signature was changed")
		}
		return fail("the day's head note is malformed (%v) — it was changed after signing", err)
	}
	h, err := ParseHead(n.Text)
	if err != nil {
		return fail("the signed note is not a day seal: %v", err)
	}
	if h.Day != d.day {
		return fail("the head note is signed for %s — the day's records were moved", h.Day)
	}
	if ChainHash(h.Prev, h.Day, h.HumanRoot, h.CrawlerRoot) != h.Head {
		return fail("the signed day head does not follow from the day's roots and the previous head")
	}
	if c.prev == nil {
		if h.Prev != (tlog.Hash{}) {
			if c.fromStart {
				return fail("the chain starts here, but this day's previous head is not the start of a chain — the days before it were dropped")
			}
			c.sum.ContinuesFrom = hexHash(h.Prev)
		}
	} else {
		if want := NextDay(c.prev.Day); h.Day != want {
			return &Problem{Day: want, Record: -1,
				Msg: fmt.Sprintf("the day is missing from the chain: %s follows %s — the day was dropped after sealing", h.Day, c.prev.Day)}
		}
		if h.Prev != c.prev.Head {
			return fail("the previous head in the note is not the head of %s — the chain is broken", c.prev.Day)
		}
	}
	if r := d.row; r != nil {
		for _, col := range []struct {
			name      string
			got, want string
		}{
			{"head", r.Head, hexHash(h.Head)},
			{"prev_head", r.PrevHead, hexHash(h.Prev)},
			{"human_root", r.HumanRoot, hexHash(h.HumanRoot)},
			{"crawler_root", r.CrawlerRoot, hexHash(h.CrawlerRoot)},
			{"human_count", fmt.Sprint(r.HumanCount), fmt.Sprint(h.HumanCount)},
			{"crawler_count", fmt.Sprint(r.CrawlerCount), fmt.Sprint(h.CrawlerCount)},
		} {
			if col.got != col.want {
				return fail("the stored day %s differs from the signed head note — the day's row was changed after sealing", col.name)
			}
		}
	}
	if err := checkLedger(d.day, model.LedgerHuman, d.human, h.HumanCount, h.HumanRoot); err != nil {
		return err
	}
	if err := checkLedger(d.day, model.LedgerCrawler, d.crawler, h.CrawlerCount, h.CrawlerRoot); err != nil {
		return err
	}
	if c.sum.Days == 0 {
		c.sum.First = h.Day
	}
	c.sum.Days++
	c.sum.Last = h.Day
	c.sum.HumanRecords += h.HumanCount
	c.sum.CrawlerRecords += h.CrawlerCount
	c.sum.LastHead = hexHash(h.Head)
	if c.sum.Heads == nil {
		c.sum.Heads = map[string]string{}
	}
	c.sum.Heads[h.Day] = c.sum.LastHead
	c.prev = &h
	return nil
}

// checkLedger checks one ledger's records against its signed count and root.
func checkLedger(day, ledger string, l ledgerData, n int64, root tlog.Hash) error {
	fail := func(rec int64, format string, args ...any) error {
		return &Problem{Day: day, Ledger: ledger, Record: rec, Msg: fmt.Sprintf(format, args...)}
	}
	if l.missing != "" {
		return fail(-1, "%s is missing from the export", l.missing)
	}
	var reader tlog.HashReader
	if !l.exported {
		hashes := make([]tlog.Hash, 0, len(l.hashes))
		for i, row := range l.hashes {
			h, err := parseHash(row.Data)
			if err != nil || row.Seq != int64(i) {
				return fail(-1, "the stored hash tree of the %s ledger is damaged at hash %d — it was changed after sealing", ledger, i)
			}
			hashes = append(hashes, h)
		}
		if int64(len(hashes)) != tlog.StoredHashCount(n) {
			return fail(-1, "the stored hash tree of the %s ledger has %d hashes, %d records need %d — it was changed after sealing",
				ledger, len(hashes), n, tlog.StoredHashCount(n))
		}
		// Rebuild the tree from its stored leaves: a changed inner hash would
		// otherwise make a proof fail for an unchanged neighbour, and the
		// wrong record be named.
		var rebuilt []tlog.Hash
		for i := int64(0); i < n; i++ {
			hs, err := tlog.StoredHashesForRecordHash(i, hashes[tlog.StoredHashIndex(0, i)], hashSlice(func() []tlog.Hash { return rebuilt }))
			if err != nil {
				return fail(-1, "the stored hash tree of the %s ledger is damaged: %v", ledger, err)
			}
			rebuilt = append(rebuilt, hs...)
		}
		for i := range rebuilt {
			if rebuilt[i] != hashes[i] {
				return fail(-1, "the stored hash tree of the %s ledger does not hold together at hash %d — it was changed after sealing", ledger, i)
			}
		}
		reader = hashSlice(func() []tlog.Hash { return hashes })
		if got, err := tlog.TreeHash(n, reader); err != nil || got != root {
			return fail(-1, "the stored hash tree of the %s ledger does not give the signed root — the ledger was rewritten after sealing", ledger)
		}
	}
	for k, rec := range l.records {
		i := int64(k)
		if rec.bad != "" {
			return fail(i, "%s record %d: %s", ledger, i, rec.bad)
		}
		if i >= n {
			return fail(i, "%s record %d was added after sealing: the signed head counts %d records", ledger, i, n)
		}
		if rec.index != i {
			if rec.index > i && !l.exported {
				return fail(i, "%s record %d is missing — it was deleted after sealing", ledger, i)
			}
			return fail(i, "%s record %d: in its place is record %d — records were dropped, added or moved after sealing", ledger, i, rec.index)
		}
		proof := rec.proof
		if !l.exported {
			var err error
			if proof, err = tlog.ProveRecord(n, i, reader); err != nil {
				return fail(i, "%s record %d: no inclusion proof from the stored hash tree: %v", ledger, i, err)
			}
		}
		if tlog.CheckRecord(proof, n, root, i, tlog.RecordHash(rec.data)) != nil {
			if l.exported {
				return fail(i, "%s record %d does not match the signed root — the record or its proof was changed after sealing", ledger, i)
			}
			return fail(i, "%s record %d does not match the signed root — the record was changed after sealing", ledger, i)
		}
	}
	if got := int64(len(l.records)); got < n {
		return fail(got, "%s record %d is missing: the signed head counts %d records, there are %d", ledger, got, n, got)
	}
	return nil
}

// VerifyStore checks every sealed day in the database: each signature with
// vkey (the store's own key when empty), each head, the chain from its
// first day, each record against its day's signed root — and each sealed
// record against the row it was sealed from: the day's crawl_log rows and,
// when human is given, the day's human tallies, so that a row changed,
// deleted or inserted after sealing is named. The first problem is
// returned as a *Problem; any other error means the check could not be
// made.
func VerifyStore(ctx context.Context, st *store.Store, vkey string, human HumanSource) (Summary, error) {
	if vkey == "" {
		var err error
		if vkey, err = VerifierKey(ctx, st); err != nil {
			return Summary{}, err
		}
	}
	v, err := ParseVerifierKey(vkey)
	if err != nil {
		return Summary{}, err
	}
	days, err := st.LedgerDays(ctx, "", "")
	if err != nil {
		return Summary{}, err
	}
	c := &chain{verifiers: note.VerifierList(v), fromStart: true}
	for i := range days {
		d := dayData{day: days[i].Day, note: []byte(days[i].Note), row: &days[i]}
		for _, l := range []struct {
			name string
			dst  *ledgerData
		}{{model.LedgerHuman, &d.human}, {model.LedgerCrawler, &d.crawler}} {
			sl, err := st.SealedLedger(ctx, d.day, l.name)
			if err != nil {
				return c.sum, err
			}
			for _, r := range sl.Records {
				l.dst.records = append(l.dst.records, recordData{index: r.Seq, data: []byte(r.Data)})
			}
			l.dst.hashes = sl.Hashes
		}
		if err := c.check(d); err != nil {
			return c.sum, err
		}
		if err := checkSources(ctx, st, d, human); err != nil {
			return c.sum, err
		}
	}
	return c.sum, nil
}

// checkSources compares a sealed day's records (already checked against
// the signed roots) with the rows they were sealed from, as they are now.
func checkSources(ctx context.Context, st *store.Store, d dayData, human HumanSource) error {
	logs, err := st.CrawlLogsBetween(ctx, dayStart(d.day), dayStart(NextDay(d.day)))
	if err != nil {
		return fmt.Errorf("%s: read crawl_log: %w", d.day, err)
	}
	rows := make(map[int64][]byte, len(logs))
	for _, l := range logs {
		rows[l.ID] = CrawlerRecord(l)
	}
	if err := compareRows(d.day, model.LedgerCrawler, "crawl_log row", d.crawler.records, rows, func(rec []byte) (int64, error) {
		var l crawlerLine
		err := json.Unmarshal(rec, &l)
		return l.ID, err
	}); err != nil {
		return err
	}
	if human == nil {
		return nil
	}
	tallies, err := human(ctx, d.day)
	if err != nil {
		return fmt.Errorf("%s: read the human tallies: %w", d.day, err)
	}
	rows = make(map[int64][]byte, len(tallies))
	for _, t := range tallies {
		rows[t.CardID] = HumanRecord(t)
	}
	return compareRows(d.day, model.LedgerHuman, "the human tally of card", d.human.records, rows, func(rec []byte) (int64, error) {
		var h humanLine
		err := json.Unmarshal(rec, &h)
		return h.Card, err
	})
}

// compareRows matches each sealed record to the source row of the same id
// and names the first record whose row differs or is gone, then the first
// row no record was sealed from.
func compareRows(day, ledger, what string, records []recordData, rows map[int64][]byte, id func([]byte) (int64, error)) error {
	fail := func(rec int64, format string, args ...any) error {
		return &Problem{Day: day, Ledger: ledger, Record: rec, Msg: fmt.Sprintf(format, args...)}
	}
	sealed := make(map[int64]bool, len(records))
	for k, rec := range records {
		i := int64(k)
		n, err := id(rec.data)
		if err != nil {
			return fail(i, "%s record %d is not a ledger record", ledger, i)
		}
		sealed[n] = true
		row, ok := rows[n]
		if !ok {
			return fail(i, "%s record %d: %s %d is gone — it was deleted after sealing", ledger, i, what, n)
		}
		if !bytes.Equal(row, rec.data) {
			return fail(i, "%s record %d differs from %s %d as it is now — the row was changed after sealing (sealed %s, now %s)",
				ledger, i, what, n, rec.data, row)
		}
	}
	var extra []int64
	for n := range rows {
		if !sealed[n] {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fail(int64(len(records)), "%s %d is not in the sealed %s ledger — it was added after sealing", what, extra[0], ledger)
	}
	return nil
}

// Names of the files in an exported day's directory.
const (
	NoteFile    = "head.note"
	KeyFile     = "verifier.key"
	HumanFile   = "human.jsonl"
	CrawlerFile = "crawler.jsonl"
)

// exportLine is one line of an exported ledger: the record exactly as it
// was hashed (a string, so that no JSON re-encoding can change its bytes),
// its index in the day's tree and its inclusion proof (hex hashes).
type exportLine struct {
	Index  int64    `json:"index"`
	Record string   `json:"record"`
	Proof  []string `json:"proof"`
}

// VerifyDir checks an export: dir is a directory of day directories (or one
// day directory). Each day's note is checked with vkey — or, when vkey is
// empty, with the key the export carries, which only proves the export is
// self-consistent (usedKey tells which key was used). Consecutive days must
// chain; the first day may continue an earlier head (Summary.ContinuesFrom).
func VerifyDir(dir, vkey string) (sum Summary, usedKey string, err error) {
	dayDirs, err := exportedDays(dir)
	if err != nil {
		return sum, "", err
	}
	if len(dayDirs) == 0 {
		return sum, "", fmt.Errorf("%s holds no exported days (directories named YYYY-MM-DD with %s)", dir, NoteFile)
	}
	if vkey == "" {
		for _, dd := range dayDirs {
			b, err := os.ReadFile(filepath.Join(dd, KeyFile))
			if err != nil {
				continue
			}
			if k := strings.TrimSpace(string(b)); vkey == "" {
				vkey = k
			} else if k != vkey {
				return sum, "", &Problem{Day: filepath.Base(dd), Record: -1,
					Msg: "the export's " + KeyFile + " differs from the other days' — pass the published key with --key"}
			}
		}
		if vkey == "" {
			return sum, "", fmt.Errorf("%s holds no %s: pass the published verifier key with --key", dir, KeyFile)
		}
	}
	v, err := ParseVerifierKey(vkey)
	if err != nil {
		return sum, "", err
	}
	c := &chain{verifiers: note.VerifierList(v)}
	for _, dd := range dayDirs {
		d := dayData{day: filepath.Base(dd)}
		if d.note, err = os.ReadFile(filepath.Join(dd, NoteFile)); err != nil {
			return c.sum, vkey, &Problem{Day: d.day, Record: -1, Msg: NoteFile + " is missing from the export"}
		}
		if d.human, err = readExported(filepath.Join(dd, HumanFile)); err != nil {
			return c.sum, vkey, err
		}
		if d.crawler, err = readExported(filepath.Join(dd, CrawlerFile)); err != nil {
			return c.sum, vkey, err
		}
		if err := c.check(d); err != nil {
			return c.sum, vkey, err
		}
	}
	return c.sum, vkey, nil
}

// exportedDays lists the day directories of dir, oldest first.
func exportedDays(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, NoteFile)); err == nil {
		return []string{filepath.Clean(dir)}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read export: %w", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := ParseDay(e.Name()); err == nil && e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

func readExported(path string) (ledgerData, error) {
	l := ledgerData{exported: true}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		l.missing = filepath.Base(path)
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read export: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		var el exportLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&el); err != nil {
			l.records = append(l.records, recordData{bad: fmt.Sprintf("%s line %d is not a ledger line (%v) — the file was changed", filepath.Base(path), line, err)})
			continue
		}
		rec := recordData{index: el.Index, data: []byte(el.Record)}
		for _, p := range el.Proof {
			h, err := parseHash(p)
			if err != nil {
				rec.bad = fmt.Sprintf("%s line %d has a malformed proof — the file was changed", filepath.Base(path), line)
				break
			}
			rec.proof = append(rec.proof, h)
		}
		l.records = append(l.records, rec)
	}
	if err := sc.Err(); err != nil {
		return l, fmt.Errorf("read export %s: %w", path, err)
	}
	return l, nil
}
