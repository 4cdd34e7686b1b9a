package cite

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/corpus/cite/citetest"
)

var allWorks = []Work{noticeWork, planWork, lawWork, explainerWork, jointWork}

// TestCSLJSONValidatesAgainstSchema runs Ajv with the official
// csl-data.json (v1.0.2) over every fixture, and shows the validator
// does reject: a wrong type name and a name given as a string fail.
func TestCSLJSONValidatesAgainstSchema(t *testing.T) {
	items, err := CSLJSONList(allWorks)
	if err != nil {
		t.Fatal(err)
	}
	one, err := CSLJSON(noticeWork)
	if err != nil {
		t.Fatal(err)
	}
	// Each broken document is the fixture list with one field of its
	// first item replaced.
	broken := []struct {
		name, field string
		value       any
		path, kw    string
	}{
		{"wrong type name", "type", "government-document", "/0/type", "enum"},
		{"author not a name list", "author", "国务院办公厅", "/0/author", "type"},
		{"issued not a date", "issued", map[string]any{"date-parts": "2024-05-01"}, "/0/issued", "anyOf"},
	}
	docs := [][]byte{items, append(append([]byte("["), one...), ']')}
	for _, b := range broken {
		var list []map[string]any
		if err := json.Unmarshal(items, &list); err != nil {
			t.Fatal(err)
		}
		list[0][b.field] = b.value
		d, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	results := citetest.Validate(t, docs...)
	if r := results[0]; !r.Valid {
		t.Fatalf("CSL-JSON from CSLJSONList is invalid: %+v\n%s", r.Errors, items)
	}
	if r := results[1]; !r.Valid {
		t.Fatalf("the item from CSLJSON is invalid: %+v\n%s", r.Errors, one)
	}
	for i, b := range broken {
		t.Run(b.name, func(t *testing.T) {
			r := results[2+i]
			if r.Valid {
				t.Fatalf("Ajv accepted CSL-JSON with %s", b.name)
			}
			found := false
			for _, e := range r.Errors {
				if e.InstancePath == b.path && e.Keyword == b.kw {
					found = true
				}
			}
			if !found {
				t.Errorf("Ajv rejected it, but not with %s at %s: %+v", b.kw, b.path, r.Errors)
			}
		})
	}
}

// TestCSLJSONRenderedByCiteproc has citeproc-js, the processor inside
// Zotero, render the items with a small GB/T-shaped style: what it
// prints proves it read each field — title, issuing body, 文号, URL and
// the release — and for the works with at most three issuers its text is
// the reference GBT7714 writes.
func TestCSLJSONRenderedByCiteproc(t *testing.T) {
	prefix := consumers(t)
	items, err := CSLJSONList(allWorks)
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	out := node(t, "render.cjs", items, prefix, filepath.Join("testdata", "gbt7714-shape.csl"))
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Fatalf("read citeproc's bibliography %q: %v", out, err)
	}
	if len(entries) != len(allWorks) {
		t.Fatalf("citeproc rendered %d entries for %d works: %q", len(entries), len(allWorks), entries)
	}
	// citeproc sorts nothing with this style: entries come in item order.
	want := []struct {
		parts []string
	}{
		{[]string{"国务院办公厅关于加强政务数据共享的通知", "国务院办公厅. ", "国办发〔2024〕12号", "https://www.gov.cn/zhengce/content/202405/content_6948001.htm", "发布版 2024.05.1", "修订 2", "中华人民共和国中央人民政府"}},
		{[]string{"广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要", "广东省人民政府. ", "[R/OL]", "http://www.gd.gov.cn/zwgk/wjk/qbwj/yf/content/post_3268751.html", "发布版 2024.05.1"}},
		{[]string{"中华人民共和国数据安全法", "全国人民代表大会常务委员会. ", "中华人民共和国主席令第八十四号", "(2021-06-10)[2024-05-03]", "发布版 2024.05.1", "修订 3"}},
		{[]string{"一图读懂《广州市城市更新条例》", "[EB/OL]", "https://www.gz.gov.cn/zwgk/zcjd/tjjd/content/post_9532001.html"}},
		{[]string{"国家发展改革委, 财政部, 自然资源部, 住房城乡建设部. ", "发改投资〔2024〕123号", "https://www.ndrc.gov.cn/xxgk/zcfb/tz/202407/t20240726_1391895.html"}},
	}
	for i, w := range want {
		for _, p := range w.parts {
			if !strings.Contains(entries[i], p) {
				t.Errorf("entry %d lacks %q:\n%s", i, p, entries[i])
			}
		}
	}
	for i, w := range allWorks[:4] {
		ref, err := GBT7714(w)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(entries[i], ref+" ") {
			t.Errorf("citeproc and GBT7714 differ for %s:\ncsl    %s\ngbt    %s", w.ID, entries[i], ref)
		}
	}
}

// TestCSLJSONFields reads the item back and checks the values a consumer
// relies on.
func TestCSLJSONFields(t *testing.T) {
	b, err := CSLJSON(noticeWork)
	if err != nil {
		t.Fatal(err)
	}
	var it map[string]any
	if err := json.Unmarshal(b, &it); err != nil {
		t.Fatalf("CSLJSON is not a JSON object: %v\n%s", err, b)
	}
	want := map[string]string{
		"id":           `"zhizhi:W2024GOV0001:r2@2024.05.1"`,
		"type":         `"regulation"`,
		"citation-key": `"zhizhi-W2024GOV0001-r2"`,
		"title":        `"国务院办公厅关于加强政务数据共享的通知"`,
		"author":       `[{"literal":"国务院办公厅"}]`,
		"authority":    `"中华人民共和国中央人民政府"`,
		"number":       `"国办发〔2024〕12号"`,
		"issued":       `{"date-parts":[[2024,5,1]]}`,
		"accessed":     `{"date-parts":[[2024,5,3]]}`,
		"URL":          `"https://www.gov.cn/zhengce/content/202405/content_6948001.htm"`,
		"language":     `"zh-CN"`,
		"custom":       `{"zhizhi_release":"2024.05.1","zhizhi_release_url":"https://corpus.example.cn/releases/2024.05.1/works/W2024GOV0001","zhizhi_revision":2,"zhizhi_work_id":"W2024GOV0001"}`,
	}
	for k, v := range want {
		got, err := json.Marshal(it[k])
		if err != nil {
			t.Fatal(err)
		}
		// json.Marshal escapes nothing here but sorts object keys.
		if string(got) != v {
			t.Errorf("%s = %s, want %s", k, got, v)
		}
	}
	if strings.Contains(string(b), `\u`) {
		t.Errorf("CSLJSON escapes characters a person should read as they are:\n%s", b)
	}

	// Another release of the same revision is another item with the same
	// citation key: a processor never merges the two.
	later := noticeWork
	later.Release = "2024.06.1"
	b2, err := CSLJSON(later)
	if err != nil {
		t.Fatal(err)
	}
	var it2 map[string]any
	if err := json.Unmarshal(b2, &it2); err != nil {
		t.Fatal(err)
	}
	if it2["id"] == it["id"] || it2["citation-key"] != it["citation-key"] {
		t.Errorf("release 2024.06.1: id %v, key %v; release 2024.05.1: id %v, key %v", it2["id"], it2["citation-key"], it["id"], it["citation-key"])
	}
}

// TestInvalidWork: each format refuses a work it cannot cite, with an
// error naming the work and what to give.
func TestInvalidWork(t *testing.T) {
	mod := func(f func(*Work)) Work {
		w := noticeWork
		f(&w)
		return w
	}
	cases := []struct {
		name string
		work Work
		want string
	}{
		{"no title", mod(func(w *Work) { w.Title = "  " }), "cite work W2024GOV0001: no title"},
		{"no URL", mod(func(w *Work) { w.URL = "" }), "cite work W2024GOV0001: no URL"},
		{"relative URL", mod(func(w *Work) { w.URL = "/zhengce/content.htm" }), `URL "/zhengce/content.htm" is not an absolute http(s) address`},
		{"ftp URL", mod(func(w *Work) { w.URL = "ftp://www.gov.cn/a" }), "is not an absolute http(s) address"},
		{"bad release URL", mod(func(w *Work) { w.ReleaseURL = "corpus/2024" }), `release URL "corpus/2024"`},
		{"no release", mod(func(w *Work) { w.Release = "" }), "no release: only a work in a corpus release can be cited"},
		{"no id", mod(func(w *Work) { w.ID = "" }), "cite work (no id): no work id"},
		{"id with space", mod(func(w *Work) { w.ID = "W 1" }), `work id "W 1" has white space`},
		{"negative revision", mod(func(w *Work) { w.Revision = -1 }), "revision -1 is negative"},
		{"date not a date", mod(func(w *Work) { w.Issued = "五月一日" }), `issued "五月一日" is not a date: give YYYY, YYYY-MM or YYYY-MM-DD`},
		{"month 13", mod(func(w *Work) { w.Issued = "2024-13-01" }), "month 13"},
		{"30 February", mod(func(w *Work) { w.Issued = "2024-02-30" }), "is not a day of the calendar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errCSL := CSLJSON(c.work)
			_, errList := CSLJSONList([]Work{planWork, c.work})
			gbt, errGBT := GBT7714(c.work)
			bib, errBib := BibTeX(c.work)
			for name, err := range map[string]error{"CSLJSON": errCSL, "CSLJSONList": errList, "GBT7714": errGBT, "BibTeX": errBib} {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s error = %v, want one containing %q", name, err, c.want)
				}
			}
			if gbt != "" || bib != "" {
				t.Errorf("an invalid work still produced text: %q %q", gbt, bib)
			}
		})
	}
}

// TestIssuedForms: the date forms collectors store all reach CSL and
// GB/T the same way.
func TestIssuedForms(t *testing.T) {
	for in, want := range map[string]string{
		"2024-05-01": "(2024-05-01)", "2024/5/1": "(2024-05-01)", "2024.05.01": "(2024-05-01)",
		"2024年5月1日": "(2024-05-01)", "2024-05": "(2024-05)", "2024年5月": "(2024-05)", "2024": "(2024)",
	} {
		w := noticeWork
		w.Issued = in
		got, err := GBT7714(w)
		if err != nil {
			t.Errorf("issued %q: %v", in, err)
			continue
		}
		if !strings.Contains(got, "[A/OL]. "+want+"[2024-05-03]. ") {
			t.Errorf("issued %q: %s, want the date as %s", in, got, want)
		}
	}
}
