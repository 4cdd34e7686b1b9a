package corpus

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// ManifestFormat is the version of a release's layout.
const ManifestFormat = 1

// worksPerShard is how many works' texts one text shard holds.
const worksPerShard = 1000

// Files of a release directory besides its text shards.
const (
	manifestFile  = "manifest.json"
	worksFile     = "works.jsonl"
	heldFile      = "held.jsonl"
	searchFile    = "search.sqlite"
	citationsFile = "citations.jsonl"
)

// Manifest pins every file of a release by its SHA-256; the database pins
// the manifest.
type Manifest struct {
	Format  int            `json:"format"`
	Version string         `json:"version"`
	BuiltAt time.Time      `json:"built_at"`
	BuiltBy string         `json:"built_by"`
	Zhizhi  string         `json:"zhizhi"`
	Works   int            `json:"works"`
	Held    int            `json:"held"`
	Files   []ManifestFile `json:"files"`
}

// ManifestFile is one file of a release.
type ManifestFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// WorkEntry is one work of a release (a line of works.jsonl): what
// readers, search and citations need without the text, and where its text
// is (shard and line).
type WorkEntry struct {
	ID          string          `json:"id"`
	Rev         int             `json:"rev"`
	Title       string          `json:"title"`
	URL         string          `json:"url"`
	Snapshot    string          `json:"snapshot"`
	TextSHA256  string          `json:"text_sha256"`
	Chars       int             `json:"chars"`
	Access      string          `json:"access"`
	Site        string          `json:"site"`
	SiteName    string          `json:"site_name"`
	DocNo       string          `json:"doc_no,omitempty"`
	Publisher   string          `json:"publisher,omitempty"`
	PublishDate string          `json:"publish_date,omitempty"`
	FetchedAt   time.Time       `json:"fetched_at"`
	Attrs       json.RawMessage `json:"attrs"`
	Shard       string          `json:"shard"`
	Line        int             `json:"line"`
}

// TextLine is one line of a text shard.
type TextLine struct {
	ID   string `json:"id"`
	Rev  int    `json:"rev"`
	Text string `json:"text"`
}

// HeldEntry is a work left out of a release, and why (a line of
// held.jsonl).
type HeldEntry struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Reasons []string `json:"reasons"`
}

// Attrs is the attribute set kept with a revision.
type Attrs struct {
	IndexNo       string `json:"index_no,omitempty"`
	DocNo         string `json:"doc_no,omitempty"`
	Publisher     string `json:"publisher,omitempty"`
	PublishDate   string `json:"publish_date,omitempty"`
	EffectiveDate string `json:"effective_date,omitempty"`
	TopicWords    string `json:"topic_words,omitempty"`
	OpenCategory  string `json:"open_category,omitempty"`
	Category      string `json:"category,omitempty"`
	Subcategory   string `json:"subcategory,omitempty"`
	Source        string `json:"source,omitempty"`
	Channel       string `json:"channel,omitempty"`
	DeptCode      string `json:"dept_code,omitempty"`
	DeptName      string `json:"dept_name,omitempty"`
}

// HeldReasons says, in Chinese for the console, why a work cannot enter a
// release now; none means it can.
func HeldReasons(w *store.CorpusWorkRow) []string {
	var out []string
	switch w.Status {
	case store.WorkFrozen:
		out = append(out, "来源已要求撤下，作品已冻结")
	case store.WorkQuarantined:
		r := "已隔离"
		if w.StatusReason != "" {
			r += "：" + w.StatusReason
		}
		out = append(out, r)
	case store.WorkMerged:
		out = append(out, "已判定与 "+w.MergedInto+" 为同一作品")
	}
	switch w.SiteRights {
	case model.RightsPublicInfo:
	case model.RightsReference:
		out = append(out, "来源权利为“仅供参考”，不进入发布")
	default:
		out = append(out, "来源权利未确认（站点配置 corpus.rights）")
	}
	if w.Rev.QA != "pass" {
		var fails []string
		_ = json.Unmarshal(w.Rev.QAProblems, &fails)
		out = append(out, "质量检查未通过："+strings.Join(fails, "；"))
	}
	switch w.Review {
	case store.ReviewPending:
		out = append(out, fmt.Sprintf("有 %d 个重复候选待人工判定", w.OpenCandidates))
	case store.ReviewRejected:
		out = append(out, "人工审核未通过")
	}
	return out
}

// BuildResult is what a build did.
type BuildResult struct {
	Version string
	Dir     string
	Works   int
	Held    int
	Frozen  int // works frozen by takedowns on the way
}

// Progress reports long work: done of total (total 0 when unknown).
type Progress func(stage string, done, total int)

// ReleasesDir is where release directories live under the data dir.
func (c *Service) ReleasesDir() string { return filepath.Join(c.Store.DataDir(), "releases") }

// Build writes a new release of every work that may be published and
// records it as built. The directory is written under a temporary name
// and renamed into place; a build killed half way leaves no release.
func (c *Service) Build(ctx context.Context, actor string, progress Progress) (*BuildResult, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	frozen, err := c.applyTakedowns(ctx)
	if err != nil {
		return nil, err
	}
	version, err := c.claimVersion(ctx, actor)
	if err != nil {
		return nil, err
	}
	res, err := c.build(ctx, version, actor, frozen, progress)
	if err != nil {
		// The claimed row stays failed and says why.
		if aerr := c.Store.AbandonCorpusRelease(context.WithoutCancel(ctx), version, err); aerr != nil {
			err = fmt.Errorf("%w (and recording it failed: %v)", err, aerr)
		}
		return nil, err
	}
	return res, nil
}

func (c *Service) build(ctx context.Context, version, actor string, frozen int, progress Progress) (*BuildResult, error) {
	root := c.ReleasesDir()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".build-"+version+"-")
	if err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	w := &releaseWriter{dir: tmp}
	var entries []WorkEntry
	var held []HeldEntry
	progress("works", 0, 0)
	err = c.Store.EachCorpusWork(ctx, func(row *store.CorpusWorkRow) error {
		if reasons := HeldReasons(row); len(reasons) > 0 {
			held = append(held, HeldEntry{ID: row.ID, Title: row.Rev.Title, Reasons: reasons})
			return nil
		}
		text, err := c.revisionText(ctx, &row.Rev)
		if err != nil {
			return err
		}
		e, err := w.add(row, text)
		if err != nil {
			return err
		}
		entries = append(entries, *e)
		if len(entries)%500 == 0 {
			progress("works", len(entries), 0)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	if err := w.finish(); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	if err := writeJSONL(filepath.Join(tmp, worksFile), entries); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	if err := writeJSONL(filepath.Join(tmp, heldFile), held); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	progress("index", 0, len(entries))
	for _, step := range c.derived() {
		if err := step(ctx, tmp, entries); err != nil {
			return nil, fmt.Errorf("release build: %w", err)
		}
	}
	m := &Manifest{Format: ManifestFormat, Version: version, BuiltAt: c.now().UTC(), BuiltBy: actor, Zhizhi: c.Version,
		Works: len(entries), Held: len(held)}
	files, err := hashTree(tmp)
	if err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	m.Files = files
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(tmp, manifestFile), mb); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	progress("store", 0, len(files))
	var recs []store.CorpusReleaseFile
	shared := c.Store.Dialect() == store.DialectPostgres
	for i, f := range files {
		rec := store.CorpusReleaseFile{Path: f.Path, SHA256: f.SHA256, Bytes: f.Bytes}
		if shared {
			// Every machine materializes the release from the database.
			var err error
			if rec.BlobPath, _, err = c.Store.Blobs().PutFile(ctx, filepath.Join(tmp, filepath.FromSlash(f.Path))); err != nil {
				return nil, fmt.Errorf("release build: %w", err)
			}
		}
		recs = append(recs, rec)
		progress("store", i+1, len(files))
	}
	mpath, msum, err := c.Store.Blobs().Put(ctx, mb)
	if err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	// The version was claimed in the database by this build alone: a
	// directory of that name can only be a stranger's, and is not
	// replaced (a rename onto a directory that holds files fails).
	final := filepath.Join(root, version)
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	syncDir(root)
	events := make([]store.CorpusEvent, 0, len(entries))
	for _, e := range entries {
		events = append(events, store.CorpusEvent{WorkID: e.ID, Rev: e.Rev, Kind: "release", Actor: actor,
			Detail: "收入发布 " + version, Evidence: "release:" + version})
	}
	rel := &store.CorpusRelease{Version: version, Works: len(entries), Held: len(held), ManifestPath: mpath,
		ManifestSHA256: msum, BuiltBy: actor}
	if err := c.Store.FinishCorpusRelease(ctx, rel, recs, events); err != nil {
		os.RemoveAll(final)
		return nil, err
	}
	return &BuildResult{Version: version, Dir: final, Works: len(entries), Held: len(held), Frozen: frozen}, nil
}

// claimVersion names a new release by the display day and a serial —
// 20261206-1, 20261206-2, … — and claims it in the database, so that two
// builds at once never write the same release.
func (c *Service) claimVersion(ctx context.Context, actor string) (string, error) {
	day := c.localNow().Format("20060102")
	rels, err := c.Store.CorpusReleases(ctx)
	if err != nil {
		return "", err
	}
	n := 0
	for _, r := range rels {
		var k int
		if _, err := fmt.Sscanf(strings.TrimPrefix(r.Version, day+"-"), "%d", &k); err == nil &&
			strings.HasPrefix(r.Version, day+"-") && k > n {
			n = k
		}
	}
	for tries := 0; ; tries++ {
		v := fmt.Sprintf("%s-%d", day, n+1+tries)
		err := c.Store.ClaimCorpusRelease(ctx, v, actor)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, store.ErrCorpusRace) || tries == 20 {
			return "", err
		}
	}
}

// applyTakedowns freezes the active works that a carried-out takedown
// names (its whole site, or its pages), each with a takedown event.
func (c *Service) applyTakedowns(ctx context.Context) (int, error) {
	tds, err := c.Store.ListTakedowns(ctx, false)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range tds {
		if k.FrozenAt == nil {
			continue
		}
		urls := map[string]bool{}
		for _, u := range k.URLs {
			urls[u] = true
		}
		err := c.Store.EachCorpusWork(ctx, func(w *store.CorpusWorkRow) error {
			if w.Status != store.WorkActive || w.SiteID == nil || *w.SiteID != k.SiteID {
				return nil
			}
			if k.Scope == model.TakedownURLs && !urls[w.SourceURL] {
				return nil
			}
			n++
			return c.Store.SetCorpusWorkStatus(ctx, w.ID, store.WorkFrozen, "",
				fmt.Sprintf("撤下请求 #%d（%s）", k.ID, k.Requester), "system:takedown")
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// releaseWriter writes text shards.
type releaseWriter struct {
	dir   string
	shard int
	lines int
	f     *os.File
	bw    *bufio.Writer
}

func (w *releaseWriter) add(row *store.CorpusWorkRow, text string) (*WorkEntry, error) {
	if w.f == nil || w.lines == worksPerShard {
		if err := w.finish(); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(w.dir, "text"), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(w.dir, "text", fmt.Sprintf("%04d.jsonl", w.shard)))
		if err != nil {
			return nil, err
		}
		w.f, w.bw, w.lines = f, bufio.NewWriter(f), 0
		w.shard++
	}
	line, err := json.Marshal(TextLine{ID: row.ID, Rev: row.Rev.Rev, Text: text})
	if err != nil {
		return nil, err
	}
	if _, err := w.bw.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	var a Attrs
	_ = json.Unmarshal(row.Rev.Attrs, &a)
	e := &WorkEntry{ID: row.ID, Rev: row.Rev.Rev, Title: row.Rev.Title, URL: row.SourceURL, Snapshot: row.Rev.SnapshotID,
		TextSHA256: row.Rev.TextSHA256, Chars: row.Rev.Chars, Access: row.Access, Site: row.SiteCode, SiteName: row.SiteName,
		DocNo: row.Rev.DocNo, Publisher: row.Rev.Publisher, PublishDate: a.PublishDate, FetchedAt: row.FetchedAt.UTC(), Attrs: row.Rev.Attrs,
		Shard: fmt.Sprintf("text/%04d.jsonl", w.shard-1), Line: w.lines}
	w.lines++
	return e, nil
}

func (w *releaseWriter) finish() error {
	if w.f == nil {
		return nil
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// revisionText reads a revision's normalized text from its snapshot.
func (c *Service) revisionText(ctx context.Context, r *store.CorpusRevision) (string, error) {
	n, err := c.Store.CorpusSnapshot(ctx, r.SnapshotID)
	if err != nil {
		return "", err
	}
	b, err := c.readBlob(ctx, n.TextPath)
	if err != nil {
		return "", fmt.Errorf("text of %s revision %d: %w", r.WorkID, r.Rev, err)
	}
	if sha(b) != r.TextSHA256 {
		return "", fmt.Errorf("text of %s revision %d: its snapshot's bytes do not match the recorded SHA-256", r.WorkID, r.Rev)
	}
	return string(b), nil
}

func (c *Service) readBlob(ctx context.Context, p string) ([]byte, error) {
	r, err := c.Store.Blobs().Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func writeJSONL[T any](path string, rows []T) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return err
		}
	}
	return writeFileSync(path, buf.Bytes())
}

func writeFileSync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// hashTree lists every file under dir (but the manifest) with its SHA-256
// and size, by path.
func hashTree(dir string) ([]ManifestFile, error) {
	var out []ManifestFile
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == manifestFile {
			return nil
		}
		sum, n, err := hashFile(p)
		if err != nil {
			return err
		}
		out = append(out, ManifestFile{Path: rel, SHA256: sum, Bytes: n})
		return nil
	})
	slices.SortFunc(out, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	return out, err
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// ErrNoActive is returned when no release was ever activated.
var ErrNoActive = errors.New("no corpus release is active yet: build one with `zhizhi release build`, verify and activate it")
