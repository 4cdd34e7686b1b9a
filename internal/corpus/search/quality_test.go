package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"zhizhi/internal/sim"
)

// The relevance test builds an index from the simulated government web's
// ground truth (sim.World.Truth: every article's true title, body, 文号,
// publisher and department, generated deterministically from the seed) and
// measures ranking quality on five kinds of queries.
//
// Graded relevance, per kind (grade 2 is best, 0 is not relevant):
//
//   - 1-char, 2-char and dept-scoped queries: 2 when the document's title
//     contains the query, 1 when only its body or 文号 does, 0 otherwise.
//     Such short queries name a subject, and a document about the subject
//     names it in its title; one that only mentions it in passing is a weaker
//     answer. (This mirrors the title weighting the ranking is meant to get
//     right; it does not measure topical relevance beyond the words.)
//     Dept-scoped queries run with Query.DeptCode set; documents of other
//     departments are 0.
//   - 文号 lookups (the query is a document's 文号 as printed): 2 for every
//     document whose 文号 is the same (the simulated web reuses some
//     numbers, so a few lookups have more than one right answer), 0 otherwise.
//   - Known-item title fragments (the query is a 6–10 character piece of one
//     document's title, chosen among documents whose title is unique, and
//     held by at most 5 titles, so that it can identify the document): 2 for
//     that document, 1 for the other documents whose title holds the piece, 0
//     otherwise.
//
// nDCG@10 uses gain 2^grade−1 and the ideal ordering of every graded
// document in the corpus. recall@10 is capped recall of the best answers:
// the share of the top-grade documents (grade 2; for a query with none,
// grade 1) found in the first 10, out of min(10, how many there are). For
// a known item that is 1 when the document is in the first 10, else 0.

// qualityFloors are the least each kind must reach (measured values minus a
// margin; see docs/search.md). A reversed ranking fails every kind but
// 文号 (whose matches are exactly its relevant documents here).
var qualityFloors = map[string][2]float64{ // kind → {recall@10, nDCG@10}
	"1-char":      {0.95, 0.95},
	"2-char":      {0.95, 0.95},
	"文号":          {1.00, 0.95},
	"dept-scoped": {0.95, 0.95},
	"title-frag":  {0.98, 0.88},
}

var qualityKinds = []string{"1-char", "2-char", "文号", "dept-scoped", "title-frag"}

type judged struct {
	kind   string
	q      Query
	grades map[string]int // doc ID → grade > 0
}

// simCorpus turns the simulated web's truth into documents: full-text
// sites only (the news site is summary-only, so a corpus holds no body).
func simCorpus(t testing.TB) []*Doc {
	t.Helper()
	w, err := sim.Start(context.Background(), sim.Options{Seed: 1, Scale: 2, Counties: 30})
	if err != nil {
		t.Fatal(err)
	}
	truth := w.Truth()
	w.Close()
	var docs []*Doc
	for _, a := range truth {
		if a.Access != "full" {
			continue
		}
		dept := a.SiteCode
		if a.DeptPath != "" {
			dept += "/" + a.DeptPath
		}
		docs = append(docs, &Doc{
			ID: a.URL, Revision: a.Version, Title: a.Title, Body: a.BodyText,
			DeptCode: dept, DeptName: a.Publisher, Channel: a.ColumnName, Publisher: a.Publisher,
			DocNo: a.DocNo, Date: a.PublishTime.In(sim.DefaultNow.Location()).Format("2006-01-02"), URL: a.URL,
		})
	}
	return docs
}

// gradeText grades every document for a short subject query.
func gradeText(docs []*Doc, q string, dept string) map[string]int {
	n := scanFold(q)
	g := map[string]int{}
	for _, d := range docs {
		if dept != "" && d.DeptCode != dept {
			continue
		}
		switch {
		case strings.Contains(scanFold(d.Title), n):
			g[d.ID] = 2
		case strings.Contains(scanFold(d.Body), n) || strings.Contains(scanFold(d.DocNo), n):
			g[d.ID] = 1
		}
	}
	return g
}

// titleGrams lists the k-grams of folded titles with their document
// frequency, sorted by gram.
func titleGrams(docs []*Doc, k int) ([]string, map[string]int) {
	df := map[string]int{}
	for _, d := range docs {
		rs := []rune(scanFold(d.Title))
		seen := map[string]bool{}
		for i := 0; i+k <= len(rs); i++ {
			g := string(rs[i : i+k])
			if !seen[g] {
				seen[g] = true
				df[g]++
			}
		}
	}
	keys := make([]string, 0, len(df))
	for g := range df {
		keys = append(keys, g)
	}
	slices.Sort(keys)
	return keys, df
}

// spread picks n items evenly from list.
func spread[T any](list []T, n int) []T {
	if len(list) <= n {
		return list
	}
	out := make([]T, n)
	for i := range n {
		out[i] = list[i*len(list)/n]
	}
	return out
}

// qualityQueries builds the judged query set from the truth.
func qualityQueries(docs []*Doc) []judged {
	var js []judged
	n := len(docs)
	for _, k := range []int{1, 2} {
		keys, df := titleGrams(docs, k)
		var mid []string
		for _, g := range keys {
			// Subjects some titles name, not words every title has.
			if df[g]*200 >= n && df[g]*5 <= n && !strings.ContainsAny(g, "0123456789") {
				mid = append(mid, g)
			}
		}
		for _, g := range spread(mid, 20) {
			js = append(js, judged{kind: fmt.Sprintf("%d-char", k), q: Query{Text: g}, grades: gradeText(docs, g, "")})
		}
	}
	// 文号 lookups.
	var withNo []*Doc
	for _, d := range docs {
		if d.DocNo != "" {
			withNo = append(withNo, d)
		}
	}
	for _, d := range spread(withNo, 50) {
		g := map[string]int{}
		for _, o := range docs {
			if o.DocNo != "" && scanFold(o.DocNo) == scanFold(d.DocNo) {
				g[o.ID] = 2
			}
		}
		js = append(js, judged{kind: "文号", q: Query{Text: d.DocNo}, grades: g})
	}
	// Department-scoped: in each of 20 departments, a 2-char subject some
	// but not most of its titles name.
	byDept := map[string][]*Doc{}
	for _, d := range docs {
		byDept[d.DeptCode] = append(byDept[d.DeptCode], d)
	}
	var depts []string
	for c, ds := range byDept {
		if len(ds) >= 10 {
			depts = append(depts, c)
		}
	}
	slices.Sort(depts)
	for i, c := range spread(depts, 20) {
		keys, df := titleGrams(byDept[c], 2)
		var mid []string
		for _, g := range keys {
			if df[g]*10 >= len(byDept[c]) && df[g]*2 <= len(byDept[c]) && !strings.ContainsAny(g, "0123456789") {
				mid = append(mid, g)
			}
		}
		if len(mid) == 0 {
			continue
		}
		g := mid[(i*7)%len(mid)]
		js = append(js, judged{kind: "dept-scoped", q: Query{Text: g, DeptCode: c}, grades: gradeText(docs, g, c)})
	}
	// Known items by a piece of a unique title.
	titles := map[string]int{}
	for _, d := range docs {
		titles[d.Title]++
	}
	var unique []*Doc
	for _, d := range docs {
		if titles[d.Title] == 1 && len([]rune(d.Title)) >= 8 {
			unique = append(unique, d)
		}
	}
	r := rand.New(rand.NewPCG(11, 11))
	for _, d := range spread(unique, 80) {
		rs := []rune(d.Title)
		// A piece that at most 5 titles hold: one that dozens of titles
		// hold cannot identify a document, whatever the ranking.
		var frag string
		var g map[string]int
		for range 20 {
			l := min(len(rs), 6+r.IntN(5))
			i := r.IntN(len(rs) - l + 1)
			f := string(rs[i : i+l])
			g = map[string]int{}
			for _, o := range docs {
				if strings.Contains(scanFold(o.Title), scanFold(f)) {
					g[o.ID] = 1
				}
			}
			if len(g) <= 5 {
				frag = f
				break
			}
		}
		if frag == "" {
			continue
		}
		g[d.ID] = 2
		js = append(js, judged{kind: "title-frag", q: Query{Text: frag}, grades: g})
		if js[len(js)-1].kind == "title-frag" && countKind(js, "title-frag") == 50 {
			break
		}
	}
	return js
}

// metrics computes recall@10 and nDCG@10 of one ranked list.
func metrics(ranked []string, grades map[string]int) (recall, ndcg float64) {
	top := 0
	for _, g := range grades {
		top = max(top, g)
	}
	best := 0
	for _, g := range grades {
		if g == top {
			best++
		}
	}
	found := 0
	dcg := 0.0
	for i, id := range ranked[:min(10, len(ranked))] {
		g := grades[id]
		if g == top && top > 0 {
			found++
		}
		dcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	all := make([]int, 0, len(grades))
	for _, g := range grades {
		all = append(all, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(all)))
	idcg := 0.0
	for i, g := range all[:min(10, len(all))] {
		idcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if best == 0 || idcg == 0 {
		return 1, 1 // nothing to find: nothing missed
	}
	return float64(found) / float64(min(10, best)), dcg / idcg
}

type kindScore struct {
	queries      int
	recall, ndcg float64
}

// evaluate runs every judged query and averages the metrics per kind.
func evaluate(t testing.TB, x *Index, js []judged) map[string]kindScore {
	t.Helper()
	sum := map[string]kindScore{}
	for _, j := range js {
		if len(j.grades) == 0 {
			t.Fatalf("%s query %q has no relevant document: the query set is wrong", j.kind, j.q.Text)
		}
		res, err := x.Search(context.Background(), j.q)
		if err != nil {
			t.Fatalf("%s %q: %v", j.kind, j.q.Text, err)
		}
		var ranked []string
		for _, h := range res.Hits {
			ranked = append(ranked, h.ID)
		}
		r, n := metrics(ranked, j.grades)
		s := sum[j.kind]
		s.queries++
		s.recall += r
		s.ndcg += n
		sum[j.kind] = s
	}
	for k, s := range sum {
		s.recall /= float64(s.queries)
		s.ndcg /= float64(s.queries)
		sum[k] = s
	}
	return sum
}

func qualityTable(docs int, scores map[string]kindScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "quality on %d documents of the simulated web (seed 1, scale 2, 30 counties):\n", docs)
	fmt.Fprintf(&b, "| kind        | queries | recall@10 | nDCG@10 | floors      |\n")
	fmt.Fprintf(&b, "|-------------|--------:|----------:|--------:|-------------|\n")
	for _, k := range qualityKinds {
		s := scores[k]
		f := qualityFloors[k]
		fmt.Fprintf(&b, "| %-11s | %7d | %9.3f | %7.3f | %.2f / %.2f |\n", k, s.queries, s.recall, s.ndcg, f[0], f[1])
	}
	return b.String()
}

func TestRankingQuality(t *testing.T) {
	t.Parallel()
	docs := simCorpus(t)
	x := buildIndex(t, docs)
	js := qualityQueries(docs)
	scores := evaluate(t, x, js)
	t.Log("\n" + qualityTable(len(docs), scores))
	for _, k := range qualityKinds {
		s, f := scores[k], qualityFloors[k]
		if s.queries < 15 {
			t.Errorf("%s: only %d queries", k, s.queries)
		}
		if s.recall < f[0] || s.ndcg < f[1] {
			t.Errorf("%s: recall@10 %.3f, nDCG@10 %.3f; floors %.2f, %.2f", k, s.recall, s.ndcg, f[0], f[1])
		}
	}

	// The same index ranked upside down must fail the floors, or the
	// floors prove nothing.
	x.reversed = true
	broken := evaluate(t, x, js)
	x.reversed = false
	t.Log("reversed ranking:\n" + qualityTable(len(docs), broken))
	for _, k := range qualityKinds {
		s, f := broken[k], qualityFloors[k]
		fails := s.recall < f[0] || s.ndcg < f[1]
		if k == "文号" {
			continue // its matches are its relevant documents; order cannot fail it
		}
		if !fails {
			t.Errorf("%s: a reversed ranking still passes the floors (recall %.3f, nDCG %.3f)", k, s.recall, s.ndcg)
		}
	}
}

func countKind(js []judged, kind string) int {
	n := 0
	for _, j := range js {
		if j.kind == kind {
			n++
		}
	}
	return n
}
