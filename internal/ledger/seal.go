package ledger

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"zhizhi/internal/config/zone"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Grace is how long after midnight a day stays open: a request that started
// just before midnight may be logged a moment after it.
const Grace = 10 * time.Minute

// KeyName names the signing key in notes and verifier keys.
const KeyName = "zhizhi-ledger"

// noteTitle is the first line of every head note; the version lets a later
// format be told apart.
const noteTitle = "zhizhi ledger day seal v1"

// HumanSource returns the per-card tallies of views and click-throughs by
// visitors scored human on day (YYYY-MM-DD, Asia/Shanghai).
type HumanSource func(ctx context.Context, day string) ([]model.HumanTally, error)

// Sealer seals the days that are over.
type Sealer struct {
	Store *store.Store
	// Human gives the human ledger's tallies; nil seals empty human ledgers.
	Human HumanSource
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sealed, when set, hears of each day as soon as it is stored: a
	// backlog of months takes a while, and a person wants to see it move.
	Sealed func(day string)
}

// SealDue seals, oldest first, every day that is over (plus Grace) and not
// sealed yet, from the day after the last sealed one — or, before the
// first seal, from the day of the first crawl_log row. Days with no records
// are sealed too, so that the chain has no gaps. Another sealer working at
// the same time is harmless: each day is stored once, by whichever comes
// first, and the other moves on. It returns the days this call sealed.
func (s *Sealer) SealDue(ctx context.Context) (sealed []string, err error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	signer, err := s.signer(ctx)
	if err != nil {
		return nil, err
	}
	var day string
	last, ok, err := s.Store.LastLedgerDay(ctx)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if ok {
		day = NextDay(last.Day)
	} else {
		first, ok, err := s.Store.FirstCrawlLogAt(ctx)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		if !ok {
			return nil, nil
		}
		day = DayOf(first)
	}
	for ; !now().Before(dayStart(NextDay(day)).Add(Grace)); day = NextDay(day) {
		done, err := s.seal(ctx, signer, day)
		if err != nil {
			return sealed, err
		}
		if done {
			sealed = append(sealed, day)
			if s.Sealed != nil {
				s.Sealed(day)
			}
		}
	}
	return sealed, nil
}

func (s *Sealer) signer(ctx context.Context) (note.Signer, error) {
	skey, _, err := s.Store.LedgerKey(ctx, generateKey)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("seal: the stored signing key: %w", err)
	}
	return signer, nil
}

func generateKey() (string, string, error) { return note.GenerateKey(rand.Reader, KeyName) }

// VerifierKey returns the public key that checks the head notes, creating
// the key pair when the database has none yet. It is safe to publish.
func VerifierKey(ctx context.Context, st *store.Store) (string, error) {
	_, vkey, err := st.LedgerKey(ctx, generateKey)
	return vkey, err
}

// seal seals one day; false when another sealer stored it first.
func (s *Sealer) seal(ctx context.Context, signer note.Signer, day string) (bool, error) {
	logs, err := s.Store.CrawlLogsBetween(ctx, dayStart(day), dayStart(NextDay(day)))
	if err != nil {
		return false, fmt.Errorf("seal %s: %w", day, err)
	}
	crawler := make([][]byte, len(logs))
	for i, l := range logs {
		crawler[i] = CrawlerRecord(l)
	}
	var tallies []model.HumanTally
	if s.Human != nil {
		if tallies, err = s.Human(ctx, day); err != nil {
			return false, fmt.Errorf("seal %s: human ledger: %w", day, err)
		}
	}
	tallies = slices.Clone(tallies)
	slices.SortFunc(tallies, func(a, b model.HumanTally) int { return cmp.Compare(a.CardID, b.CardID) })
	human := make([][]byte, len(tallies))
	for i, t := range tallies {
		if i > 0 && tallies[i-1].CardID == t.CardID {
			return false, fmt.Errorf("seal %s: human ledger: card %d tallied twice", day, t.CardID)
		}
		human[i] = HumanRecord(t)
	}
	hTree, hRoot, err := buildTree(human)
	if err != nil {
		return false, fmt.Errorf("seal %s: %w", day, err)
	}
	cTree, cRoot, err := buildTree(crawler)
	if err != nil {
		return false, fmt.Errorf("seal %s: %w", day, err)
	}
	return s.Store.SealLedgerDay(ctx, day, func(prev *model.LedgerDay) (model.LedgerDay, map[string]store.LedgerTree, error) {
		var prevHead tlog.Hash
		if prev != nil {
			// The chain has no gaps: a day is sealed only on the one before.
			if prev.Day != PrevDay(day) {
				return model.LedgerDay{}, nil, fmt.Errorf("%s is not sealed, the last sealed day is %s", PrevDay(day), prev.Day)
			}
			if prevHead, err = parseHash(prev.Head); err != nil {
				return model.LedgerDay{}, nil, fmt.Errorf("the head of %s: %w", prev.Day, err)
			}
		}
		h := Head{Day: day, Prev: prevHead, HumanCount: int64(len(human)), HumanRoot: hRoot,
			CrawlerCount: int64(len(crawler)), CrawlerRoot: cRoot}
		h.Head = ChainHash(h.Prev, day, hRoot, cRoot)
		msg, err := note.Sign(&note.Note{Text: h.Text()}, signer)
		if err != nil {
			return model.LedgerDay{}, nil, fmt.Errorf("sign: %w", err)
		}
		d := model.LedgerDay{Day: day, PrevHead: hexHash(h.Prev), HumanCount: h.HumanCount, HumanRoot: hexHash(hRoot),
			CrawlerCount: h.CrawlerCount, CrawlerRoot: hexHash(cRoot), Head: hexHash(h.Head), Note: string(msg)}
		return d, map[string]store.LedgerTree{
			model.LedgerHuman:   {Records: strs(human), Hashes: hexHashes(hTree)},
			model.LedgerCrawler: {Records: strs(crawler), Hashes: hexHashes(cTree)},
		}, nil
	})
}

// crawlerLine fixes the crawler record's fields and their order.
type crawlerLine struct {
	ID      int64  `json:"id"`
	At      string `json:"at"`
	Host    string `json:"host"`
	Purpose string `json:"purpose"`
	Method  string `json:"method"`
	// Sent: the request reached the site (crawl_log gives it a duration);
	// false for one zhizhi held back itself (robots.txt, breaker, backoff).
	Sent       bool  `json:"sent"`
	Status     *int  `json:"status"`
	Bytes      int64 `json:"bytes"`
	BytesSaved int64 `json:"bytes_saved"`
	OK         bool  `json:"ok"`
}

// humanLine fixes the human record's fields: a card and its counts, nothing
// about the readers.
type humanLine struct {
	Card   int64 `json:"card"`
	Views  int64 `json:"views"`
	Clicks int64 `json:"clicks"`
}

// atLayout writes the request time in UTC with all six fraction digits, so
// that the same instant is always the same bytes.
const atLayout = "2006-01-02T15:04:05.000000Z07:00"

// CrawlerRecord is the canonical JSON line of one request in the crawler
// ledger (no trailing newline).
func CrawlerRecord(l model.CrawlLog) []byte {
	return canonical(crawlerLine{ID: l.ID, At: l.OccurredAt.UTC().Format(atLayout), Host: l.Host, Purpose: l.Purpose,
		Method: l.Method, Sent: l.DurationMS != nil, Status: l.HTTPStatus, Bytes: l.Bytes, BytesSaved: l.BytesSaved, OK: l.Success})
}

// HumanRecord is the canonical JSON line of one card's tally in the human
// ledger (no trailing newline).
func HumanRecord(t model.HumanTally) []byte {
	return canonical(humanLine{Card: t.CardID, Views: t.Views, Clicks: t.Clicks})
}

func canonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // fixed structs of strings and numbers always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// buildTree returns the stored hashes of the Merkle tree over records and
// its root.
func buildTree(records [][]byte) ([]tlog.Hash, tlog.Hash, error) {
	var hashes []tlog.Hash
	r := hashSlice(func() []tlog.Hash { return hashes })
	for i, rec := range records {
		hs, err := tlog.StoredHashes(int64(i), rec, r)
		if err != nil {
			return nil, tlog.Hash{}, fmt.Errorf("merkle tree: %w", err)
		}
		hashes = append(hashes, hs...)
	}
	root, err := tlog.TreeHash(int64(len(records)), r)
	if err != nil {
		return nil, tlog.Hash{}, fmt.Errorf("merkle tree: %w", err)
	}
	return hashes, root, nil
}

// hashSlice reads stored hashes from a slice that may still grow, refusing
// an index it does not hold instead of panicking: a verifier reads stored
// hashes that may have been tampered with.
func hashSlice(get func() []tlog.Hash) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		hs := get()
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x < 0 || x >= int64(len(hs)) {
				return nil, fmt.Errorf("stored hash %d is missing", x)
			}
			out[i] = hs[x]
		}
		return out, nil
	})
}

// ChainHash is a day's head: SHA-256 of the previous day's head, the date
// (10 ASCII bytes, YYYY-MM-DD), the human root and the crawler root.
func ChainHash(prev tlog.Hash, day string, humanRoot, crawlerRoot tlog.Hash) tlog.Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write([]byte(day))
	h.Write(humanRoot[:])
	h.Write(crawlerRoot[:])
	var out tlog.Hash
	copy(out[:], h.Sum(nil))
	return out
}

// Head is what a day's note states.
type Head struct {
	Day          string
	Prev         tlog.Hash
	HumanCount   int64
	HumanRoot    tlog.Hash
	CrawlerCount int64
	CrawlerRoot  tlog.Hash
	Head         tlog.Hash
}

// Text is the note text that gets signed:
//
//	zhizhi ledger day seal v1
//	day 2026-11-28
//	prev <previous head, hex>
//	human <record count> <root, hex>
//	crawler <record count> <root, hex>
//	head <head, hex>
func (h Head) Text() string {
	return fmt.Sprintf("%s\nday %s\nprev %s\nhuman %d %s\ncrawler %d %s\nhead %s\n", noteTitle, h.Day,
		hexHash(h.Prev), h.HumanCount, hexHash(h.HumanRoot), h.CrawlerCount, hexHash(h.CrawlerRoot), hexHash(h.Head))
}

// ParseHead reads the text of a head note.
func ParseHead(text string) (Head, error) {
	var h Head
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 6 || lines[0] != noteTitle {
		return h, errors.New("not a zhizhi day seal note")
	}
	field := func(i int, name string, n int) ([]string, error) {
		f := strings.Fields(lines[i])
		if len(f) != n+1 || f[0] != name {
			return nil, fmt.Errorf("line %d: want %q", i+1, name)
		}
		return f[1:], nil
	}
	f, err := field(1, "day", 1)
	if err != nil {
		return h, err
	}
	if _, err := time.Parse(time.DateOnly, f[0]); err != nil {
		return h, fmt.Errorf("line 2: day %q", f[0])
	}
	h.Day = f[0]
	if f, err = field(2, "prev", 1); err != nil {
		return h, err
	}
	if h.Prev, err = parseHash(f[0]); err != nil {
		return h, fmt.Errorf("line 3: %w", err)
	}
	counted := func(i int, name string, n *int64, root *tlog.Hash) error {
		f, err := field(i, name, 2)
		if err != nil {
			return err
		}
		if *n, err = strconv.ParseInt(f[0], 10, 64); err != nil || *n < 0 {
			return fmt.Errorf("line %d: count %q", i+1, f[0])
		}
		if *root, err = parseHash(f[1]); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		return nil
	}
	if err := counted(3, "human", &h.HumanCount, &h.HumanRoot); err != nil {
		return h, err
	}
	if err := counted(4, "crawler", &h.CrawlerCount, &h.CrawlerRoot); err != nil {
		return h, err
	}
	if f, err = field(5, "head", 1); err != nil {
		return h, err
	}
	if h.Head, err = parseHash(f[0]); err != nil {
		return h, fmt.Errorf("line 6: %w", err)
	}
	return h, nil
}

func hexHash(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

func parseHash(s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not a 64-digit hex hash", s)
	}
	copy(h[:], b)
	return h, nil
}

func hexHashes(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hexHash(h)
	}
	return out
}

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// shanghai cuts the sealed days. It is fixed, not ZHIZHI_TIMEZONE: a day
// already sealed and published must keep meaning the same 24 hours, so the
// display zone changes how times are shown, never which day a record is in.
var shanghai = zone.Shanghai

// DayOf returns the Asia/Shanghai calendar day of t, as YYYY-MM-DD.
func DayOf(t time.Time) string { return t.In(shanghai).Format(time.DateOnly) }

// dayStart returns the instant day begins in Asia/Shanghai; day is a valid
// YYYY-MM-DD.
func dayStart(day string) time.Time {
	t, _ := time.ParseInLocation(time.DateOnly, day, shanghai)
	return t
}

// NextDay returns the calendar day after day.
func NextDay(day string) string { return dayStart(day).AddDate(0, 0, 1).Format(time.DateOnly) }

// PrevDay returns the calendar day before day.
func PrevDay(day string) string { return dayStart(day).AddDate(0, 0, -1).Format(time.DateOnly) }

// ParseDay checks that s is a calendar day written YYYY-MM-DD.
func ParseDay(s string) (string, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return "", fmt.Errorf("%q is not a calendar day written YYYY-MM-DD", s)
	}
	return s, nil
}
