package export_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/export"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestEveryLineHasTheSameKeys: a reader of the export must be able to rely
// on one shape. An article with every field and one with almost none give
// lines with the same keys — absent values are null, never left out — and
// no attachments is [], not a missing key or null. An attachment that was
// listed but not stored has the same keys as a stored one.
func TestEveryLineHasTheSameKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC)
		if _, _, err := s.ImportDepartments(ctx, []model.Department{{DeptID: 2101, DeptName: "清远市清城区发展和改革局", State: 1}}); err != nil {
			t.Fatal(err)
		}
		var full, summary *model.Site
		var fullTgt, sumTgt *model.Target
		err := s.WithTx(ctx, func(tx *store.Tx) error {
			full = &model.Site{SiteCode: "gd_ref", SiteName: "广东省人民政府门户网站", BaseURL: "http://www.gd.gov.test",
				SiteRole: model.RoleProvinceRef, YAMLPath: "config/sites/gd_ref.yaml", Access: model.AccessFull,
				DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
			summary = &model.Site{SiteCode: "news", SiteName: "新闻网", BaseURL: "http://www.news.test",
				SiteRole: model.RoleNationRef, YAMLPath: "config/sites/news.yaml", Access: model.AccessSummary,
				DefaultFetchStrategy: model.StrategyDirect, RespectRobots: true, Enabled: true}
			for _, site := range []*model.Site{full, summary} {
				if _, _, err := tx.UpsertSite(ctx, site); err != nil {
					return err
				}
			}
			fullTgt = &model.Target{SiteID: full.ID, TargetCode: "gd_ref_wjk", TargetName: "文件库",
				EntryURL: "http://www.gd.gov.test/zwgk/wjk/", Enabled: true, Source: model.SourceYAML}
			sumTgt = &model.Target{SiteID: summary.ID, TargetCode: "news_yw", TargetName: "要闻",
				EntryURL: "http://www.news.test/yw/", Enabled: true, Source: model.SourceYAML}
			for _, tg := range []*model.Target{fullTgt, sumTgt} {
				if _, _, err := tx.UpsertTarget(ctx, tg); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		dept := int64(2101)
		published := now.Add(-48 * time.Hour)
		rich := &model.Article{SiteID: full.ID, TargetID: fullTgt.ID, DeptID: &dept, NativePostID: "4100001",
			URL: "http://www.gd.gov.test/zwgk/wjk/content/post_4100001.html", Title: "关于印发规划的通知",
			PublishTime: &published, SourceRaw: "广东省人民政府办公厅", ChannelName: "文件库", ChannelPath: "信息公开｜文件库",
			ContentCategory: "政策文件", ContentSubcategory: "省政府文件", IndexNo: "006939748/2026-00001",
			DocNo: "粤府〔2026〕1号", Publisher: "广东省人民政府", PublishDate: "2026-10-30", EffectiveDate: "2026-10-28",
			TopicWords: "规划", OpenCategory: "综合政务", MetadataJSON: json.RawMessage(`{"raw":{"索引号":"006939748/2026-00001"}}`),
			ContentText: "正文", RawHTMLPath: "blobs/aa/bb/aabb", TextPath: "blobs/cc/dd/ccdd",
			Status: model.StatusReady, FetchStrategy: model.StrategyDirect, FetchedAt: now}
		bare := &model.Article{SiteID: full.ID, TargetID: fullTgt.ID,
			URL: "http://www.gd.gov.test/zwgk/wjk/content/post_4100002.html", Title: "通知",
			Status: model.StatusReady, FetchedAt: now}
		listed := &model.Article{SiteID: summary.ID, TargetID: sumTgt.ID,
			URL: "http://www.news.test/yw/1.html", Title: "要闻", Status: model.StatusReady, FetchedAt: now}
		for _, a := range []*model.Article{rich, bare, listed} {
			if _, _, err := s.UpsertArticle(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		if err := s.ReplaceAttachments(ctx, rich.ID, []model.Attachment{{URL: "http://www.gd.gov.test/att/plan.pdf",
			FileName: "规划.pdf", FileExt: "pdf", SizeBytes: 1234, FilePath: "blobs/" + sha[:2] + "/" + sha[2:4] + "/" + sha, FileHash: sha, DownloadedAt: now}}); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplaceAttachments(ctx, listed.ID, []model.Attachment{{URL: "http://www.news.test/att/a.pdf",
			FileName: "a.pdf", FileExt: "pdf"}}); err != nil {
			t.Fatal(err)
		}

		var buf bytes.Buffer
		n, _, err := export.Write(ctx, s, export.Options{Now: now}, &buf)
		if err != nil || n != 3 {
			t.Fatalf("export wrote %d lines, err %v; want 3", n, err)
		}
		lines := map[string]map[string]any{}
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("line is not a JSON object: %v\n%s", err, sc.Text())
			}
			lines[m["url"].(string)] = m
		}
		richLine, bareLine, listedLine := lines[rich.URL], lines[bare.URL], lines[listed.URL]
		if richLine == nil || bareLine == nil || listedLine == nil {
			t.Fatalf("missing lines: %v", slices.Collect(maps.Keys(lines)))
		}

		richKeys := slices.Sorted(maps.Keys(richLine))
		for name, l := range map[string]map[string]any{"bare article": bareLine, "summary article": listedLine} {
			if keys := slices.Sorted(maps.Keys(l)); !slices.Equal(keys, richKeys) {
				t.Errorf("%s has keys\n%v\nthe full article has\n%v", name, keys, richKeys)
			}
		}
		// The fields the bare article lacks are there, as null.
		for _, k := range []string{"dept_id", "native_post_id", "publish_time", "source_raw", "metadata", "text_path"} {
			if v, ok := bareLine[k]; !ok || v != nil {
				t.Errorf("bare article: %s = %v (present %v), want null", k, v, ok)
			}
			if richLine[k] == nil {
				t.Errorf("full article: %s is null", k)
			}
		}
		if atts, ok := bareLine["attachments"].([]any); !ok || len(atts) != 0 {
			t.Errorf("bare article: attachments = %#v, want []", bareLine["attachments"])
		}

		att := func(l map[string]any) map[string]any {
			atts, _ := l["attachments"].([]any)
			if len(atts) != 1 {
				t.Fatalf("attachments %#v, want one", l["attachments"])
			}
			return atts[0].(map[string]any)
		}
		stored, notStored := att(richLine), att(listedLine)
		if a, b := slices.Sorted(maps.Keys(notStored)), slices.Sorted(maps.Keys(stored)); !slices.Equal(a, b) {
			t.Errorf("a listed attachment has keys %v, a stored one %v", a, b)
		}
		for _, k := range []string{"size_bytes", "file_path", "sha256"} {
			if v, ok := notStored[k]; !ok || v != nil {
				t.Errorf("listed attachment: %s = %v (present %v), want null", k, v, ok)
			}
		}
		if stored["file_path"] != "blobs/"+sha[:2]+"/"+sha[2:4]+"/"+sha || stored["sha256"] != sha || stored["size_bytes"] != float64(1234) {
			t.Errorf("stored attachment %v", stored)
		}
	})
}

// TestEveryKeyIsDocumented: docs/export.md explains every key a line and
// an attachment carry, taken from the types the export encodes.
func TestEveryKeyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[export.Line](), reflect.TypeFor[export.AttachmentLine]()} {
		for _, f := range reflect.VisibleFields(typ) {
			if f.Anonymous {
				continue // its fields are the line's own, visited on their own
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !strings.Contains(string(doc), "`"+key+"`") {
				t.Errorf("%s.%s: key %q is exported but not described in docs/export.md", typ.Name(), f.Name, key)
			}
		}
	}
}
