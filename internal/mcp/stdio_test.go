package mcp_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/mcp/mcptest"
)

// stdioPlan spawns this test binary as a stdio server acting for who.
func stdioPlan(t *testing.T, who string, steps ...mcptest.Step) mcptest.Plan {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Plan{Stdio: &mcptest.Stdio{Command: exe, Env: map[string]string{serverEnv: who}}, Steps: steps}
}

// listedTool is a tool as tools/list gave it.
type listedTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
	Meta         map[string]any `json:"_meta"`
}

func toolList(t *testing.T, raw json.RawMessage) map[string]listedTool {
	t.Helper()
	var l struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, raw)
	}
	m := map[string]listedTool{}
	for _, tl := range l.Tools {
		m[tl.Name] = tl
	}
	return m
}

func names(m map[string]listedTool) []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

var han = regexp.MustCompile(`\p{Han}`)

// TestStdio: the official TypeScript client spawns real server processes
// speaking stdio (as `zhizhi mcp` does). Acting for an operator, it lists
// the four tools, searches, reads and cites from the release, reads the
// resource template, and gets tool errors (not protocol failures) for bad
// arguments, a missing work and a robots refusal, after which the server
// still answers. Acting for a viewer, fetch is neither listed nor allowed.
// Hostile web text stays inside its fence (checkHostile).
func TestStdio(t *testing.T) {
	site := hostileSite(t)
	be := newMemBackend()
	gd, _ := be.find("w_gd2024005", 0)
	outs := mcptest.RunAll(t, stdioPlan(t, "operator",
		mcptest.ListTools(),
		mcptest.Call("search", map[string]any{"query": "高标准农田"}),
		mcptest.Call("search", map[string]any{"query": "春耕", "dept": "清远市农业农村局", "from": "2024-01-01", "to": "2024-12-31", "limit": 1}),
		mcptest.Call("search", map[string]any{"query": "高标准农田", "from": "2024/03/01"}),
		mcptest.Call("read_work", map[string]any{"id": "w_qy2024012"}),
		mcptest.Call("read_work", map[string]any{"id": "w_qy2024012", "revision": 1}),
		mcptest.Call("read_work", map[string]any{"id": "w_gd2024005", "max_chars": 30}),
		mcptest.Call("read_work", map[string]any{"id": "w_gd2024005", "offset": 30}),
		mcptest.Call("read_work", map[string]any{"id": "w_nope"}),
		mcptest.Call("cite", map[string]any{"id": "w_gd2024005"}),
		mcptest.Call("cite", map[string]any{"id": "w_qy2024012", "revision": 1, "format": "bibtex"}),
		mcptest.Call("cite", map[string]any{"id": "w_gd2024005", "format": "csl-json"}),
		mcptest.Call("cite", map[string]any{"id": "w_gd2024005", "format": "apa"}),
		mcptest.Call("fetch", map[string]any{"url": site.URL + "/private/list.html"}),
		mcptest.ListResourceTemplates(),
		mcptest.ReadResource("zhizhi://works/w_gz2023yshj"),
		mcptest.Call("search", map[string]any{"query": "营商环境"}),
		mcptest.Call("search", map[string]any{"query": "不存在的词语"}),
	), viewerPlan(t), hostilePlan(t, site))
	t.Run("viewer", func(t *testing.T) { checkViewer(t, outs[1]) })
	t.Run("hostile", func(t *testing.T) { checkHostile(t, site, outs[2]) })
	out := outs[0]
	if out.ConnectError != nil {
		t.Fatalf("connect: %+v", out.ConnectError)
	}
	for _, s := range out.Steps {
		if s.Error != nil {
			t.Fatalf("%s %s: the client threw %+v; tool failures must be tool errors", s.Op, s.Name, s.Error)
		}
	}
	if !strings.Contains(string(out.Server), `"zhizhi"`) || !strings.Contains(out.Instructions, "untrusted") {
		t.Errorf("server %s, instructions %q: want zhizhi, and instructions that warn of untrusted text", out.Server, out.Instructions)
	}
	step := func(i int) json.RawMessage { return out.Steps[i].Result }

	t.Run("tools", func(t *testing.T) {
		tools := toolList(t, step(0))
		if got := names(tools); !slices.Equal(got, []string{"cite", "fetch", "read_work", "search"}) {
			t.Fatalf("tools %v, want cite, fetch, read_work, search for an operator", got)
		}
		for name, tl := range tools {
			if !han.MatchString(tl.Description) || len(tl.Description) < 100 {
				t.Errorf("%s: description %q, want a clear one with a Chinese example", name, tl.Description)
			}
			if tl.Meta["zhizhi/untrusted"] != true {
				t.Errorf("%s: _meta %v, want zhizhi/untrusted true", name, tl.Meta)
			}
			if props, _ := tl.OutputSchema["properties"].(map[string]any); props["untrusted"] == nil {
				t.Errorf("%s: output schema %v lacks untrusted", name, tl.OutputSchema)
			}
		}
		format := tools["cite"].InputSchema["properties"].(map[string]any)["format"].(map[string]any)
		if got := format["enum"]; !slices.Equal(toStrings(got), []string{"gbt7714", "csl-json", "bibtex"}) {
			t.Errorf("cite format enum %v", got)
		}
		if tools["search"].Annotations["readOnlyHint"] != true {
			t.Errorf("search annotations %v, want read-only", tools["search"].Annotations)
		}
	})

	t.Run("search", func(t *testing.T) {
		inside, outside, s := untrusted(t, "search", step(1))
		if s["release"] != "2025.06.01-1" || s["total"] != 2.0 {
			t.Errorf("release %v total %v, want 2025.06.01-1 and 2", s["release"], s["total"])
		}
		hits := s["hits"].([]any)
		if len(hits) != 2 || hits[0].(map[string]any)["id"] != "w_gd2024005" || hits[1].(map[string]any)["id"] != "w_qy2024012" {
			t.Fatalf("hits %v, want w_gd2024005 then w_qy2024012 (newest first)", hits)
		}
		if h := hits[0].(map[string]any); h["docno"] != "粤府办〔2024〕5号" || h["published"] != "2024-03-12" || !strings.Contains(h["snippet"].(string), "高标准农田") {
			t.Errorf("first hit %v", h)
		}
		if !strings.Contains(outside, "Release 2025.06.01-1: 2 matches.") {
			t.Errorf("outside the fence %q, want the release and the count", outside)
		}
		for _, want := range []string{"[1] id: w_gd2024005 (revision 1)", "title: 广东省人民政府办公厅关于印发广东省高标准农田建设实施方案（2024—2030年）的通知",
			"docno: 粤府办〔2024〕5号", "[2] id: w_qy2024012 (revision 2)", "publisher: 清远市农业农村局"} {
			if !strings.Contains(inside, want) {
				t.Errorf("inside the fence lacks %q:\n%s", want, inside)
			}
		}

		_, outside, s = untrusted(t, "search with filters", step(2))
		hits = s["hits"].([]any)
		if s["total"] != 1.0 || len(hits) != 1 || hits[0].(map[string]any)["id"] != "w_qy2024012" {
			t.Errorf("filtered search: total %v hits %v, want only w_qy2024012", s["total"], hits)
		}
		if msg := toolError(t, "search with a bad date", step(3)); !strings.Contains(msg, `from "2024/03/01" is not a date`) || !strings.Contains(msg, "YYYY-MM-DD") {
			t.Errorf("bad date: %q", msg)
		}
	})

	t.Run("read_work", func(t *testing.T) {
		inside, outside, s := untrusted(t, "read_work", step(4))
		if s["revision"] != 2.0 || s["release"] != "2025.06.01-1" || !strings.Contains(s["text"].(string), "二、加快高标准农田建设进度") {
			t.Errorf("current revision: %v", s)
		}
		if !strings.Contains(inside, "二、加快高标准农田建设进度") || !strings.Contains(inside, "url: http://www.gdqy.gov.cn/") {
			t.Errorf("inside the fence:\n%s", inside)
		}
		if !strings.Contains(outside, "Work w_qy2024012 (revision 2) of release 2025.06.01-1") {
			t.Errorf("outside the fence: %q", outside)
		}
		_, _, s = untrusted(t, "read_work revision 1", step(5))
		if s["revision"] != 1.0 || strings.Contains(s["text"].(string), "二、") {
			t.Errorf("revision 1: %v", s)
		}

		_, outside, first := untrusted(t, "read_work part 1", step(6))
		_, _, rest := untrusted(t, "read_work part 2", step(7))
		if first["next_offset"] != 30.0 || first["offset"] != 0.0 || len([]rune(first["text"].(string))) != 30 {
			t.Errorf("first part: offset %v next %v text %q, want 30 characters and next_offset 30", first["offset"], first["next_offset"], first["text"])
		}
		if !strings.Contains(outside, `read_work {"id": "w_gd2024005", "revision": 1, "offset": 30}`) {
			t.Errorf("outside the fence, want how to continue: %q", outside)
		}
		if rest["offset"] != 30.0 || rest["next_offset"] != nil || first["text"].(string)+rest["text"].(string) != gd.text ||
			rest["total_chars"] != float64(len([]rune(gd.text))) {
			t.Errorf("two parts do not make the text: %v + %v", first, rest)
		}
		if msg := toolError(t, "read_work of a missing work", step(8)); !strings.Contains(msg, `no work "w_nope" in release 2025.06.01-1`) {
			t.Errorf("missing work: %q", msg)
		}
	})

	t.Run("cite", func(t *testing.T) {
		inside, outside, s := untrusted(t, "cite", step(9))
		want := "广东省人民政府办公厅. 广东省人民政府办公厅关于印发广东省高标准农田建设实施方案（2024—2030年）的通知: 粤府办〔2024〕5号[EB/OL]. (2024-03-12)[2025-06-01]. https://www.gd.gov.cn/zwgk/wjk/qbwj/yfb/content/post_4380001.html."
		if s["citation"] != want || s["format"] != "gbt7714" || s["release"] != "2025.06.01-1" {
			t.Errorf("default citation %v, want GB/T 7714 %q", s, want)
		}
		if strings.TrimSpace(inside) != want || !strings.Contains(outside, "release 2025.06.01-1, gbt7714") {
			t.Errorf("text: inside %q outside %q", inside, outside)
		}
		_, _, s = untrusted(t, "cite bibtex", step(10))
		if c := s["citation"].(string); !strings.HasPrefix(c, "@misc{w_qy2024012,") || !strings.Contains(c, "revision 1") || s["revision"] != 1.0 {
			t.Errorf("bibtex of revision 1: %v", s)
		}
		_, _, s = untrusted(t, "cite csl-json", step(11))
		var csl map[string]any
		if err := json.Unmarshal([]byte(s["citation"].(string)), &csl); err != nil || csl["number"] != "粤府办〔2024〕5号" || csl["type"] != "legislation" {
			t.Errorf("csl-json %v: %v", s["citation"], err)
		}
		if msg := toolError(t, "cite apa", step(12)); !strings.Contains(msg, "format") {
			t.Errorf("unknown format: %q", msg)
		}
	})

	t.Run("errors are tool errors", func(t *testing.T) {
		if msg := toolError(t, "fetch refused by robots", step(13)); !strings.Contains(msg, "robots.txt") || !strings.Contains(msg, "/private/list.html") {
			t.Errorf("robots refusal: %q", msg)
		}
		_, _, s := untrusted(t, "search after the errors", step(16))
		if s["total"] != 1.0 {
			t.Errorf("search after errors: %v", s)
		}
		inside, outside, s := untrusted(t, "search without a match", step(17))
		if s["total"] != 0.0 || len(s["hits"].([]any)) != 0 || strings.TrimSpace(inside) != "" ||
			!strings.Contains(outside, "Release 2025.06.01-1: no work matches.") {
			t.Errorf("no match: %v, outside %q", s, outside)
		}
	})

	t.Run("resource", func(t *testing.T) {
		if !strings.Contains(string(step(14)), `"uriTemplate":"zhizhi://works/{id}"`) {
			t.Errorf("templates: %s", step(14))
		}
		var r struct {
			Contents []struct {
				URI  string         `json:"uri"`
				Text string         `json:"text"`
				Meta map[string]any `json:"_meta"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(step(15), &r); err != nil || len(r.Contents) != 1 {
			t.Fatalf("resource: %v %s", err, step(15))
		}
		c := r.Contents[0]
		nonce, _ := c.Meta["zhizhi/fence"].(string)
		inside, _ := fenced(t, c.Text, nonce)
		if c.Meta["zhizhi/untrusted"] != true || !strings.Contains(inside, "条例共七章") {
			t.Errorf("resource %s: meta %v, inside %q", c.URI, c.Meta, inside)
		}
	})
}

// viewerPlan and checkViewer: a stdio server acting for a viewer does not
// list fetch, and a call of it anyway is a tool error naming the scope it
// needs.
func viewerPlan(t *testing.T) mcptest.Plan {
	return stdioPlan(t, "viewer",
		mcptest.ListTools(),
		mcptest.Call("fetch", map[string]any{"url": "https://www.gd.gov.cn/"}),
		mcptest.Call("search", map[string]any{"query": "营商环境"}),
	)
}

func checkViewer(t *testing.T, out *mcptest.Outcome) {
	if out.ConnectError != nil {
		t.Fatalf("connect: %+v", out.ConnectError)
	}
	if got := names(toolList(t, out.Steps[0].Result)); !slices.Equal(got, []string{"cite", "read_work", "search"}) {
		t.Errorf("a viewer's tools %v, want cite, read_work, search", got)
	}
	if out.Steps[1].Error != nil {
		t.Fatalf("fetch threw %+v, want a tool error", out.Steps[1].Error)
	}
	if msg := toolError(t, "fetch as a viewer", out.Steps[1].Result); !strings.Contains(msg, `needs the "acquire" scope`) || !strings.Contains(msg, "viewer") {
		t.Errorf("refusal %q, want the scope named and why", msg)
	}
	untrusted(t, "search as a viewer", out.Steps[2].Result)
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var s []string
	for _, x := range l {
		s = append(s, x.(string))
	}
	return s
}
