package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small is a hand-made corpus whose answers can be read off.
var small = []*Doc{
	{ID: "a", Revision: 1, Title: "国务院办公厅关于印发《政务公开工作要点》的通知", DocNo: "国办发〔2024〕12号",
		Body:     "各省、自治区、直辖市人民政府：\n现将《2024年政务公开工作要点》印发给你们，请认真贯彻落实。\n附件：工作要点（PDF版）",
		DeptCode: "gw", DeptName: "国务院办公厅", Channel: "最新政策", Publisher: "国务院办公厅", Date: "2024-03-05", URL: "http://www.gov.test/a.htm"},
	{ID: "b", Revision: 2, Title: "关于政务服务事项调整的公告", DocNo: "国办发〔2024〕120号",
		Body:     "根据国办发〔2024〕12号文件精神，现就政务服务事项调整公告如下。",
		DeptCode: "gw", Channel: "最新政策", Publisher: "国务院办公厅", Date: "2024-05-01"},
	{ID: "c", Revision: 1, Title: "清远市统计局2023年统计公报",
		Body:     strings.Repeat("全年地区生产总值比上年增长5.2%。", 20) + "政务",
		DeptCode: "qy", Channel: "统计公报", Publisher: "清远市统计局", Date: "2024-02-10"},
	{ID: "d", Revision: 1, Title: "公开", Body: "", DeptCode: "qy", Date: ""},
	// Names a's 文号 in its short title: bm25 alone would put it above a.
	{ID: "e", Revision: 1, Title: "国办发〔2024〕12号解读", Body: "解读国办发〔2024〕12号。", DeptCode: "gw", Date: "2024-03-06"},
}

func smallIndex(t *testing.T) *Index {
	t.Helper()
	return buildIndex(t, small)
}

func ids(hs []Hit) string {
	var s []string
	for _, h := range hs {
		s = append(s, h.ID)
	}
	return strings.Join(s, ",")
}

func TestSearchSmall(t *testing.T) {
	x := smallIndex(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    Query
		want string // IDs in rank order
	}{
		{"文号 exact ranks its document first", Query{Text: "国办发〔2024〕12号"}, "a,e,b"},
		{"文号 in other brackets", Query{Text: "国办发[2024]12号"}, "a,e,b"},
		{"文号 of the second", Query{Text: "国办发〔2024〕120号"}, "b"},
		// Both titles hold 政务 (the shorter title first, as bm25 weighs
		// length); c holds it only in its body.
		{"title above body", Query{Text: "政务"}, "b,a,c"},
		{"a 文号 filter and its text", Query{Text: "解读", DocNo: "国办发〔2024〕12号"}, ""},
		{"one character", Query{Text: "公"}, "d,a,b,c"},
		{"AND of terms", Query{Text: "政务 统计"}, "c"},
		{"Latin, any case", Query{Text: "pdf"}, "a"},
		{"digits with a dot", Query{Text: "5.2%"}, "c"},
		{"browse", Query{}, "b,e,a,c,d"},
		{"browse a department", Query{DeptCode: "qy"}, "c,d"},
		{"date range", Query{From: "2024-03-01", To: "2024-03-31"}, "e,a"},
		{"docno filter", Query{DocNo: "国办发（2024）120号"}, "b"},
		{"nothing", Query{Text: "龘"}, ""},
		{"punctuation only is no term", Query{Text: "。，", DeptCode: "qy"}, "c,d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := x.Search(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(res.Hits); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if res.Total != len(res.Hits) {
				t.Fatalf("total %d for %d hits", res.Total, len(res.Hits))
			}
		})
	}
}

func TestHitFields(t *testing.T) {
	x := smallIndex(t)
	res, err := x.Search(context.Background(), Query{Text: "国办发〔2024〕12号"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Hits[0], res.Hits[2]
	if !a.DocNoMatch || b.DocNoMatch {
		t.Fatalf("DocNoMatch %v %v, want true false", a.DocNoMatch, b.DocNoMatch)
	}
	if a.Revision != 1 || a.DocNo != "国办发〔2024〕12号" || a.Date != "2024-03-05" || a.Publisher != "国务院办公厅" ||
		a.URL != "http://www.gov.test/a.htm" || a.DeptName != "国务院办公厅" || a.Channel != "最新政策" {
		t.Fatalf("fields not as stored: %+v", a)
	}
	// b mentions a's 文号 in its body: the snippet marks it, brackets included.
	if got := marked(b.Snippet, b.Highlights); got != "[国办发〔2024〕12号]" {
		t.Fatalf("snippet %q marks %q", b.Snippet, got)
	}
	if b.Revision != 2 {
		t.Fatalf("revision %d", b.Revision)
	}
}

// marked lists the highlighted parts of s, each in brackets.
func marked(s string, hs [][2]int) string {
	var b strings.Builder
	for _, h := range hs {
		b.WriteString("[" + s[h[0]:h[1]] + "]")
	}
	return b.String()
}

func TestSnippetAndHighlights(t *testing.T) {
	long := strings.Repeat("一二三四五六七八九十", 30) + "\n关键政务公开要点在这里，政务公开。" + strings.Repeat("甲乙丙丁戊己庚辛壬癸", 30)
	docs := []*Doc{{ID: "x", Title: "政务公开与公开政务", Body: long, Date: "2024-01-01"}}
	x := buildIndex(t, docs)
	res, err := x.Search(context.Background(), Query{Text: "政务 公开"})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hits[0]
	if got := marked(h.Title, h.TitleHighlights); got != "[政务公开][公开政务]" {
		t.Fatalf("title marks %q", got)
	}
	if !strings.HasPrefix(h.Snippet, "…关键政务公开") || !strings.HasSuffix(h.Snippet, "…") {
		t.Fatalf("snippet should start at the match's line, ellipses at both ends: %q", h.Snippet)
	}
	if n := len([]rune(strings.TrimSuffix(strings.TrimPrefix(h.Snippet, "…"), "…"))); n != SnippetRunes {
		t.Fatalf("snippet is %d runes, want %d", n, SnippetRunes)
	}
	if got := marked(h.Snippet, h.Highlights); got != "[政务公开][政务公开]" {
		t.Fatalf("snippet marks %q in %q", got, h.Snippet)
	}
	// A match deep in a long line: context before it, an ellipsis in front.
	body := strings.Repeat("无关文字", 100) + "目标词" + strings.Repeat("无关文字", 100)
	x2 := buildIndex(t, []*Doc{{ID: "y", Title: "t", Body: body}})
	res, err = x2.Search(context.Background(), Query{Text: "目标"})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Hits[0].Snippet
	if !strings.HasPrefix(s, "…") || !strings.Contains(s, "目标词") || marked(s, res.Hits[0].Highlights) != "[目标]" {
		t.Fatalf("snippet %q highlights %v", s, res.Hits[0].Highlights)
	}
	if i := strings.Index(s, "目标"); len([]rune(s[:i])) != 1+snippetLead {
		t.Fatalf("snippet shows %d runes before the match, want %d", len([]rune(s[:i])), 1+snippetLead)
	}
}

func TestBadQueries(t *testing.T) {
	x := smallIndex(t)
	for _, c := range []struct {
		name, field, msg string
		q                Query
	}{
		{"control character", "text", "控制字符", Query{Text: "政务\x00公开"}},
		{"newline", "text", "控制字符", Query{Text: "政务\n公开"}},
		{"C1 control", "text", "控制字符", Query{Text: "政务\u0085"}},
		{"invalid UTF-8", "text", "UTF-8", Query{Text: "政务\xff"}},
		{"too long", "text", "过长", Query{Text: strings.Repeat("政", 201)}},
		{"from not a date", "from", "YYYY-MM-DD", Query{From: "2024/03/05"}},
		{"to not a real day", "to", "YYYY-MM-DD", Query{To: "2024-02-30"}},
		{"short date", "from", "YYYY-MM-DD", Query{From: "2024-3-5"}},
		{"from after to", "from", "晚于", Query{From: "2024-05-01", To: "2024-04-01"}},
		{"negative limit", "limit", "负数", Query{Limit: -1}},
		{"negative offset", "offset", "负数", Query{Offset: -5}},
		{"control in a filter", "dept_code", "控制字符", Query{DeptCode: "qy\x1b"}},
		{"docno filter of punctuation", "doc_no", "文号", Query{DocNo: "〔〕"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := x.Search(context.Background(), c.q)
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("err %v, want ErrBadQuery", err)
			}
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Field != c.field || !strings.Contains(qe.Msg, c.msg) {
				t.Fatalf("err %#v, want field %q and a message with %q", err, c.field, c.msg)
			}
		})
	}
	// 200 runes is allowed; a limit above the maximum is cut to it.
	if _, err := x.Search(context.Background(), Query{Text: strings.Repeat("政", 200), Limit: 1000}); err != nil {
		t.Fatalf("200 runes: %v", err)
	}
}

func TestLimitAndOffset(t *testing.T) {
	docs := genCorpus(21, 300, 50)
	x := buildIndex(t, docs)
	res, err := x.Search(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != DefaultLimit || res.Total != 300 {
		t.Fatalf("%d hits of %d, want %d of 300", len(res.Hits), res.Total, DefaultLimit)
	}
	res, err = x.Search(context.Background(), Query{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != MaxLimit {
		t.Fatalf("limit 500 gave %d hits, want %d", len(res.Hits), MaxLimit)
	}
	res, err = x.Search(context.Background(), Query{Offset: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 || res.Total != 300 {
		t.Fatalf("past the end: %d hits, total %d", len(res.Hits), res.Total)
	}
}

func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	path := filepath.Join(dir, "s.sqlite")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, path, slice(small)); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("existing file: %v", err)
	}
	for _, c := range []struct {
		name string
		docs []*Doc
		msg  string
	}{
		{"duplicate id", []*Doc{{ID: "a"}, {ID: "a"}}, "appears twice"},
		{"empty id", []*Doc{{Title: "x"}}, "empty id"},
		{"bad date", []*Doc{{ID: "a", Date: "2024/01/01"}}, "not YYYY-MM-DD"},
		{"bad UTF-8", []*Doc{{ID: "a", Body: "\xff"}}, "UTF-8"},
		{"source error", nil, "disk gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".sqlite")
			next := slice(c.docs)
			if c.docs == nil {
				next = func() (*Doc, error) { return nil, errors.New("disk gone") }
			}
			_, err := Build(ctx, p, next)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want %q", err, c.msg)
			}
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed build left %s behind", p)
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.sqlite")); err == nil {
		t.Fatal("opened a missing file")
	}
	junk := filepath.Join(dir, "junk.sqlite")
	os.WriteFile(junk, []byte("not a database at all, just some bytes that are not SQLite"), 0o644)
	if _, err := Open(junk); err == nil || !strings.Contains(err.Error(), "not a search index") {
		t.Fatalf("junk: %v", err)
	}
	// A path with URI metacharacters still opens the right file.
	odd := filepath.Join(dir, "a?b#c%d.sqlite")
	if _, err := Build(context.Background(), odd, slice(small)); err != nil {
		t.Fatal(err)
	}
	x, err := Open(odd)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Docs() != len(small) {
		t.Fatalf("docs %d", x.Docs())
	}
}

// FuzzQuery: whatever the query, Search answers or refuses it with
// ErrBadQuery; it never fails otherwise and never panics, and every
// highlight lies inside its string.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"政务", "国办发〔2024〕12号", "\"", "{tu} : x", "a OR b", "NEAR(a b)", "*", "-", "^政", "政务 \"公开", "\x00", strings.Repeat("字", 201), "ＰＤＦ", ""} {
		f.Add(s, "", "", 10, 0)
	}
	f.Add("公开", "2024-01-01", "2024-12-31", 5, 1)
	f.Add("", "2024-13-01", "", 0, 0)
	dir := f.TempDir()
	path := filepath.Join(dir, "fuzz.sqlite")
	if _, err := Build(context.Background(), path, slice(small)); err != nil {
		f.Fatal(err)
	}
	x, err := Open(path)
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	f.Fuzz(func(t *testing.T, text, from, to string, limit, offset int) {
		res, err := x.Search(context.Background(), Query{Text: text, From: from, To: to, Limit: limit, Offset: offset, DocNo: from})
		if err != nil {
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("%q: %v", text, err)
			}
			return
		}
		for _, h := range res.Hits {
			for _, sp := range h.Highlights {
				if sp[0] < 0 || sp[0] >= sp[1] || sp[1] > len(h.Snippet) {
					t.Fatalf("highlight %v outside snippet of %d bytes", sp, len(h.Snippet))
				}
			}
			for _, sp := range h.TitleHighlights {
				if sp[0] < 0 || sp[0] >= sp[1] || sp[1] > len(h.Title) {
					t.Fatalf("title highlight %v outside title of %d bytes", sp, len(h.Title))
				}
			}
		}
	})
}
