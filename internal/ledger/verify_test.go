package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"zhizhi/internal/ledger"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

func otherKey(t *testing.T) string {
	t.Helper()
	_, vkey, err := note.GenerateKey(rand.Reader, "zhizhi-ledger")
	if err != nil {
		t.Fatal(err)
	}
	return vkey
}

// sealedWorld seals the 27th, 28th and 29th of November 2026.
func sealedWorld(t *testing.T, s *store.Store) world {
	t.Helper()
	w := newWorld(t, s)
	got, err := sealer(s, w, at("2026-11-30", 1, 0, 0, 0)).SealDue(context.Background())
	if err != nil || len(got) != 3 {
		t.Fatalf("seal: %v %v", got, err)
	}
	return w
}

// flipSignature changes one byte of the ed25519 signature in a signed note,
// keeping the key's name and hash, so the signature is still attributed to
// the key and fails to verify.
func flipSignature(t *testing.T, msg string) string {
	t.Helper()
	i := strings.LastIndex(msg, " ")
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(msg[i+1:]))
	if err != nil || len(sig) != 4+64 {
		t.Fatalf("not a signed note: %q", msg)
	}
	sig[20] ^= 0x01
	return msg[:i+1] + base64.StdEncoding.EncodeToString(sig) + "\n"
}

// sqlExec runs a tampering statement written with ? placeholders.
func sqlExec(t *testing.T, s *store.Store, query string, args ...any) {
	t.Helper()
	if s.Dialect() == store.DialectPostgres {
		var b strings.Builder
		n := 0
		for _, r := range query {
			if r == '?' {
				n++
				b.WriteString("$" + string(rune('0'+n)))
				continue
			}
			b.WriteRune(r)
		}
		query = b.String()
	}
	if _, err := s.DB().ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("tamper: %s: %v", query, err)
	}
}

func sqlString(t *testing.T, s *store.Store, query string) string {
	t.Helper()
	var v string
	if err := s.DB().QueryRowContext(context.Background(), query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

type wantProblem struct {
	day, ledger string
	record      int64
	msg         string
}

func checkProblem(t *testing.T, err error, want wantProblem) {
	t.Helper()
	var p *ledger.Problem
	if !errors.As(err, &p) {
		t.Fatalf("verify: %v, want %s: %s", err, want.day, want.msg)
	}
	if p.Day != want.day || p.Ledger != want.ledger || p.Record != want.record || !strings.Contains(p.Error(), want.msg) {
		t.Fatalf("verify named day %s, %s record %d: %q\nwant day %s, %s record %d: %q",
			p.Day, p.Ledger, p.Record, p.Error(), want.day, want.ledger, want.record, want.msg)
	}
}

// TestLedgerTamperStore: each change to the sealed days in the database is
// found, and the first tampered day and record named.
func TestLedgerTamperStore(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, s *store.Store)
		want   wantProblem
	}{
		{"change one crawler record", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `UPDATE ledger_record SET data = replace(data, '"bytes":9000', '"bytes":900')
				WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 2`)
		}, wantProblem{"2026-11-29", "crawler", 2, "2026-11-29: crawler record 2 does not match the signed root — the record was changed after sealing"}},
		{"change one human record", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `UPDATE ledger_record SET data = '{"card":9,"views":40,"clicks":1}'
				WHERE day = '2026-11-27' AND ledger = 'human' AND seq = 1`)
		}, wantProblem{"2026-11-27", "human", 1, "human record 1 does not match the signed root"}},
		{"change one day head", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `UPDATE ledger_day SET head = ? WHERE day = '2026-11-28'`, strings.Repeat("ab", 32))
		}, wantProblem{"2026-11-28", "", -1, "the stored day head differs from the signed head note"}},
		{"change one day's root", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `UPDATE ledger_day SET crawler_root = ? WHERE day = '2026-11-29'`, strings.Repeat("cd", 32))
		}, wantProblem{"2026-11-29", "", -1, "the stored day crawler_root differs"}},
		{"change one signature", func(t *testing.T, s *store.Store) {
			n := sqlString(t, s, `SELECT note FROM ledger_day WHERE day = '2026-11-28'`)
			sqlExec(t, s, `UPDATE ledger_day SET note = ? WHERE day = '2026-11-28'`, flipSignature(t, n))
		}, wantProblem{"2026-11-28", "", -1, "the signature on the day's head note does not verify"}},
		{"re-sign a head that does not follow from its roots", func(t *testing.T, s *store.Store) {
			// Only the holder of the signing key can do this: the signature
			// holds, the head line is not the hash of the note's own roots.
			skey := sqlString(t, s, `SELECT signer_key FROM ledger_key WHERE id = 1`)
			signer, err := note.NewSigner(skey)
			if err != nil {
				t.Fatal(err)
			}
			text := sqlString(t, s, `SELECT note FROM ledger_day WHERE day = '2026-11-28'`)
			text = text[:strings.Index(text, "\n\n")+1]
			i := strings.Index(text, "\nhead ")
			text = text[:i+6] + strings.Repeat("ab", 32) + "\n"
			msg, err := note.Sign(&note.Note{Text: text}, signer)
			if err != nil {
				t.Fatal(err)
			}
			sqlExec(t, s, `UPDATE ledger_day SET note = ?, head = ? WHERE day = '2026-11-28'`, string(msg), strings.Repeat("ab", 32))
		}, wantProblem{"2026-11-28", "", -1, "the signed day head does not follow from the day's roots and the previous head"}},
		{"drop a day", func(t *testing.T, s *store.Store) {
			for _, table := range []string{"ledger_hash", "ledger_record", "ledger_day"} {
				sqlExec(t, s, `DELETE FROM `+table+` WHERE day = '2026-11-28'`)
			}
		}, wantProblem{"2026-11-28", "", -1, "the day is missing from the chain: 2026-11-29 follows 2026-11-27"}},
		{"drop the first day", func(t *testing.T, s *store.Store) {
			for _, table := range []string{"ledger_hash", "ledger_record", "ledger_day"} {
				sqlExec(t, s, `DELETE FROM `+table+` WHERE day = '2026-11-27'`)
			}
		}, wantProblem{"2026-11-28", "", -1, "the days before it were dropped"}},
		{"swap two records", func(t *testing.T, s *store.Store) {
			a := sqlString(t, s, `SELECT data FROM ledger_record WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 0`)
			b := sqlString(t, s, `SELECT data FROM ledger_record WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 3`)
			sqlExec(t, s, `UPDATE ledger_record SET data = ? WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 0`, b)
			sqlExec(t, s, `UPDATE ledger_record SET data = ? WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 3`, a)
		}, wantProblem{"2026-11-29", "crawler", 0, "crawler record 0 does not match the signed root"}},
		{"append a record", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `INSERT INTO ledger_record (day, ledger, seq, data) SELECT day, ledger, 4, data FROM ledger_record
				WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 3`)
		}, wantProblem{"2026-11-29", "crawler", 4, "crawler record 4 was added after sealing: the signed head counts 4 records"}},
		{"delete a record", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `DELETE FROM ledger_record WHERE day = '2026-11-27' AND ledger = 'crawler' AND seq = 1`)
		}, wantProblem{"2026-11-27", "crawler", 1, "crawler record 1 is missing"}},
		{"rewrite a record with its leaf hash", func(t *testing.T, s *store.Store) {
			sqlExec(t, s, `UPDATE ledger_record SET data = '{}' WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 1`)
			sqlExec(t, s, `UPDATE ledger_hash SET hash = ? WHERE day = '2026-11-29' AND ledger = 'crawler' AND idx = 1`, strings.Repeat("11", 32))
		}, wantProblem{"2026-11-29", "crawler", -1, "the stored hash tree of the crawler ledger does not hold together at hash 2"}},
		{"rewrite a record with its whole tree", func(t *testing.T, s *store.Store) {
			// The record and every hash above it, consistently: only the
			// signed root tells.
			sl, err := s.SealedLedger(context.Background(), "2026-11-29", "crawler")
			if err != nil {
				t.Fatal(err)
			}
			var hashes []tlog.Hash
			r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
				out := make([]tlog.Hash, len(idx))
				for k, x := range idx {
					out[k] = hashes[x]
				}
				return out, nil
			})
			for i, rec := range sl.Records {
				data := rec.Data
				if i == 1 {
					data = "{}"
					sqlExec(t, s, `UPDATE ledger_record SET data = '{}' WHERE day = '2026-11-29' AND ledger = 'crawler' AND seq = 1`)
				}
				hs, err := tlog.StoredHashes(int64(i), []byte(data), r)
				if err != nil {
					t.Fatal(err)
				}
				hashes = append(hashes, hs...)
			}
			for i, h := range hashes {
				sqlExec(t, s, `UPDATE ledger_hash SET hash = ? WHERE day = '2026-11-29' AND ledger = 'crawler' AND idx = ?`,
					hex.EncodeToString(h[:]), i)
			}
		}, wantProblem{"2026-11-29", "crawler", -1, "the stored hash tree of the crawler ledger does not give the signed root — the ledger was rewritten after sealing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
				w := sealedWorld(t, s)
				ctx := context.Background()
				if _, err := ledger.VerifyStore(ctx, s, "", w.source); err != nil {
					t.Fatalf("before tampering: %v", err)
				}
				c.tamper(t, s)
				_, err := ledger.VerifyStore(ctx, s, "", w.source)
				checkProblem(t, err, c.want)
			})
		})
	}
}

// exportedLine mirrors one line of an exported ledger.
type exportedLine struct {
	Index  int64    `json:"index"`
	Record string   `json:"record"`
	Proof  []string `json:"proof"`
}

func editLedger(t *testing.T, path string, edit func(lines []exportedLine) []exportedLine) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []exportedLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var el exportedLine
		if err := json.Unmarshal([]byte(l), &el); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, el)
	}
	var out strings.Builder
	for _, l := range edit(lines) {
		j, _ := json.Marshal(l)
		out.Write(j)
		out.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerTamperExport: each change to an exported directory is found
// with the public key alone, and the first tampered day and record named.
func TestLedgerTamperExport(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   wantProblem
	}{
		{"change one crawler record", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-29", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				ls[2].Record = strings.Replace(ls[2].Record, `"bytes":9000`, `"bytes":900`, 1)
				return ls
			})
		}, wantProblem{"2026-11-29", "crawler", 2, "2026-11-29: crawler record 2 does not match the signed root"}},
		{"change one human record", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-27", "human.jsonl"), func(ls []exportedLine) []exportedLine {
				ls[0].Record = `{"card":3,"views":100,"clicks":2}`
				return ls
			})
		}, wantProblem{"2026-11-27", "human", 0, "human record 0 does not match the signed root"}},
		{"change one proof", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-27", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				ls[1].Proof[0] = strings.Repeat("00", 32)
				return ls
			})
		}, wantProblem{"2026-11-27", "crawler", 1, "crawler record 1 does not match the signed root — the record or its proof was changed"}},
		{"change one day head", func(t *testing.T, dir string) {
			editFile(t, filepath.Join(dir, "2026-11-28", "head.note"), func(s string) string {
				i := strings.Index(s, "\nhead ")
				return s[:i+6] + strings.Repeat("ab", 32) + s[i+6+64:]
			})
		}, wantProblem{"2026-11-28", "", -1, "the signature on the day's head note does not verify"}},
		{"change one root", func(t *testing.T, dir string) {
			editFile(t, filepath.Join(dir, "2026-11-29", "head.note"), func(s string) string {
				return strings.Replace(s, "\ncrawler 4 ", "\ncrawler 5 ", 1)
			})
		}, wantProblem{"2026-11-29", "", -1, "the signature on the day's head note does not verify"}},
		{"change one signature", func(t *testing.T, dir string) {
			editFile(t, filepath.Join(dir, "2026-11-28", "head.note"), func(s string) string { return flipSignature(t, s) })
		}, wantProblem{"2026-11-28", "", -1, "the signature on the day's head note does not verify"}},
		{"drop a day", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "2026-11-28")); err != nil {
				t.Fatal(err)
			}
		}, wantProblem{"2026-11-28", "", -1, "the day is missing from the chain: 2026-11-29 follows 2026-11-27 — the day was dropped after sealing"}},
		{"move a day", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "2026-11-29"), filepath.Join(dir, "2026-11-30")); err != nil {
				t.Fatal(err)
			}
		}, wantProblem{"2026-11-30", "", -1, "the head note is signed for 2026-11-29"}},
		{"swap two records", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-29", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				ls[0].Record, ls[3].Record = ls[3].Record, ls[0].Record
				return ls
			})
		}, wantProblem{"2026-11-29", "crawler", 0, "crawler record 0 does not match the signed root"}},
		{"swap two lines", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-29", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				ls[1], ls[2] = ls[2], ls[1]
				return ls
			})
		}, wantProblem{"2026-11-29", "crawler", 1, "crawler record 1: in its place is record 2"}},
		{"append a record", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-29", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				extra := ls[3]
				extra.Index = 4
				return append(ls, extra)
			})
		}, wantProblem{"2026-11-29", "crawler", 4, "crawler record 4 was added after sealing: the signed head counts 4 records"}},
		{"drop a record", func(t *testing.T, dir string) {
			editLedger(t, filepath.Join(dir, "2026-11-29", "crawler.jsonl"), func(ls []exportedLine) []exportedLine {
				return ls[:3]
			})
		}, wantProblem{"2026-11-29", "crawler", 3, "crawler record 3 is missing"}},
		{"remove a ledger file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "2026-11-27", "human.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, wantProblem{"2026-11-27", "human", -1, "human.jsonl is missing from the export"}},
	}
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sealedWorld(t, s)
		vkey, err := ledger.VerifierKey(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				dir := t.TempDir()
				if _, err := ledger.Export(ctx, s, "2026-11-27", "2026-11-29", dir); err != nil {
					t.Fatal(err)
				}
				if _, _, err := ledger.VerifyDir(dir, vkey); err != nil {
					t.Fatalf("before tampering: %v", err)
				}
				c.tamper(t, dir)
				_, _, err := ledger.VerifyDir(dir, vkey)
				checkProblem(t, err, c.want)
			})
		}
	})
}

// TestLedgerTamperSources: the sealed records stay true to the rows they
// were sealed from. A crawl_log row or a human tally changed, deleted or
// inserted after sealing leaves the sealed trees intact, and is named by
// day and record all the same.
func TestLedgerTamperSources(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, s *store.Store, w world)
		want   wantProblem
	}{
		{"add a byte to a request", func(t *testing.T, s *store.Store, w world) {
			sqlExec(t, s, `UPDATE crawl_log SET bytes = bytes + 1 WHERE bytes = 9000`)
		}, wantProblem{"2026-11-29", "crawler", 2, "crawler record 2 differs from crawl_log row"}},
		{"delete a request", func(t *testing.T, s *store.Store, w world) {
			sqlExec(t, s, `DELETE FROM crawl_log WHERE bytes = 5321`)
		}, wantProblem{"2026-11-27", "crawler", 1, "is gone — it was deleted after sealing"}},
		{"insert a request", func(t *testing.T, s *store.Store, w world) {
			if err := s.InsertCrawlLog(context.Background(), &model.CrawlLog{Host: "www.gdqy.gov.test", Purpose: "list",
				Method: "GET", Success: true, OccurredAt: at("2026-11-28", 12, 0, 0, 0)}); err != nil {
				t.Fatal(err)
			}
		}, wantProblem{"2026-11-28", "crawler", 0, "is not in the sealed crawler ledger — it was added after sealing"}},
		{"raise a human tally", func(t *testing.T, s *store.Store, w world) {
			w.human["2026-11-27"][0].Views++
		}, wantProblem{"2026-11-27", "human", 1, "human record 1 differs from the human tally of card 9"}},
		{"add a human tally", func(t *testing.T, s *store.Store, w world) {
			w.human["2026-11-28"] = append(w.human["2026-11-28"], model.HumanTally{CardID: 11, Views: 3})
		}, wantProblem{"2026-11-28", "human", 1, "the human tally of card 11 is not in the sealed human ledger"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
				w := sealedWorld(t, s)
				ctx := context.Background()
				if _, err := ledger.VerifyStore(ctx, s, "", w.source); err != nil {
					t.Fatalf("before tampering: %v", err)
				}
				c.tamper(t, s, w)
				_, err := ledger.VerifyStore(ctx, s, "", w.source)
				checkProblem(t, err, c.want)
			})
		})
	}
}

// TestDashboardSealedDayFromRecords: a sealed day's dashboard shows what
// was sealed; a crawl_log row edited afterwards does not change it, and the
// day says which record no longer matches.
func TestDashboardSealedDayFromRecords(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sealedWorld(t, s)
		now := at("2026-11-30", 1, 0, 0, 0)
		d, err := ledger.BuildDashboard(ctx, s, "2026-11-27", 1, now)
		if err != nil {
			t.Fatal(err)
		}
		// The 27th: one request reached a site (a 304 that spared 40000
		// bytes), two were held back.
		want := ledger.CrawlerDay{Requests: 1, BytesSaved: 40000, NotSent: 2, Hosts: 1}
		if !d.Day.Sealed || d.Day.Crawler != want || d.Day.Problem != "" {
			t.Fatalf("sealed day before the edit: sealed %v, %+v, problem %q; want %+v", d.Day.Sealed, d.Day.Crawler, d.Day.Problem, want)
		}
		sqlExec(t, s, `UPDATE crawl_log SET bytes_saved = 1, bytes = 777 WHERE bytes_saved = 40000`)
		d, err = ledger.BuildDashboard(ctx, s, "2026-11-27", 1, now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Day.Crawler != want || !strings.HasPrefix(d.Day.Problem, "2026-11-27: crawler record 2 differs from crawl_log row") {
			t.Fatalf("sealed day after the edit: %+v, problem %q; want %+v and crawler record 2 named", d.Day.Crawler, d.Day.Problem, want)
		}
	})
}
