package corpus_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/corpustest"
	"zhizhi/internal/corpus/search"
	"zhizhi/internal/corpus/warc"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

const configDir = "../../demo/config"

// world crawls the simulated web's sites of the given codes into st and
// returns the service over it.
func world(t *testing.T, st *store.Store, sites ...string) (*corpus.Service, *crawltest.World) {
	t.Helper()
	w := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: configDir, Sim: sim.Options{Seed: 1}})
	corpustest.Crawl(t, w, sites...)
	return corpus.New(st, "test"), w
}

func readyArticles(t *testing.T, st *store.Store, site string) []model.Article {
	t.Helper()
	var out []model.Article
	for _, a := range crawltestArticles(t, st) {
		s, err := st.SiteByID(context.Background(), a.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		if s.SiteCode == site && a.Status == model.StatusReady {
			out = append(out, a)
		}
	}
	return out
}

func crawltestArticles(t *testing.T, st *store.Store) []model.Article {
	t.Helper()
	var out []model.Article
	for _, a := range crawltest.AllArticles(t, st) {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b model.Article) int { return int(a.ID - b.ID) })
	return out
}

// TestCorpusLifecycle takes the simulated web's articles into the corpus
// and carries them through QA, rights, revisions, releases, verification,
// activation, rollback and tampering, on both dialects.
func TestCorpusLifecycle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, _ := world(t, st, "lianzhou", "gov_ref", "news")
		lianzhou := readyArticles(t, st, "lianzhou")
		govref := readyArticles(t, st, "gov_ref")
		news := readyArticles(t, st, "news")
		if len(lianzhou) < 5 || len(govref) < 3 || len(news) < 3 {
			t.Fatalf("the simulated web gave %d lianzhou, %d gov_ref, %d news articles", len(lianzhou), len(govref), len(news))
		}

		// Intake of every full-access article, twice: the second changes nothing.
		sum, err := svc.IntakeTargets(ctx, nil, "user:tester", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Failures) > 0 {
			t.Fatalf("intake failures: %+v", sum.Failures)
		}
		if want := len(lianzhou) + len(govref); sum.NewWorks != want || sum.Looked != want {
			t.Fatalf("first intake: %+v, want %d new works (the full-access sites' ready articles)", sum, want)
		}
		again, err := svc.IntakeTargets(ctx, nil, "user:tester", nil)
		if err != nil {
			t.Fatal(err)
		}
		if again.Looked != 0 || again.NewWorks != 0 || again.NewRevisions != 0 {
			t.Fatalf("second intake did work again: %+v", again)
		}
		res, err := svc.IntakeArticle(ctx, lianzhou[0].ID, "user:tester")
		if err != nil {
			t.Fatal(err)
		}
		if res.NewWork || res.NewRevision || res.NewSnapshot {
			t.Fatalf("intake of an unchanged article: %+v", res)
		}

		// A summary site's article enters only by an explicit intake, and
		// its snapshot holds only the card's summary.
		card, err := st.CardByArticle(ctx, news[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		nres, err := svc.IntakeArticle(ctx, news[0].ID, "user:tester")
		if err != nil {
			t.Fatal(err)
		}
		nsnap, err := st.CorpusSnapshot(ctx, nres.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		if nsnap.Access != model.AccessSummary || nsnap.Rights != model.RightsUnknown {
			t.Fatalf("summary snapshot: access %s rights %s", nsnap.Access, nsnap.Rights)
		}
		ntext := blob(t, st, nsnap.TextPath)
		if ntext != corpus.Normalize(card.Summary) || strings.Contains(ntext, news[0].Title+"\n") && len(ntext) > len(card.Summary)+len(news[0].Title)+2 {
			t.Fatalf("summary snapshot text %q, want the card's summary %q", ntext, card.Summary)
		}
		recs, err := warc.Verify(strings.NewReader(blob(t, st, nsnap.WARCPath)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Type == "response" && r.PayloadDigest != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
				t.Fatalf("a summary site's WARC response carries a body (payload %s)", r.PayloadDigest)
			}
		}

		// A full-access snapshot's WARC holds the page the crawler stored.
		w0, err := st.CorpusWorkByAlias(ctx, "article:"+itoa(lianzhou[0].ID))
		if err != nil {
			t.Fatal(err)
		}
		rev1, err := st.CorpusRevision(ctx, w0.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := st.CorpusSnapshot(ctx, rev1.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		raw := blob(t, st, lianzhou[0].RawHTMLPath)
		if snap.RawSHA256 != sha(raw) || !strings.Contains(blob(t, st, snap.WARCPath), "") {
			t.Fatalf("snapshot raw %s, the article's page %s", snap.RawSHA256, sha(raw))
		}
		recs, err = warc.Verify(strings.NewReader(blob(t, st, snap.WARCPath)))
		if err != nil {
			t.Fatal(err)
		}
		var sawResponse bool
		for _, r := range recs {
			if r.Type == "response" {
				sawResponse = true
				if r.TargetURI != lianzhou[0].URL || r.PayloadDigest != "sha256:"+sha(raw) {
					t.Fatalf("WARC response %s %s, want %s sha256:%s", r.TargetURI, r.PayloadDigest, lianzhou[0].URL, sha(raw))
				}
			}
		}
		if !sawResponse {
			t.Fatal("the snapshot's WARC has no response record")
		}
		if snap.CrawlLogID == nil {
			t.Fatal("the snapshot names no crawl_log row")
		}

		// Provenance: every step, append-only.
		evs, err := st.CorpusEvents(ctx, w0.ID)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, e := range evs {
			kinds[e.Kind] = true
		}
		for _, k := range []string{"intake", "normalize", "qa", "rights"} {
			if !kinds[k] {
				t.Fatalf("work %s has no %s event: %+v", w0.ID, k, evs)
			}
		}
		if _, err := st.DB().ExecContext(ctx, "UPDATE corpus_event SET detail = 'rewritten'"); err == nil {
			t.Fatal("a provenance event was rewritten")
		}
		if _, err := st.DB().ExecContext(ctx, "DELETE FROM corpus_event"); err == nil {
			t.Fatal("provenance events were deleted")
		}

		// The first release: public_info works that pass QA and wait for
		// no decision; the reference site's and the summary site's are held.
		rel1, err := svc.Build(ctx, "user:admin", nil)
		if err != nil {
			t.Fatal(err)
		}
		releasable, heldRights := 0, 0
		if err := st.EachCorpusWork(ctx, func(w *store.CorpusWorkRow) error {
			reasons := corpus.HeldReasons(w)
			if len(reasons) == 0 {
				releasable++
			}
			if w.SiteCode != "lianzhou" && len(reasons) == 0 {
				t.Errorf("work %s of %s (rights %s) is releasable", w.ID, w.SiteCode, w.SiteRights)
			}
			if w.SiteCode != "lianzhou" {
				heldRights++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if rel1.Works != releasable || rel1.Works == 0 || rel1.Held != len(lianzhou)+len(govref)+1-releasable {
			t.Fatalf("release %s: %d works, %d held; %d releasable of %d", rel1.Version, rel1.Works, rel1.Held, releasable,
				len(lianzhou)+len(govref)+1)
		}
		if heldRights != len(govref)+1 {
			t.Fatalf("%d works held for rights, want %d", heldRights, len(govref)+1)
		}
		if _, err := svc.Activate(ctx, rel1.Version, "user:admin"); err == nil {
			t.Fatal("an unverified release was activated")
		}
		if err := svc.Verify(ctx, rel1.Version, "user:admin", corpus.VerifyOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Active(ctx); !errors.Is(err, corpus.ErrNoActive) {
			t.Fatalf("before any activation: %v", err)
		}
		if _, err := svc.Activate(ctx, rel1.Version, "user:admin"); err != nil {
			t.Fatal(err)
		}
		active, err := svc.Active(ctx)
		if err != nil || active.Version != rel1.Version {
			t.Fatalf("active: %v %v", active, err)
		}

		// Search answers from the active release exactly as a scan of its
		// texts does, for one and two characters.
		texts := map[string]string{}
		for i := range active.Entries {
			e := &active.Entries[i]
			txt, err := active.Text(e)
			if err != nil {
				t.Fatal(err)
			}
			texts[e.ID] = e.Title + "\n" + txt
		}
		for _, q := range []string{"政", "通知", "市"} {
			got := searchAll(t, active, q)
			want := map[string]bool{}
			for id, txt := range texts {
				if strings.Contains(txt, q) {
					want[id] = true
				}
			}
			if !sameSet(got, want) {
				t.Fatalf("search %q: %d hits, a scan finds %d", q, len(got), len(want))
			}
		}

		// New content is a new revision of the same work.
		target := active.Entries[0]
		var aid int64
		if err := st.DB().QueryRowContext(ctx, rebind(st, "SELECT article_id FROM corpus_work WHERE id = ?"), target.ID).Scan(&aid); err != nil {
			t.Fatal(err)
		}
		newText := "第二版正文：本通知自发布之日起施行，原文件同时废止。" + strings.Repeat("内容更新。", 20)
		later := "strftime('%Y-%m-%dT%H:%M:%f000Z', 'now', '+1 hour')"
		if st.Dialect() == store.DialectPostgres {
			later = "now() + interval '1 hour'"
		}
		if _, err := st.DB().ExecContext(ctx, rebind(st, "UPDATE article SET content_text = ?, updated_at = "+later+" WHERE id = ?"),
			newText, aid); err != nil {
			t.Fatal(err)
		}
		r2, err := svc.IntakeArticle(ctx, aid, "user:tester")
		if err != nil {
			t.Fatal(err)
		}
		if r2.WorkID != target.ID || r2.Rev != target.Rev+1 || !r2.NewRevision || r2.NewWork {
			t.Fatalf("changed article: %+v, want work %s revision %d", r2, target.ID, target.Rev+1)
		}

		rel2, err := svc.Build(ctx, "user:admin", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Verify(ctx, rel2.Version, "user:admin", corpus.VerifyOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Activate(ctx, rel2.Version, "user:admin"); err != nil {
			t.Fatal(err)
		}
		if got := searchAll(t, mustActive(t, svc), "原文件同时废止"); !got[target.ID] {
			t.Fatalf("release %s does not find the new revision's text", rel2.Version)
		}
		from, to, err := svc.Rollback(ctx, "", "user:admin")
		if err != nil || from != rel2.Version || to != rel1.Version {
			t.Fatalf("rollback: from %s to %s: %v", from, to, err)
		}
		back := mustActive(t, svc)
		if back.Version != rel1.Version || len(searchAll(t, back, "原文件同时废止")) != 0 {
			t.Fatalf("after rollback the active release is %s and finds the newer text", back.Version)
		}
		e, ok := back.Work(target.ID)
		if !ok || e.Rev != target.Rev {
			t.Fatalf("after rollback work %s is at revision %v", target.ID, e)
		}

		// A tampered shard fails verification, by name, and can no longer
		// be activated.
		shard := filepath.Join(svc.ReleasesDir(), rel2.Version, "text", "0000.jsonl")
		b, err := os.ReadFile(shard)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shard, bytes.Replace(b, []byte("施行"), []byte("废止"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		err = svc.Verify(ctx, rel2.Version, "user:admin", corpus.VerifyOptions{}, nil)
		var verr *corpus.VerifyError
		if !errors.As(err, &verr) || !strings.Contains(err.Error(), "text/0000.jsonl") {
			t.Fatalf("verify of a tampered shard: %v", err)
		}
		if _, err := svc.Activate(ctx, rel2.Version, "user:admin"); err == nil {
			t.Fatal("a failed release was activated")
		}

		// A tampered WARC is named by verification.
		snapRow, err := st.CorpusSnapshot(ctx, rel1Entry(t, svc, rel1.Version).Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		tamperBlob(t, st, snapRow.WARCPath)
		err = svc.Verify(ctx, rel1.Version, "user:admin", corpus.VerifyOptions{}, nil)
		if !errors.As(err, &verr) || !strings.Contains(err.Error(), "snapshot "+snapRow.ID+" WARC") {
			t.Fatalf("verify of a release whose snapshot's WARC was changed: %v", err)
		}

		// The same document stored twice (another address, the same text,
		// 文号 and publisher) is a duplicate candidate, never merged by the
		// system; a person's decision is.
		var orig model.Article
		for _, a := range lianzhou {
			if a.DocNo != "" && a.Publisher != "" {
				orig = a
				break
			}
		}
		if orig.ID == 0 {
			t.Fatal("no lianzhou article has a 文号 and a publisher")
		}
		dup := orig
		dup.ID, dup.URL, dup.URLHash, dup.NativePostID = 0, orig.URL+"?copy=1", sha(orig.URL+"?copy=1"), ""
		dupID, _, err := st.UpsertArticle(ctx, &dup)
		if err != nil {
			t.Fatal(err)
		}
		dres, err := svc.IntakeArticle(ctx, dupID, "user:tester")
		if err != nil {
			t.Fatal(err)
		}
		if !dres.NewWork || dres.Candidates < 2 {
			t.Fatalf("intake of a copy: %+v, want a new work with exact and 文号 candidates", dres)
		}
		cands, err := st.ListCorpusCandidates(ctx, store.CandidateOpen, 100)
		if err != nil {
			t.Fatal(err)
		}
		kinds = map[string]bool{}
		var exactID int64
		for _, k := range cands {
			if k.WorkA == dres.WorkID || k.WorkB == dres.WorkID {
				kinds[k.Kind] = true
				if k.Kind == "exact" {
					exactID = k.ID
				}
			}
		}
		if !kinds["exact"] || !kinds["biblio"] {
			t.Fatalf("candidates of the copy: %v", kinds)
		}
		dw, err := st.CorpusWorkRow(ctx, dres.WorkID)
		if err != nil {
			t.Fatal(err)
		}
		if dw.Review != store.ReviewPending || dw.Status != store.WorkActive || len(corpus.HeldReasons(dw)) == 0 {
			t.Fatalf("the copy: review %s status %s held %v", dw.Review, dw.Status, corpus.HeldReasons(dw))
		}
		// The work found first waits for the decision too.
		ow, err := st.CorpusWorkByAlias(ctx, "article:"+itoa(orig.ID))
		if err != nil {
			t.Fatal(err)
		}
		if ow.Review != store.ReviewPending {
			t.Fatalf("the original of a copy: review %s, want pending until a person decides", ow.Review)
		}
		if merged, byPeople, err := st.CountCorpusMerges(ctx); err != nil || merged != 0 || byPeople != 0 {
			t.Fatalf("before any decision: %d merged, %d by people: %v", merged, byPeople, err)
		}
		if err := st.DecideCorpusCandidate(ctx, exactID, store.CandidateSame, "user:reviewer"); err != nil {
			t.Fatal(err)
		}
		if err := st.DecideCorpusCandidate(ctx, exactID, store.CandidateDifferent, "user:reviewer"); err == nil {
			t.Fatal("a decided candidate was decided again")
		}
		if merged, byPeople, err := st.CountCorpusMerges(ctx); err != nil || merged != 1 || byPeople != 1 {
			t.Fatalf("after one decision: %d merged, %d by people: %v", merged, byPeople, err)
		}
		// The decision answers the pair, whatever the evidence: the 文号
		// candidate of the same two works is decided with it.
		open, err := st.ListCorpusCandidates(ctx, store.CandidateOpen, 100)
		if err != nil {
			t.Fatal(err)
		}
		var decided store.CorpusCandidate
		for _, k := range cands {
			if k.ID == exactID {
				decided = k
			}
		}
		for _, k := range open {
			if k.WorkA == decided.WorkA && k.WorkB == decided.WorkB {
				t.Fatalf("candidate %d (%s) of the decided pair is still open", k.ID, k.Kind)
			}
		}

		// A quarantined work stays out of the next release, and says why.
		q := active.Entries[len(active.Entries)-1].ID
		if err := st.SetCorpusWorkStatus(ctx, q, store.WorkQuarantined, "", "待核实来源", "user:admin"); err != nil {
			t.Fatal(err)
		}
		rel3, err := svc.Build(ctx, "user:admin", nil)
		if err != nil {
			t.Fatal(err)
		}
		held, err := os.ReadFile(filepath.Join(rel3.Dir, "held.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(held), q) || !strings.Contains(string(held), "已隔离：待核实来源") {
			t.Fatalf("release %s does not hold back the quarantined %s:\n%s", rel3.Version, q, held)
		}

		// Intake rules: a rule for one target takes in only its articles.
		rule := &store.CorpusIntakeRule{Name: "连州通知公告", TargetCodes: []string{"lianzhou_tzgg"}, Enabled: true, CreatedBy: "user:admin"}
		if err := st.CreateCorpusIntakeRule(ctx, rule); err != nil {
			t.Fatal(err)
		}
		if sum, err := svc.RunRules(ctx, nil); err != nil || len(sum.Failures) > 0 || sum.NewWorks != 0 {
			t.Fatalf("rules over a corpus that holds everything: %+v %v", sum, err)
		}
		if err := svc.CheckRuleTargets(ctx, []string{"no_such_target"}); err == nil {
			t.Fatal("a rule for a target that does not exist was accepted")
		}

		// An acquisition result of a full-access site's page becomes a
		// revision of the work of that address; one of a summary site, or
		// of a host nobody configured, is refused.
		page := lianzhou[2]
		pw, err := st.CorpusWorkByAlias(ctx, "url:"+page.URL)
		if err != nil {
			t.Fatal(err)
		}
		saveFetched := func(u string, body string) {
			t.Helper()
			if err := st.SaveFetchSnapshot(ctx, &store.FetchSnapshot{URL: u, FinalURL: u, Status: 200,
				ContentType: "text/html; charset=utf-8", Tier: "direct", FetchedAt: time.Now()}, []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		saveFetched(page.URL, blob(t, st, page.RawHTMLPath))
		fres, err := svc.IntakeFetch(ctx, page.URL, "apikey:1(agent)")
		if err != nil {
			t.Fatal(err)
		}
		if fres.WorkID != pw.ID || fres.NewWork {
			t.Fatalf("acquisition result of %s: %+v, want work %s", page.URL, fres, pw.ID)
		}
		if again, err := svc.IntakeFetch(ctx, page.URL, "apikey:1(agent)"); err != nil || again.NewRevision || again.NewSnapshot {
			t.Fatalf("the same acquisition result again: %+v %v", again, err)
		}
		saveFetched(news[1].URL, "<html><body><h1>新闻</h1><p>"+strings.Repeat("正文", 50)+"</p></body></html>")
		if _, err := svc.IntakeFetch(ctx, news[1].URL, "apikey:1(agent)"); !errors.Is(err, corpus.ErrNotCopyable) {
			t.Fatalf("acquisition result of a summary site: %v", err)
		}
		saveFetched("http://www.elsewhere.test/a.html", "<html><body><p>"+strings.Repeat("正文", 50)+"</p></body></html>")
		if _, err := svc.IntakeFetch(ctx, "http://www.elsewhere.test/a.html", "apikey:1(agent)"); !errors.Is(err, corpus.ErrNotCopyable) {
			t.Fatalf("acquisition result of an unconfigured host: %v", err)
		}

		// A takedown at the source, once carried out, freezes its works at
		// the next build, recorded in their provenance; they leave the
		// release.
		gone := active.Entries[1]
		k := &model.Takedown{SiteID: lianzhou[0].SiteID, Scope: model.TakedownURLs, URLs: []string{gone.URL},
			Requester: "连州市人民政府办公室", Contact: "0763-0000000", Reason: "页面已撤下", RecordedBy: "user:admin"}
		if err := st.RecordTakedown(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := st.FreezeTakedown(ctx, k.ID, "user:admin"); err != nil {
			t.Fatal(err)
		}
		rel4, err := svc.Build(ctx, "user:admin", nil)
		if err != nil {
			t.Fatal(err)
		}
		if rel4.Frozen != 1 {
			t.Fatalf("build after a takedown of one page froze %d works", rel4.Frozen)
		}
		r4, err := svc.Open(ctx, rel4.Version)
		if err != nil {
			t.Fatal(err)
		}
		if _, in := r4.Work(gone.ID); in {
			t.Fatalf("release %s holds %s, taken down at its source", rel4.Version, gone.ID)
		}
		gevs, err := st.CorpusEvents(ctx, gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := gevs[len(gevs)-1]; last.Kind != "takedown" || !strings.Contains(last.Detail, "撤下请求") {
			t.Fatalf("the frozen work's last event: %+v", last)
		}

		// With PostgreSQL a release is kept in the database too: a machine
		// without its directory writes it from there, every hash checked.
		if st.Dialect() == store.DialectPostgres {
			if err := os.RemoveAll(filepath.Join(svc.ReleasesDir(), rel4.Version)); err != nil {
				t.Fatal(err)
			}
			other := corpus.New(st, "test")
			if err := other.Verify(ctx, rel4.Version, "user:admin", corpus.VerifyOptions{}, nil); err != nil {
				t.Fatalf("release %s from the database: %v", rel4.Version, err)
			}
			if _, err := os.Stat(filepath.Join(svc.ReleasesDir(), rel4.Version, "search.sqlite")); err != nil {
				t.Fatal(err)
			}
		}

		// No work was ever merged by the system.
		merged, byPeople, err := st.CountCorpusMerges(ctx)
		if err != nil || merged != byPeople {
			t.Fatalf("merges %d, by people %d: %v", merged, byPeople, err)
		}
	})
}

func rel1Entry(t *testing.T, svc *corpus.Service, version string) corpus.WorkEntry {
	t.Helper()
	r, err := svc.Open(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	return r.Entries[0]
}

// tamperBlob changes one byte in the middle of a blob where it is kept:
// the file under the data directory, or its first part in PostgreSQL.
func tamperBlob(t *testing.T, st *store.Store, p string) {
	t.Helper()
	ctx := context.Background()
	if st.Dialect() == store.DialectPostgres {
		sum := filepath.Base(p)
		if _, err := st.DB().ExecContext(ctx, `UPDATE blob_chunk SET data = overlay(data placing '\x00'::bytea
			from (length(data) / 2)::int for 1) WHERE sha256 = $1 AND seq = 0`, sum); err != nil {
			t.Fatal(err)
		}
		return
	}
	full := filepath.Join(st.DataDir(), filepath.FromSlash(p))
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := os.Chmod(full, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustActive(t *testing.T, svc *corpus.Service) *corpus.Release {
	t.Helper()
	r, err := svc.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func searchAll(t *testing.T, r *corpus.Release, q string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for off := 0; ; off += search.MaxLimit {
		res, err := r.Search(context.Background(), search.Query{Text: q, Limit: search.MaxLimit, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out[h.ID] = true
		}
		if len(res.Hits) < search.MaxLimit {
			return out
		}
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func blob(t *testing.T, st *store.Store, p string) string {
	t.Helper()
	r, err := st.Blobs().Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sha(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

// rebind writes a query's ? placeholders as PostgreSQL's $1, $2, … there.
func rebind(st *store.Store, q string) string {
	if st.Dialect() != store.DialectPostgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
