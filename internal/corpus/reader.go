package corpus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"zhizhi/internal/store"
)

// Release is a release opened for reading: its works, where each text
// is, and its derived indexes. It is immutable; many readers share it.
type Release struct {
	Version  string
	Dir      string
	Manifest Manifest
	Entries  []WorkEntry
	byID     map[string]int
	spans    map[string][2]int64 // "shard\x00line" → offset, length of the text line
	derived  releaseIndexes
}

// Active returns the active release, opened (and materialized on this
// machine when another built it). ErrNoActive when none was activated.
// The pointer is read on every call, so a serve process follows an
// activation or rollback made anywhere at its next request.
func (c *Service) Active(ctx context.Context) (*Release, error) {
	act, err := c.Store.ActiveCorpusRelease(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNoActive
	}
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, act.Version)
}

// Open returns release version opened for reading.
func (c *Service) Open(ctx context.Context, version string) (*Release, error) {
	c.mu.Lock()
	if r, ok := c.opened[version]; ok {
		c.mu.Unlock()
		return r, nil
	}
	c.mu.Unlock()
	rel, err := c.Store.CorpusRelease(ctx, version)
	if err != nil {
		return nil, err
	}
	dir, err := c.materialize(ctx, rel)
	if err != nil {
		return nil, err
	}
	mb, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", version, err)
	}
	if sha(mb) != rel.ManifestSHA256 {
		return nil, fmt.Errorf("release %s: its manifest was changed after it was built; run `zhizhi release verify %s`", version, version)
	}
	r := &Release{Version: version, Dir: dir, byID: map[string]int{}, spans: map[string][2]int64{}}
	if err := json.Unmarshal(mb, &r.Manifest); err != nil {
		return nil, fmt.Errorf("release %s manifest: %w", version, err)
	}
	if r.Entries, err = readJSONL[WorkEntry](filepath.Join(dir, worksFile)); err != nil {
		return nil, fmt.Errorf("release %s %s: %w", version, worksFile, err)
	}
	shards := map[string]bool{}
	for i, e := range r.Entries {
		r.byID[e.ID] = i
		shards[e.Shard] = true
	}
	for s := range shards {
		if err := r.indexShard(s); err != nil {
			return nil, err
		}
	}
	if err := c.openDerived(r); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opened == nil {
		c.opened = map[string]*Release{}
	}
	if old, ok := c.opened[version]; ok {
		r.closeDerived()
		return old, nil
	}
	c.opened[version] = r
	return r, nil
}

func (r *Release) indexShard(shard string) error {
	f, err := os.Open(filepath.Join(r.Dir, filepath.FromSlash(shard)))
	if err != nil {
		return fmt.Errorf("release %s: %w", r.Version, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var off int64
	for line := 0; ; line++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = br.ReadSlice('\n')
			b = append(append([]byte{}, b...), more...)
		}
		if len(b) > 0 {
			r.spans[fmt.Sprintf("%s\x00%d", shard, line)] = [2]int64{off, int64(len(b))}
			off += int64(len(b))
		}
		if err != nil {
			break
		}
	}
	return nil
}

// Work returns a work of the release by id.
func (r *Release) Work(id string) (*WorkEntry, bool) {
	i, ok := r.byID[id]
	if !ok {
		return nil, false
	}
	return &r.Entries[i], true
}

// Text returns a work's canonical text as the release holds it, checked
// against its SHA-256.
func (r *Release) Text(e *WorkEntry) (string, error) {
	sp, ok := r.spans[fmt.Sprintf("%s\x00%d", e.Shard, e.Line)]
	if !ok {
		return "", fmt.Errorf("release %s: no text for %s", r.Version, e.ID)
	}
	f, err := os.Open(filepath.Join(r.Dir, filepath.FromSlash(e.Shard)))
	if err != nil {
		return "", fmt.Errorf("release %s: %w", r.Version, err)
	}
	defer f.Close()
	b := make([]byte, sp[1])
	if _, err := f.ReadAt(b, sp[0]); err != nil {
		return "", fmt.Errorf("release %s: %w", r.Version, err)
	}
	var l TextLine
	if err := json.Unmarshal(b, &l); err != nil || l.ID != e.ID {
		return "", fmt.Errorf("release %s: the text of %s is damaged; run `zhizhi release verify %s`", r.Version, e.ID, r.Version)
	}
	if sha([]byte(l.Text)) != e.TextSHA256 {
		return "", fmt.Errorf("release %s: the text of %s does not match its SHA-256; run `zhizhi release verify %s`", r.Version, e.ID, r.Version)
	}
	return l.Text, nil
}
