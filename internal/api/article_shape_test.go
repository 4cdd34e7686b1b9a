package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"zhizhi/internal/export"
	"zhizhi/internal/model"
	"zhizhi/internal/store/storetest"
)

// TestArticleIsOneShape: a reader gets the same article from the API and
// from the export. For one stored article — every field set, a stored and
// a listed attachment — and for a bare one, GET /api/v1/articles/{id} and
// its line of `zhizhi export` carry the same keys with the same values but
// the one the API adds, exported_to_rag_at (a line leaves it out: the same
// cursor gives the same lines before and after the mark); the OpenAPI
// schemas (ArticleDetail, ExportLine, Article) name exactly those keys and
// require them all, and the list item is a part of the detail, value for
// value.
func TestArticleIsOneShape(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	a := newAPITest(t, st, fixedNow)
	ctx := context.Background()

	published := w.now.Add(-48 * time.Hour)
	rich := &model.Article{SiteID: w.cmsSite, TargetID: w.tgtFGW, DeptID: ptr(37), NativePostID: "4100001",
		URL: "https://www.gdqy.gov.test/gkmlpt/content/4/4100/post_4100001.html", Title: "关于印发规划的通知",
		PublishTime: &published, SourceRaw: "清远市发展和改革局", ChannelName: "规范性文件", ChannelPath: "信息公开/政策文件/规范性文件",
		ContentCategory: "政策文件", ContentSubcategory: "规范性文件", IndexNo: "11441800MB2C93401Y/2026-00001",
		DocNo: "清发改〔2026〕9号", Publisher: "清远市发展和改革局", PublishDate: "2026-04-20", EffectiveDate: "2026-04-18",
		TopicWords: "规划", OpenCategory: "综合政务", MetadataJSON: json.RawMessage(`{"raw":{"索引号":"11441800MB2C93401Y/2026-00001"}}`),
		ContentText: "正文", TextPath: "blobs/cc/dd/ccdd", HasAttachment: true,
		Status: model.StatusReady, FetchStrategy: model.StrategyDirect, FetchedAt: w.now.Add(-time.Hour)}
	if _, _, err := st.UpsertArticle(ctx, rich); err != nil {
		t.Fatal(err)
	}
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	if err := st.ReplaceAttachments(ctx, rich.ID, []model.Attachment{
		{URL: "https://www.gdqy.gov.test/att/plan.pdf", FileName: "规划.pdf", FileExt: "pdf", SizeBytes: 1234,
			FilePath: "blobs/" + sha[:2] + "/" + sha[2:4] + "/" + sha, FileHash: sha, DownloadedAt: w.now.Add(-time.Hour),
			Text: "清远市国土空间总体规划", TextClass: "text", PageCount: 3},
		{URL: "https://www.gdqy.gov.test/att/form.doc", FileName: "表格.doc", FileExt: "doc"},
	}); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	if _, _, err := export.Write(ctx, st, export.Options{Now: w.now}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := map[float64]map[string]any{}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines[m["id"].(float64)] = m
	}

	var list struct {
		Items []map[string]any `json:"items"`
	}
	a.expect(get("/api/v1/articles?limit=100", tokViewer), 200).decode(t, &list)
	items := map[float64]map[string]any{}
	for _, it := range list.Items {
		items[it["id"].(float64)] = it
	}

	doc := loadSpec(t)
	schemaKeys := func(name string) (props, required []string) {
		s := doc.Components.Schemas[name].Value
		return slices.Sorted(maps.Keys(s.Properties)), slices.Sorted(slices.Values(s.Required))
	}
	detailProps, detailRequired := schemaKeys("ArticleDetail")
	lineProps, lineRequired := schemaKeys("ExportLine")
	listProps, listRequired := schemaKeys("Article")
	attProps, attRequired := schemaKeys("Attachment")

	// rich: every field set; 市政府通知: a bare article (no department,
	// native id, source, metadata or attachments) of the world.
	for name, id := range map[string]int64{"rich": rich.ID, "bare": w.articles["市政府通知"]} {
		var detail map[string]any
		a.expect(get(idPath("/api/v1/articles/%d", id), tokViewer), 200).decode(t, &detail)
		line := lines[float64(id)]
		if line == nil {
			t.Fatalf("%s article %d: not in the export", name, id)
		}
		keys := slices.Sorted(maps.Keys(detail))
		if !slices.Equal(keys, detailProps) || !slices.Equal(keys, detailRequired) {
			t.Errorf("%s article: keys\n%v\nArticleDetail's properties\n%v\nrequired\n%v", name, keys, detailProps, detailRequired)
		}
		mark, ok := detail["exported_to_rag_at"]
		if !ok {
			t.Errorf("%s article: the API leaves out exported_to_rag_at", name)
		}
		delete(detail, "exported_to_rag_at")
		if lineKeys := slices.Sorted(maps.Keys(line)); !slices.Equal(lineKeys, lineProps) || !slices.Equal(lineKeys, lineRequired) {
			t.Errorf("%s export line: keys\n%v\nExportLine's properties\n%v\nrequired\n%v", name, lineKeys, lineProps, lineRequired)
		}
		if !reflect.DeepEqual(detail, line) {
			for _, k := range slices.Sorted(maps.Keys(detail)) {
				if !reflect.DeepEqual(detail[k], line[k]) {
					t.Errorf("%s article: %s is %#v from the API, %#v in the export", name, k, detail[k], line[k])
				}
			}
			for k := range line {
				if _, ok := detail[k]; !ok {
					t.Errorf("%s article: %s is in the export line only", name, k)
				}
			}
		}

		item := items[float64(id)]
		if item == nil {
			t.Fatalf("%s article %d: not in the list", name, id)
		}
		itemKeys := slices.Sorted(maps.Keys(item))
		if !slices.Equal(itemKeys, listProps) || !slices.Equal(itemKeys, listRequired) {
			t.Errorf("%s list item: keys\n%v\nArticle's properties\n%v\nrequired\n%v", name, itemKeys, listProps, listRequired)
		}
		for k, v := range item {
			want := detail[k]
			if k == "exported_to_rag_at" {
				want = mark
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("%s article: %s is %#v in the list, %#v in the detail", name, k, v, want)
			}
		}
	}

	var detail struct {
		Attachments []map[string]any `json:"attachments"`
	}
	a.expect(get(idPath("/api/v1/articles/%d", rich.ID), tokViewer), 200).decode(t, &detail)
	if len(detail.Attachments) != 2 {
		t.Fatalf("attachments %v, want the stored and the listed one", detail.Attachments)
	}
	for _, att := range detail.Attachments {
		if keys := slices.Sorted(maps.Keys(att)); !slices.Equal(keys, attProps) || !slices.Equal(keys, attRequired) {
			t.Errorf("attachment keys\n%v\nAttachment's properties\n%v\nrequired\n%v", keys, attProps, attRequired)
		}
	}
	if stored := detail.Attachments[0]; stored["file_path"] != "blobs/"+sha[:2]+"/"+sha[2:4]+"/"+sha || stored["stored"] != true || stored["size_bytes"] != float64(1234) {
		t.Errorf("stored attachment %v", stored)
	}
	// The PDF's text, class and pages; the listed file has none.
	if stored := detail.Attachments[0]; stored["text"] != "清远市国土空间总体规划" || stored["text_class"] != "text" || stored["page_count"] != float64(3) || stored["text_error"] != nil {
		t.Errorf("stored PDF's text: %v", stored)
	}
	if listed := detail.Attachments[1]; listed["text"] != nil || listed["text_class"] != nil || listed["page_count"] != nil {
		t.Errorf("listed attachment's text: %v", listed)
	}
	if listed := detail.Attachments[1]; listed["file_path"] != nil || listed["stored"] != false || listed["size_bytes"] != nil {
		t.Errorf("listed attachment %v", listed)
	}
}
