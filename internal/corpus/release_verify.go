package corpus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"zhizhi/internal/store"
)

// VerifyProblem is one thing a verification found wrong, named.
type VerifyProblem struct {
	Where string // a file, "manifest", a work id, a snapshot
	What  string
}

func (p VerifyProblem) String() string { return p.Where + ": " + p.What }

// VerifyError lists every problem a verification found.
type VerifyError struct {
	Version  string
	Problems []VerifyProblem
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "release %s failed verification (%d problems)", e.Version, len(e.Problems))
	for i, p := range e.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "; … and %d more", len(e.Problems)-20)
			break
		}
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

// VerifyOptions choose how deep a verification goes.
type VerifyOptions struct {
	// SkipSnapshots leaves the works' WARC snapshots unread (activation
	// re-checks the release's own files only).
	SkipSnapshots bool
}

// Verify checks release version against what the database pinned: the
// manifest's SHA-256, every file's SHA-256 and size, every text line's
// hash against its work and revision, and (unless skipped) every work's
// snapshot: its WARC's digests and its text. It records the outcome: a
// release that fails is failed for good. The returned error is a
// *VerifyError when the release is damaged, another error when it could
// not be checked.
func (c *Service) Verify(ctx context.Context, version, actor string, opt VerifyOptions, progress Progress) error {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	rel, err := c.Store.CorpusRelease(ctx, version)
	if err != nil {
		return err
	}
	if rel.ManifestPath == "" {
		return fmt.Errorf("release %s never finished building (%s); build a new one", version, rel.VerifyError)
	}
	dir, err := c.materialize(ctx, rel)
	if err != nil {
		return err
	}
	problems, err := c.check(ctx, rel, dir, opt, progress)
	if err != nil {
		return err
	}
	var verr error
	if len(problems) > 0 {
		verr = &VerifyError{Version: version, Problems: problems}
	}
	if err := c.Store.SetCorpusReleaseVerified(ctx, version, verr, actor); err != nil {
		return err
	}
	return verr
}

func (c *Service) check(ctx context.Context, rel *store.CorpusRelease, dir string, opt VerifyOptions, progress Progress) ([]VerifyProblem, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var out []VerifyProblem
	add := func(where, format string, a ...any) {
		out = append(out, VerifyProblem{where, fmt.Sprintf(format, a...)})
	}
	mb, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		add(manifestFile, "cannot be read: %v", err)
		return out, nil
	}
	if got := sha(mb); got != rel.ManifestSHA256 {
		add(manifestFile, "SHA-256 is %s, the database recorded %s", got, rel.ManifestSHA256)
		return out, nil
	}
	var m Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		add(manifestFile, "is not valid JSON: %v", err)
		return out, nil
	}
	if m.Version != rel.Version || m.Works != rel.Works {
		add(manifestFile, "names release %s with %d works, the database %s with %d", m.Version, m.Works, rel.Version, rel.Works)
	}
	listed := map[string]bool{manifestFile: true}
	for i, f := range m.Files {
		listed[f.Path] = true
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		sum, n, err := hashFile(p)
		switch {
		case err != nil:
			add(f.Path, "cannot be read: %v", err)
		case n != f.Bytes:
			add(f.Path, "has %d bytes, the manifest %d", n, f.Bytes)
		case sum != f.SHA256:
			add(f.Path, "SHA-256 is %s, the manifest %s", sum, f.SHA256)
		}
		progress("files", i+1, len(m.Files))
	}
	present, err := hashTree(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range present {
		if !listed[f.Path] {
			add(f.Path, "is not in the manifest")
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	entries, err := readJSONL[WorkEntry](filepath.Join(dir, worksFile))
	if err != nil {
		add(worksFile, "%v", err)
		return out, nil
	}
	if len(entries) != m.Works {
		add(worksFile, "lists %d works, the manifest %d", len(entries), m.Works)
	}
	texts := map[string][]TextLine{}
	for i, e := range entries {
		lines, ok := texts[e.Shard]
		if !ok {
			lines, err = readJSONL[TextLine](filepath.Join(dir, filepath.FromSlash(e.Shard)))
			if err != nil {
				add(e.Shard, "%v", err)
				continue
			}
			texts = map[string][]TextLine{e.Shard: lines} // one shard at a time
		}
		if e.Line >= len(lines) || lines[e.Line].ID != e.ID || lines[e.Line].Rev != e.Rev {
			add(e.ID, "its text is not at %s line %d", e.Shard, e.Line)
			continue
		}
		if got := sha([]byte(lines[e.Line].Text)); got != e.TextSHA256 {
			add(e.ID, "text SHA-256 is %s, its revision %d recorded %s", got, e.Rev, e.TextSHA256)
		}
		rev, err := c.Store.CorpusRevision(ctx, e.ID, e.Rev)
		if err != nil {
			add(e.ID, "revision %d: %v", e.Rev, err)
		} else if rev.TextSHA256 != e.TextSHA256 || rev.SnapshotID != e.Snapshot {
			add(e.ID, "revision %d in the database has text %s and snapshot %s, the release %s and %s",
				e.Rev, rev.TextSHA256, rev.SnapshotID, e.TextSHA256, e.Snapshot)
		}
		if !opt.SkipSnapshots {
			for _, p := range c.checkSnapshot(ctx, e.Snapshot, e.TextSHA256) {
				out = append(out, VerifyProblem{e.ID, p})
			}
		}
		progress("works", i+1, len(entries))
	}
	for _, step := range c.derivedChecks() {
		out = append(out, step(ctx, dir, entries)...)
	}
	return out, nil
}

// checkSnapshot re-reads a snapshot's objects: its text against its
// SHA-256 and its WARC's records against their digests.
func (c *Service) checkSnapshot(ctx context.Context, id, textSHA string) []string {
	n, err := c.Store.CorpusSnapshot(ctx, id)
	if err != nil {
		return []string{fmt.Sprintf("snapshot %s: %v", id, err)}
	}
	var out []string
	if b, err := c.readBlob(ctx, n.TextPath); err != nil {
		out = append(out, fmt.Sprintf("snapshot %s text: %v", id, err))
	} else if sha(b) != textSHA {
		out = append(out, fmt.Sprintf("snapshot %s text: SHA-256 %s, recorded %s", id, sha(b), textSHA))
	}
	if b, err := c.readBlob(ctx, n.WARCPath); err != nil {
		out = append(out, fmt.Sprintf("snapshot %s WARC: %v", id, err))
	} else if sha(b) != n.WARCSHA256 {
		out = append(out, fmt.Sprintf("snapshot %s WARC: SHA-256 %s, recorded %s", id, sha(b), n.WARCSHA256))
	} else if err := verifyWARC(b); err != nil {
		out = append(out, fmt.Sprintf("snapshot %s WARC: %v", id, err))
	}
	return out
}

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []T
	for n := 1; sc.Scan(); n++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// materialize returns the directory of release rel, writing it from the
// database's blobs first when this machine does not have it (another
// machine built it). The files are checked against their hashes on the
// way; the directory appears whole or not at all.
func (c *Service) materialize(ctx context.Context, rel *store.CorpusRelease) (string, error) {
	dir := filepath.Join(c.ReleasesDir(), rel.Version)
	if _, err := os.Stat(filepath.Join(dir, manifestFile)); err == nil {
		return dir, nil
	}
	files, err := c.Store.CorpusReleaseFiles(ctx, rel.Version)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if f.BlobPath == "" {
			return "", fmt.Errorf("release %s: its directory %s is missing and the database keeps no copy of %s; "+
				"build a new release", rel.Version, dir, f.Path)
		}
	}
	if err := os.MkdirAll(c.ReleasesDir(), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(c.ReleasesDir(), ".fetch-"+rel.Version+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := c.copyBlob(ctx, f.BlobPath, p); err != nil {
			return "", fmt.Errorf("release %s file %s: %w", rel.Version, f.Path, err)
		}
	}
	mb, err := c.readBlob(ctx, rel.ManifestPath)
	if err != nil {
		return "", fmt.Errorf("release %s manifest: %w", rel.Version, err)
	}
	if err := writeFileSync(filepath.Join(tmp, manifestFile), mb); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, manifestFile)); serr == nil {
			return dir, nil // another process of this machine was quicker
		}
		return "", err
	}
	syncDir(c.ReleasesDir())
	return dir, nil
}

// Activate makes release version the active one, after checking its files
// again (a release changed since its verification is failed and refused).
// action is corpus.release.activate or corpus.release.rollback.
func (c *Service) Activate(ctx context.Context, version, actor string) (previous string, err error) {
	return c.activate(ctx, version, actor, "corpus.release.activate")
}

func (c *Service) activate(ctx context.Context, version, actor, action string) (string, error) {
	rel, err := c.Store.CorpusRelease(ctx, version)
	if err != nil {
		return "", err
	}
	if rel.State != store.ReleaseVerified {
		return "", fmt.Errorf("release %s is %s, not verified: run `zhizhi release verify %s` first", version, rel.State, version)
	}
	dir, err := c.materialize(ctx, rel)
	if err != nil {
		return "", err
	}
	problems, err := c.check(ctx, rel, dir, VerifyOptions{SkipSnapshots: true}, nil)
	if err != nil {
		return "", err
	}
	if len(problems) > 0 {
		verr := &VerifyError{Version: version, Problems: problems}
		if err := c.Store.SetCorpusReleaseVerified(ctx, version, verr, actor); err != nil {
			return "", err
		}
		return "", verr
	}
	if c.Switching != nil {
		c.Switching(version)
	}
	return c.Store.ActivateCorpusRelease(ctx, version, actor, action)
}

// Rollback makes the release active before the current one active again
// (or to, when given), in one step. It must be verified.
func (c *Service) Rollback(ctx context.Context, to, actor string) (from string, target string, err error) {
	act, err := c.Store.ActiveCorpusRelease(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", ErrNoActive
	}
	if err != nil {
		return "", "", err
	}
	if to == "" {
		to = act.Previous
	}
	if to == "" {
		return "", "", fmt.Errorf("release %s has no earlier active release to return to; name one with --to", act.Version)
	}
	from, err = c.activate(ctx, to, actor, "corpus.release.rollback")
	return from, to, err
}

// copyBlob writes blob p to the file dst, streaming (a release's index may
// be large), flushed to disk. The blob reader checks size and hash.
func (c *Service) copyBlob(ctx context.Context, p, dst string) error {
	r, err := c.Store.Blobs().Open(ctx, p)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
