package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"golang.org/x/text/width"
)

// scan answers q by reading every document: the documents a search must
// return, as a sorted list of IDs.
func scan(docs []*Doc, q Query) []string {
	foldMu.Lock()
	defer foldMu.Unlock()
	var terms []string
	for _, f := range strings.Fields(q.Text) {
		if n := scanFold(f); n != "" {
			terms = append(terms, n)
		}
	}
	var out []string
	for _, d := range docs {
		if q.DeptCode != "" && d.DeptCode != q.DeptCode || q.Channel != "" && d.Channel != q.Channel ||
			q.Publisher != "" && d.Publisher != q.Publisher ||
			q.DocNo != "" && scanFold(d.DocNo) != scanFold(q.DocNo) ||
			q.From != "" && (d.Date == "" || d.Date < q.From) || q.To != "" && (d.Date == "" || d.Date > q.To) {
			continue
		}
		f, ok := foldCache[d]
		if !ok {
			f = [3]string{scanFold(d.Title), scanFold(d.Body), scanFold(d.DocNo)}
			foldCache[d] = f
		}
		title, body, no := f[0], f[1], f[2]
		ok = true
		for _, t := range terms {
			if !strings.Contains(title, t) && !strings.Contains(body, t) && !strings.Contains(no, t) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, d.ID)
		}
	}
	slices.Sort(out)
	return out
}

// foldCache keeps each document's folded title, body and 文号 between scans.
var (
	foldMu    sync.Mutex
	foldCache = map[*Doc][3]string{}
)

// scanFold is the reference's own reading of a text: letters and digits
// only, full-width folded, lower case. Written apart from the package so
// the index is checked against a plain scan, not against itself.
func scanFold(s string) string {
	s = width.Fold.String(s)
	return strings.Map(func(r rune) rune {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// searchAll pages through every hit of q, 100 at a time, and checks that
// the pages agree with Total and never repeat a document.
func searchAll(t *testing.T, x *Index, q Query) []string {
	t.Helper()
	q.Limit = MaxLimit
	var ids []string
	seen := map[string]bool{}
	total := -1
	for q.Offset = 0; ; q.Offset += MaxLimit {
		res, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		if total == -1 {
			total = res.Total
		} else if res.Total != total {
			t.Fatalf("search %+v: total %d on one page, %d on another", q, total, res.Total)
		}
		for _, h := range res.Hits {
			if seen[h.ID] {
				t.Fatalf("search %+v: %s on two pages", q, h.ID)
			}
			seen[h.ID] = true
			ids = append(ids, h.ID)
		}
		if len(res.Hits) < MaxLimit {
			break
		}
	}
	if len(ids) != total {
		t.Fatalf("search %+v: Total %d, paged %d hits", q, total, len(ids))
	}
	slices.Sort(ids)
	return ids
}

// sampleQueries draws n distinct k-grams of the folded corpus text
// uniformly from all the k-grams it holds (so rare ones are as likely as
// common ones), deterministically; wantDigit keeps only k-grams with a
// digit.
func sampleQueries(r *rand.Rand, docs []*Doc, n, k int, wantDigit bool) []string {
	set := map[string]bool{}
	for _, d := range docs {
		for _, f := range []string{d.Title, d.Body, d.DocNo} {
			rs := []rune(scanFold(f))
			for i := 0; i+k <= len(rs); i++ {
				g := string(rs[i : i+k])
				if !wantDigit || strings.ContainsAny(g, "0123456789") {
					set[g] = true
				}
			}
		}
	}
	all := make([]string, 0, len(set))
	for g := range set {
		all = append(all, g)
	}
	slices.Sort(all)
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(n, len(all))]
}

func TestSearchEqualsScan(t *testing.T) {
	t.Parallel()
	docs := genCorpus(18, 2000, 250)
	start := time.Now()
	x := buildIndex(t, docs)
	t.Logf("built %d docs in %v", len(docs), time.Since(start))
	r := rand.New(rand.NewPCG(7, 7))
	type kase struct {
		name  string
		texts []string
	}
	kases := []kase{
		{"1 char", sampleQueries(r, docs, 30, 1, false)},
		{"2 chars", sampleQueries(r, docs, 40, 2, false)},
		{"3 chars", sampleQueries(r, docs, 30, 3, false)},
		{"4 chars", sampleQueries(r, docs, 30, 4, false)},
		{"with digits", sampleQueries(r, docs, 30, 4, true)},
		{"fixed", []string{
			"2024年", "12345", "pdf", "PDF", "ＡＰＰ", "app适老化", "２０２４", "〔2024〕", "020", "%",
			"穗发改〔2023〕45号", "穗发改[2023]45号", "国办发", "号", "龘", "zwgk1", "一网通办", "“一网通办”",
			"优化 营商", "乡村振兴 2025", "教育 安全 数字", "的", "。", "",
		}},
	}
	for _, k := range kases {
		if len(k.texts) == 0 {
			t.Fatalf("%s: no queries drawn", k.name)
		}
		matched, hits := 0, 0
		for _, text := range k.texts {
			q := Query{Text: text}
			want := scan(docs, q)
			if text == "" || strings.Trim(text, "。%") == "" {
				want = scan(docs, Query{}) // nothing to match: every document, browsed
			}
			got := searchAll(t, x, q)
			if !slices.Equal(got, want) {
				t.Errorf("%s %q: search found %d documents, scan %d; first differences: %v", k.name, text, len(got), len(want), diff(got, want))
			}
			if len(want) > 0 {
				matched++
			}
			hits += len(want)
		}
		t.Logf("%-12s %3d queries, %3d with matches, %6d hits in all", k.name, len(k.texts), matched, hits)
	}
}

// diff lists up to 5 IDs in one list and not the other.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, "+"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, "-"+x)
		}
	}
	return out[:min(5, len(out))]
}

var _ = fmt.Sprint

func TestFiltersEqualScan(t *testing.T) {
	docs := genCorpus(19, 1200, 200)
	x := buildIndex(t, docs)
	withNo := docs[0]
	for _, d := range docs {
		if d.DocNo != "" {
			withNo = d
			break
		}
	}
	qs := []Query{
		{DeptCode: "gz_jyj"},
		{DeptCode: "gz_jyj", Text: "教育"},
		{DeptCode: "qy_fgj", Text: "乡村 2025"},
		{Channel: "政策解读"},
		{Channel: "政策解读", Text: "方案"},
		{Publisher: "国务院办公厅", Text: "通知"},
		{Publisher: "没有这个机构"},
		{DocNo: withNo.DocNo},
		{DocNo: strings.NewReplacer("〔", "[", "〕", "]").Replace(withNo.DocNo)},
		{DocNo: withNo.DocNo, Text: "工作"},
		{From: "2023-01-01", To: "2023-12-31"},
		{From: "2023-01-01", To: "2023-12-31", Text: "安全"},
		{From: "2025-06-01"},
		{To: "2019-03-31", Text: "政"},
		{From: docs[5].Date, To: docs[5].Date},
		{DeptCode: "gd_sthj", Channel: "通知公告", From: "2020-01-01", To: "2024-12-31", Text: "环境"},
		{},
	}
	for _, q := range qs {
		want := scan(docs, q)
		got := searchAll(t, x, q)
		if !slices.Equal(got, want) {
			t.Errorf("%+v: search found %d documents, scan %d; first differences: %v", q, len(got), len(want), diff(got, want))
		}
		if len(want) == 0 && q.Publisher == "" {
			t.Errorf("%+v: the scan finds nothing; pick a filter that selects something", q)
		}
	}
}

// TestBrowseNewestFirst: an empty query lists what the filters select by
// date, newest first, undated documents last.
func TestBrowseNewestFirst(t *testing.T) {
	docs := genCorpus(20, 400, 100)
	x := buildIndex(t, docs)
	res, err := x.Search(context.Background(), Query{DeptCode: "gz_czj", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	for i := 1; i < len(res.Hits); i++ {
		a, b := res.Hits[i-1].Date, res.Hits[i].Date
		if a < b && a != "" || a == "" && b != "" {
			t.Fatalf("hit %d dated %q after hit %d dated %q", i, b, i-1, a)
		}
		if res.Hits[i].DeptCode != "gz_czj" {
			t.Fatalf("hit %d from %s", i, res.Hits[i].DeptCode)
		}
	}
}
