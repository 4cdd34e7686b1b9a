package cite

import (
	"encoding/json"
	"strings"
	"testing"
)

type bibLibrary struct {
	Errors  []any `json:"errors"`
	Entries []struct {
		Type   string                     `json:"type"`
		Key    string                     `json:"key"`
		Fields map[string]json.RawMessage `json:"fields"`
	} `json:"entries"`
}

// TestBibTeXParsedByBibtexParser has the BibTeX parser of Better BibTeX
// for Zotero read every entry and checks that the fields come back as
// they went in, special characters included.
func TestBibTeXParsedByBibtexParser(t *testing.T) {
	prefix := consumers(t)
	special := noticeWork
	special.ID = "W2024/特殊#1"
	special.Title = `关于〔2024〕100%完成“数据_共享”&{试点}#1 \ ~ $ ^ 任务的通知`
	special.DocNo = "国办发〔2024〕12号_补"
	special.URL = "https://www.gov.cn/zhengce/content_6948001.htm?id=a_b&x=100%25#sec"
	special.ReleaseURL = "https://corpus.example.cn/releases/2024.05.1/works/W_1"
	special.IssuingBody = "国家发展改革委 Research and Development Center"

	works := append([]Work{special}, allWorks...)
	var bib strings.Builder
	for _, w := range works {
		e, err := BibTeX(w)
		if err != nil {
			t.Fatal(err)
		}
		bib.WriteString(e + "\n")
	}
	// What TeX reads: every special character escaped (a lenient parser
	// would also accept a bare _ that stops LaTeX).
	wantTitle := `  title = {关于〔2024〕100\%完成“数据\_共享”\&\{试点\}\#1 \textbackslash{} \textasciitilde{} \$ \textasciicircum{} 任务的通知},`
	if !strings.Contains(bib.String(), wantTitle+"\n") {
		t.Errorf("BibTeX title line is not escaped for TeX; want\n%s\nin\n%s", wantTitle, bib.String())
	}
	var lib bibLibrary
	out := node(t, "parsebib.mjs", []byte(bib.String()), prefix)
	if err := json.Unmarshal(out, &lib); err != nil {
		t.Fatalf("read the parser's library %q: %v", out, err)
	}
	if len(lib.Errors) > 0 {
		t.Fatalf("the parser found errors: %v\n%s", lib.Errors, bib.String())
	}
	if len(lib.Entries) != len(works) {
		t.Fatalf("parsed %d entries from %d:\n%s", len(lib.Entries), len(works), bib.String())
	}
	str := func(i int, field string) string {
		t.Helper()
		raw, ok := lib.Entries[i].Fields[field]
		if !ok {
			return "<absent>"
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			var list []string
			if err := json.Unmarshal(raw, &list); err == nil {
				return strings.Join(list, " | ")
			}
			return string(raw)
		}
		return s
	}

	e := lib.Entries[0]
	if e.Type != "misc" || e.Key != "zhizhi-W2024_002F_7279_6B8A_00231-r2" {
		t.Errorf("entry 0 is @%s{%s}, want @misc{zhizhi-W2024_002F_7279_6B8A_00231-r2}", e.Type, e.Key)
	}
	for field, want := range map[string]string{
		"title":              `关于〔2024〕100%完成“数据_共享”&{试点}#1 \ ~ $ ^ 任务的通知`,
		"number":             "国办发〔2024〕12号_补",
		"url":                "https://www.gov.cn/zhengce/content_6948001.htm?id=a_b&x=100%25#sec",
		"urldate":            "2024-05-03",
		"year":               "2024",
		"month":              "5",
		"date":               "2024-05-01",
		"publisher":          "中华人民共和国中央人民政府",
		"zhizhi_work_id":     "W2024/特殊#1",
		"zhizhi_revision":    "2",
		"zhizhi_release":     "2024.05.1",
		"zhizhi_release_url": "https://corpus.example.cn/releases/2024.05.1/works/W_1",
		"note":               "知止语料库 发布版 2024.05.1，作品 W2024/特殊#1，修订 2，存档 https://corpus.example.cn/releases/2024.05.1/works/W_1",
	} {
		got := str(0, field)
		// The parser turns ~ into a no-break space, as TeX prints it;
		// \textasciitilde{} must come back as a tilde.
		if got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	// Corporate authors stay whole: an English name is not split at "and".
	if got, want := string(e.Fields["author"]), `[{"name":"国家发展改革委"},{"name":"Research and Development Center"}]`; got != want {
		t.Errorf("author = %s, want %s", got, want)
	}

	// A plan is a report; a web page with no issuing body has no author.
	if lib.Entries[2].Type != "techreport" || str(2, "institution") != "广东省人民政府" || str(2, "type") != "规划计划" {
		t.Errorf("plan: @%s institution %q type %q, want @techreport institution 广东省人民政府 type 规划计划",
			lib.Entries[2].Type, str(2, "institution"), str(2, "type"))
	}
	if _, ok := lib.Entries[4].Fields["author"]; ok || lib.Entries[4].Type != "misc" {
		t.Errorf("explainer: @%s with author %s, want @misc without author", lib.Entries[4].Type, lib.Entries[4].Fields["author"])
	}
	if got := str(5, "author"); !strings.Contains(string(lib.Entries[5].Fields["author"]), "住房城乡建设部") {
		t.Errorf("joint notice authors = %s, want all four bodies", got)
	}
}
