package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/tlog"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Export writes the sealed days from from to to (inclusive) under outDir,
// one directory per day holding the signed head note, the verifier key and
// each ledger's records with their inclusion proofs. Every day of the range
// must be sealed and no day directory may exist yet; a day's directory
// appears whole or not at all. It returns the directories written.
func Export(ctx context.Context, st *store.Store, from, to, outDir string) ([]string, error) {
	if to < from {
		return nil, fmt.Errorf("export: %s is before %s", to, from)
	}
	days, err := st.LedgerDays(ctx, from, to)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	want := from
	for _, d := range days {
		if d.Day != want {
			break
		}
		want = NextDay(want)
	}
	if want <= to {
		return nil, fmt.Errorf("export: %s is not sealed — a day is sealed once it is over (zhizhi audit seal)", want)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, d := range days {
		if _, err := os.Stat(filepath.Join(outDir, d.Day)); !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("export: %s already exists: remove it or choose another --out", filepath.Join(outDir, d.Day))
		}
	}
	vkey, err := VerifierKey(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var written []string
	for _, d := range days {
		path, err := exportDay(ctx, st, d, vkey, outDir)
		if err != nil {
			return written, fmt.Errorf("export %s: %w", d.Day, err)
		}
		written = append(written, path)
	}
	return written, nil
}

// exportDay writes one day into a hidden directory and renames it into
// place, so that an interrupted export leaves no half-written day.
func exportDay(ctx context.Context, st *store.Store, d model.LedgerDay, vkey, outDir string) (string, error) {
	tmp, err := os.MkdirTemp(outDir, "."+d.Day+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone after the rename; cleans up a failure
	if err := os.WriteFile(filepath.Join(tmp, NoteFile), []byte(d.Note), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, KeyFile), []byte(vkey+"\n"), 0o644); err != nil {
		return "", err
	}
	for _, l := range []struct {
		name, file string
		n          int64
	}{{model.LedgerHuman, HumanFile, d.HumanCount}, {model.LedgerCrawler, CrawlerFile, d.CrawlerCount}} {
		sl, err := st.SealedLedger(ctx, d.Day, l.name)
		if err != nil {
			return "", err
		}
		if err := writeLedger(filepath.Join(tmp, l.file), sl, l.n); err != nil {
			return "", fmt.Errorf("%s ledger: %w", l.name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(outDir, d.Day)
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}

// writeLedger writes each stored record with its proof against a tree of
// n records (the signed count), read from the stored hashes.
func writeLedger(path string, sl store.SealedLedger, n int64) error {
	hashes := make([]tlog.Hash, len(sl.Hashes))
	for i, row := range sl.Hashes {
		h, err := parseHash(row.Data)
		if err != nil || row.Seq != int64(i) {
			return fmt.Errorf("stored hash %d is damaged — run zhizhi audit verify", i)
		}
		hashes[i] = h
	}
	reader := hashSlice(func() []tlog.Hash { return hashes })
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range sl.Records {
		line := exportLine{Index: r.Seq, Record: r.Data, Proof: []string{}}
		// A record beyond the signed count has no proof; it is written as
		// stored so that verifying the export names it.
		if r.Seq >= 0 && r.Seq < n {
			proof, err := tlog.ProveRecord(n, r.Seq, reader)
			if err != nil {
				return fmt.Errorf("record %d: no inclusion proof (%v) — run zhizhi audit verify", r.Seq, err)
			}
			line.Proof = hexHashes([]tlog.Hash(proof))
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
