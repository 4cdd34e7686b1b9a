package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// IsUnavailable reports whether err says the database could not be used
// at all — PostgreSQL refusing connections, shutting down or starting up,
// a connection broken under a query; SQLite "database is locked" beyond
// its busy timeout — rather than that a statement was wrong. Such an
// error is nobody's fault but the database's: the work that met it waits
// for the database (WaitAvailable) and goes on, and no site is blamed.
//
// Only the database drivers' own errors count: a web site refusing a
// connection is a network error of net/http, never this.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin, crash shutdown; cannot connect now
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED (and their extended codes)
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Our own stop or timeout, not the database's.
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	// pgconn's errors on a connection that broke under a query (the server
	// went away, the socket was reset) say whether the statement may be
	// retried; no error of net/http does.
	var pgconnErr interface{ SafeToRetry() bool }
	return errors.As(err, &pgconnErr)
}

// UnavailableError ends work that waited for the database longer than it
// would: the database stayed unreachable.
type UnavailableError struct {
	Waited time.Duration
	Err    error // the last error the database gave
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("database unreachable for %s: %v", e.Waited.Round(time.Second), e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// WaitAvailable waits until the database answers again after cause (an
// error IsUnavailable), asking it with a short backoff (a quarter second,
// doubling, at most 5 s between tries). It gives up when ctx ends or, with
// limit > 0, after limit: then the error is an *UnavailableError (or ctx's
// error). waited is how long it waited.
func (s *Store) WaitAvailable(ctx context.Context, limit time.Duration, cause error) (waited time.Duration, err error) {
	start := time.Now()
	pause := 250 * time.Millisecond
	last := cause
	for {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.db.PingContext(pingCtx)
		cancel()
		if err == nil {
			return time.Since(start), nil
		}
		if ctx.Err() != nil {
			return time.Since(start), ctx.Err()
		}
		last = err
		if limit > 0 && time.Since(start)+pause > limit {
			return time.Since(start), &UnavailableError{Waited: time.Since(start), Err: last}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start), ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Second)
	}
}
