package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Portal traffic: the per-day visitor rows BotScore reads, and the day's
// tallies that outlive them. The scoring itself lives in internal/ledger;
// this file only keeps rows. A visitor row is keyed by an HMAC the ledger
// computes; no client address reaches the store.

// Visitor bands, from BotScore.
const (
	BandHuman  = "human"
	BandReview = "review"
	BandBot    = "bot"
)

// Bands lists the bands in the order reports show them.
var Bands = []string{BandHuman, BandReview, BandBot}

// ErrDayClosed is returned when traffic arrives for a portal day whose
// tallies are already taken and whose salt is gone.
var ErrDayClosed = errors.New("this portal day is closed")

// VisitorEvents counts a visitor's page interaction events by type.
type VisitorEvents struct {
	Scroll, Pointer, Key, Click, Visibility int64
}

// VisitorDay is one visitor's day on the portal: what BotScore reads.
type VisitorDay struct {
	Day     string // YYYY-MM-DD, Asia/Shanghai
	Key     string // hex HMAC of (address, user agent) under the day's salt
	UAClass string // "browser" or "bot"

	Requests    int64 // every request
	Assets      int64 // static files (style sheet, script, images)
	Pages       int64 // HTML pages
	Clicks      int64 // click-throughs at the door
	Navigations int64 // pages and click-throughs: what the gaps are between
	LastNavAt   *time.Time

	// Gaps between navigations, in seconds: count, mean and the sum of
	// squared deviations from the mean (Welford's running form).
	GapCount     int64
	GapMean      float64
	GapM2        float64
	SleepWindows int64 // gaps of 30 s or more

	Events VisitorEvents

	Score int // BotScore in hundredths, 0–100
	Band  string
}

// CardCount is what one visitor did with one card: views of its page and
// click-throughs at its door.
type CardCount struct {
	CardID        int64
	Views, Clicks int64
}

// VisitorUpdate changes one visitor's day. Apply gets the visitor's row as
// stored (zero counters for a new visitor), changes it in place — counters,
// score and band — and returns what the visitor did per card.
type VisitorUpdate struct {
	Day, Key, UAClass string
	Apply             func(v *VisitorDay) []CardCount
}

const visitorColumns = `ua_class, requests, assets, pages, clicks, navigations, last_nav_at, gap_count,
	gap_mean, gap_m2, sleep_windows, ev_scroll, ev_pointer, ev_key, ev_click, ev_visibility, score, band`

// ApplyVisits runs the updates in one transaction, each on its visitor's
// row read under lock, so serve processes sharing the database never lose
// each other's counts. Updates for a closed day are dropped and counted:
// that day's tallies are final.
func (s *Store) ApplyVisits(ctx context.Context, ups []VisitorUpdate) (dropped int, err error) {
	if len(ups) == 0 {
		return 0, nil
	}
	// Rows are locked in key order, so two processes flushing the same
	// visitors cannot deadlock.
	ups = slices.Clone(ups)
	slices.SortStableFunc(ups, func(a, b VisitorUpdate) int {
		return cmp.Or(strings.Compare(a.Day, b.Day), strings.Compare(a.Key, b.Key))
	})
	err = s.WithTx(ctx, func(tx *Tx) error {
		dropped = 0
		closed := map[string]bool{}
		lock := ""
		if s.dialect == DialectPostgres {
			lock = " FOR UPDATE"
		}
		for _, up := range ups {
			isClosed, seen := closed[up.Day]
			if !seen {
				c, err := tx.portalDayClosed(ctx, up.Day)
				if err != nil {
					return err
				}
				closed[up.Day], isClosed = c, c
			}
			if isClosed {
				dropped++
				continue
			}
			if _, err := tx.c.exec(ctx, `INSERT INTO portal_visitor (day, visitor_key, ua_class, band)
				VALUES (?, ?, ?, ?) ON CONFLICT (day, visitor_key) DO NOTHING`,
				up.Day, up.Key, up.UAClass, BandReview); err != nil {
				return fmt.Errorf("visitor: %w", err)
			}
			v := VisitorDay{Day: up.Day, Key: up.Key}
			err := tx.c.queryRow(ctx, `SELECT `+visitorColumns+` FROM portal_visitor
				WHERE day = ? AND visitor_key = ?`+lock, up.Day, up.Key).Scan(visitorDest(&v)...)
			if err != nil {
				return fmt.Errorf("visitor: %w", err)
			}
			cards := up.Apply(&v)
			if _, err := tx.c.exec(ctx, `UPDATE portal_visitor SET requests = ?, assets = ?, pages = ?,
				clicks = ?, navigations = ?, last_nav_at = ?, gap_count = ?, gap_mean = ?, gap_m2 = ?,
				sleep_windows = ?, ev_scroll = ?, ev_pointer = ?, ev_key = ?, ev_click = ?, ev_visibility = ?,
				score = ?, band = ? WHERE day = ? AND visitor_key = ?`,
				v.Requests, v.Assets, v.Pages, v.Clicks, v.Navigations, s.tsPtr(v.LastNavAt), v.GapCount,
				v.GapMean, v.GapM2, v.SleepWindows, v.Events.Scroll, v.Events.Pointer, v.Events.Key,
				v.Events.Click, v.Events.Visibility, v.Score, v.Band, up.Day, up.Key); err != nil {
				return fmt.Errorf("visitor: %w", err)
			}
			for _, c := range cards {
				if c.Views == 0 && c.Clicks == 0 {
					continue
				}
				if _, err := tx.c.exec(ctx, `INSERT INTO portal_visit_card (day, visitor_key, card_id, views, clicks)
					VALUES (?, ?, ?, ?, ?) ON CONFLICT (day, visitor_key, card_id) DO UPDATE SET
					views = portal_visit_card.views + excluded.views, clicks = portal_visit_card.clicks + excluded.clicks`,
					up.Day, up.Key, c.CardID, c.Views, c.Clicks); err != nil {
					return fmt.Errorf("visitor card %d: %w", c.CardID, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("record portal visits: %w", err)
	}
	return dropped, nil
}

func visitorDest(v *VisitorDay) []any {
	return []any{&v.UAClass, &v.Requests, &v.Assets, &v.Pages, &v.Clicks, &v.Navigations,
		nullTimeCol{&v.LastNavAt}, &v.GapCount, &v.GapMean, &v.GapM2, &v.SleepWindows, &v.Events.Scroll,
		&v.Events.Pointer, &v.Events.Key, &v.Events.Click, &v.Events.Visibility, &v.Score, &v.Band}
}

func (t *Tx) portalDayClosed(ctx context.Context, day string) (bool, error) {
	var n int
	if err := t.c.queryRow(ctx, `SELECT COUNT(*) FROM portal_day WHERE day = ?`, day).Scan(&n); err != nil {
		return false, fmt.Errorf("portal day %s: %w", day, err)
	}
	return n > 0, nil
}

// PortalSalt returns the salt of day, storing fresh as that salt when the
// day has none yet; of several processes racing, the first one's wins. A
// closed day has no salt any more: ErrDayClosed.
func (s *Store) PortalSalt(ctx context.Context, day string, fresh []byte) ([]byte, error) {
	var salt []byte
	err := s.WithTx(ctx, func(tx *Tx) error {
		closed, err := tx.portalDayClosed(ctx, day)
		if err != nil {
			return err
		}
		if closed {
			return ErrDayClosed
		}
		if _, err := tx.c.exec(ctx, `INSERT INTO portal_salt (day, salt, created_at) VALUES (?, ?, ?)
			ON CONFLICT (day) DO NOTHING`, day, fresh, s.ts(s.now())); err != nil {
			return err
		}
		return tx.c.queryRow(ctx, `SELECT salt FROM portal_salt WHERE day = ?`, day).Scan(&salt)
	})
	if err != nil {
		return nil, fmt.Errorf("portal salt of %s: %w", day, err)
	}
	return salt, nil
}

// Visitor returns one visitor's row of an open day.
func (s *Store) Visitor(ctx context.Context, day, key string) (*VisitorDay, error) {
	v := VisitorDay{Day: day, Key: key}
	err := s.conn().queryRow(ctx, `SELECT `+visitorColumns+` FROM portal_visitor WHERE day = ? AND visitor_key = ?`,
		day, key).Scan(visitorDest(&v)...)
	if err != nil {
		return nil, fmt.Errorf("visitor of %s: %w", day, notFound(err))
	}
	return &v, nil
}

// Visitors returns every visitor of an open day, by key; a closed day has
// none left.
func (s *Store) Visitors(ctx context.Context, day string) ([]VisitorDay, error) {
	rows, err := s.conn().query(ctx, `SELECT visitor_key, `+visitorColumns+` FROM portal_visitor
		WHERE day = ? ORDER BY visitor_key`, day)
	if err != nil {
		return nil, fmt.Errorf("visitors of %s: %w", day, err)
	}
	defer rows.Close()
	var out []VisitorDay
	for rows.Next() {
		v := VisitorDay{Day: day}
		if err := rows.Scan(append([]any{&v.Key}, visitorDest(&v)...)...); err != nil {
			return nil, fmt.Errorf("visitors of %s: %w", day, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// OpenPortalDays lists the days that have a salt or visitors and are not
// closed yet, oldest first.
func (s *Store) OpenPortalDays(ctx context.Context) ([]string, error) {
	rows, err := s.conn().query(ctx, `SELECT day FROM portal_salt WHERE day NOT IN (SELECT day FROM portal_day)
		UNION SELECT day FROM portal_visitor WHERE day NOT IN (SELECT day FROM portal_day) ORDER BY day`)
	if err != nil {
		return nil, fmt.Errorf("open portal days: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("open portal days: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClosePortalDay takes day's tallies from its visitors' final state — the
// per-band totals and the humans' per-card views and click-throughs — and
// then deletes the day's salt, visitors and per-card detail, in one
// transaction. Closing a closed day does nothing and reports false.
func (s *Store) ClosePortalDay(ctx context.Context, day string) (closed bool, err error) {
	err = s.WithTx(ctx, func(tx *Tx) error {
		// The day row first: a second process closing the same day waits
		// here and then finds it closed.
		res, err := tx.c.exec(ctx, `INSERT INTO portal_day (day, closed_at) VALUES (?, ?) ON CONFLICT (day) DO NOTHING`,
			day, s.ts(s.now()))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		closed = true
		if _, err := tx.c.exec(ctx, `INSERT INTO portal_day_band (day, band, visitors, page_views, clicks)
			SELECT day, band, COUNT(*), SUM(pages), SUM(clicks) FROM portal_visitor WHERE day = ? GROUP BY day, band`,
			day); err != nil {
			return fmt.Errorf("band totals: %w", err)
		}
		if _, err := tx.c.exec(ctx, `INSERT INTO portal_human_tally (day, card_id, views, clicks)
			SELECT vc.day, vc.card_id, SUM(vc.views), SUM(vc.clicks) FROM portal_visit_card vc
			JOIN portal_visitor v ON v.day = vc.day AND v.visitor_key = vc.visitor_key
			WHERE vc.day = ? AND v.band = ? GROUP BY vc.day, vc.card_id`, day, BandHuman); err != nil {
			return fmt.Errorf("human tallies: %w", err)
		}
		for _, q := range []string{
			`DELETE FROM portal_visit_card WHERE day = ?`,
			`DELETE FROM portal_visitor WHERE day = ?`,
			`DELETE FROM portal_salt WHERE day = ?`,
		} {
			if _, err := tx.c.exec(ctx, q, day); err != nil {
				return fmt.Errorf("forget visitors: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("close portal day %s: %w", day, err)
	}
	return closed, nil
}

// SweepClosedPortalDays deletes visitors, per-card detail and salts that
// belong to closed days: what a flush racing the close of its day (another
// process, a clock a little behind) wrote after the close had deleted the
// rest. Their counts come too late for the day's tallies.
func (s *Store) SweepClosedPortalDays(ctx context.Context) (int64, error) {
	var n int64
	for _, q := range []string{
		`DELETE FROM portal_visit_card WHERE day IN (SELECT day FROM portal_day)`,
		`DELETE FROM portal_visitor WHERE day IN (SELECT day FROM portal_day)`,
		`DELETE FROM portal_salt WHERE day IN (SELECT day FROM portal_day)`,
	} {
		res, err := s.conn().exec(ctx, q)
		if err != nil {
			return n, fmt.Errorf("sweep closed portal days: %w", err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}

// DayTally is one card's views and click-throughs on one day by visitors
// scored human.
type DayTally struct {
	CardID        int64
	Views, Clicks int64
}

// HumanTallies returns day's card views and click-throughs by visitors in
// the human band, by card id: the closed day's final tallies, or for an
// open day the tallies so far.
func (s *Store) HumanTallies(ctx context.Context, day string) ([]DayTally, error) {
	var (
		rows *sql.Rows
		err  error
	)
	closed, err := s.portalDayIsClosed(ctx, day)
	if err != nil {
		return nil, err
	}
	if closed {
		rows, err = s.conn().query(ctx, `SELECT card_id, views, clicks FROM portal_human_tally
			WHERE day = ? ORDER BY card_id`, day)
	} else {
		rows, err = s.conn().query(ctx, `SELECT vc.card_id, CAST(SUM(vc.views) AS BIGINT), CAST(SUM(vc.clicks) AS BIGINT) FROM portal_visit_card vc
			JOIN portal_visitor v ON v.day = vc.day AND v.visitor_key = vc.visitor_key
			WHERE vc.day = ? AND v.band = ? GROUP BY vc.card_id ORDER BY vc.card_id`, day, BandHuman)
	}
	if err != nil {
		return nil, fmt.Errorf("human tallies of %s: %w", day, err)
	}
	defer rows.Close()
	var out []DayTally
	for rows.Next() {
		var t DayTally
		if err := rows.Scan(&t.CardID, &t.Views, &t.Clicks); err != nil {
			return nil, fmt.Errorf("human tallies of %s: %w", day, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Store) portalDayIsClosed(ctx context.Context, day string) (bool, error) {
	var n int
	if err := s.conn().queryRow(ctx, `SELECT COUNT(*) FROM portal_day WHERE day = ?`, day).Scan(&n); err != nil {
		return false, fmt.Errorf("portal day %s: %w", day, err)
	}
	return n > 0, nil
}

// PortalBand is one band's share of a day's portal traffic.
type PortalBand struct {
	Band      string
	Visitors  int64
	PageViews int64
	Clicks    int64 // click-throughs at the door
}

// PortalDay is a day's portal traffic split by band.
type PortalDay struct {
	Day    string
	Closed bool         // tallies final, visitors forgotten
	Bands  []PortalBand // human, review, bot, always all three
}

// Band returns the named band's numbers.
func (d PortalDay) Band(name string) PortalBand {
	for _, b := range d.Bands {
		if b.Band == name {
			return b
		}
	}
	return PortalBand{Band: name}
}

// PortalDayStats returns day's visitors, page views and click-throughs per
// band: the dashboard's human and bot numbers.
func (s *Store) PortalDayStats(ctx context.Context, day string) (PortalDay, error) {
	out := PortalDay{Day: day}
	closed, err := s.portalDayIsClosed(ctx, day)
	if err != nil {
		return out, err
	}
	out.Closed = closed
	var rows *sql.Rows
	if closed {
		rows, err = s.conn().query(ctx, `SELECT band, visitors, page_views, clicks FROM portal_day_band WHERE day = ?`, day)
	} else {
		rows, err = s.conn().query(ctx, `SELECT band, COUNT(*), CAST(SUM(pages) AS BIGINT), CAST(SUM(clicks) AS BIGINT) FROM portal_visitor
			WHERE day = ? GROUP BY band`, day)
	}
	if err != nil {
		return out, fmt.Errorf("portal stats of %s: %w", day, err)
	}
	defer rows.Close()
	got := map[string]PortalBand{}
	for rows.Next() {
		var b PortalBand
		if err := rows.Scan(&b.Band, &b.Visitors, &b.PageViews, &b.Clicks); err != nil {
			return out, fmt.Errorf("portal stats of %s: %w", day, err)
		}
		got[b.Band] = b
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("portal stats of %s: %w", day, err)
	}
	for _, name := range Bands {
		b := got[name]
		b.Band = name
		out.Bands = append(out.Bands, b)
	}
	return out, nil
}
