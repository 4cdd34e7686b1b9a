package ui

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/crawl/crawltest"
	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
	"zhizhi/internal/target"
)

// TestGroupColumnCollectedByItsChildren: on the simulated city portal the
// qyfgw department's column 14001 (政策文件) is a group whose list the
// site fills with its two children's posts, 14011 and 14012 — both
// already targets of the configuration. Once a crawl has read the
// department's index, the console says so before anything is saved: the
// catalog preview warns, naming both child targets; subscribing it from
// the catalog and creating it in the target form are refused with the same
// words, and no target is made. A column with no children (14002) gets no
// warning.
func TestGroupColumnCollectedByItsChildren(t *testing.T) {
	if !crawltest.Chromium(t) {
		t.Skip("the city portal needs the browser tier")
	}
	st := storetest.SQLite(t)
	ctx := context.Background()
	cfg, err := filepath.Abs(filepath.Join("..", "..", "demo", "config"))
	if err != nil {
		t.Fatal(err)
	}
	cw := crawltest.NewWorld(t, st, crawltest.Options{ConfigDir: cfg, Sim: sim.Options{Seed: 1}, Browser: true})
	if err := queue.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(ctx, queue.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	w := &world{st: st, q: q, sessions: newTestSessions(), now: time.Now(), cfgDir: cfg, web: cw}
	h, err := New(Options{Store: st, Sessions: w.sessions, Jobs: q, ConfigDir: cfg,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return w.now },
		Targets: &target.Service{Store: st, Validate: cw.Crawler(nil).Validate, List: cw.Crawler(nil).PreviewColumn, Location: zone.Shanghai}})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h

	// A crawl of one child reads the department's index: the catalog
	// learns the tree.
	child := mustTarget(t, st, "qingyuan_qyfgw_14011")
	if res := cw.Crawler(nil).CrawlTarget(ctx, *child); res.Err != nil {
		t.Fatalf("crawl %s: %v", child.TargetCode, res.Err)
	}
	site, err := st.SiteByCode(ctx, "qingyuan")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := st.ListColumnEntries(ctx, store.ColumnFilter{SiteID: site.ID})
	if err != nil {
		t.Fatal(err)
	}
	reg := map[string]int64{}
	for _, c := range cols {
		if c.DeptPath == "qyfgw" {
			reg[c.ColumnID] = c.ID
		}
	}
	if reg["14001"] == 0 || reg["14002"] == 0 {
		t.Fatalf("the crawl put no qyfgw columns 14001 and 14002 in the catalog: %v", reg)
	}
	targetsBefore, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}

	op := w.login(t, "operator")
	// The catalog marks the group before anyone ticks it, naming the
	// children's targets; a column without children is not marked.
	catalog := w.get(t, "/admin/catalog?site=qingyuan", op).Body.String()
	groupRow := rowWith(catalog, `value="`+strconv.FormatInt(reg["14001"], 10)+`"`)
	for _, want := range []string{"栏目组：文章已由下级栏目的目标采集", "qingyuan_qyfgw_14011", "qingyuan_qyfgw_14012", "采不到新文章"} {
		if !strings.Contains(groupRow, want) {
			t.Errorf("the catalog's row of 14001 lacks %q\n%s", want, groupRow)
		}
	}
	if row := rowWith(catalog, `value="`+strconv.FormatInt(reg["14002"], 10)+`"`); row == "" || strings.Contains(row, "栏目组") {
		t.Errorf("the catalog's row of 14002 is missing or marked as a group\n%s", row)
	}
	named := func(where, body string) {
		t.Helper()
		body = htmlUnescape(body)
		for _, want := range []string{"栏目「政策文件」（编号 14001）是栏目组", "已由下级栏目的采集目标采集",
			"qingyuan_qyfgw_14011", "qingyuan_qyfgw_14012", "不会采到任何新文章", "停更"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the warning lacks %q\n%s", where, want, between(body, `role="alert"`, "</"))
			}
		}
	}

	rec := w.post(t, "/admin/catalog/"+strconv.FormatInt(reg["14001"], 10)+"/preview", op, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("preview 14001: status %d\n%s", rec.Code, rec.Body)
	}
	named("preview of 14001", section(rec.Body.String(), `id="column-preview"`, "</section>"))
	// The preview still shows the group's posts: the children's, as the
	// site lists them.
	if n := strings.Count(rec.Body.String(), `rel="noopener noreferrer"`); n != 8 {
		t.Errorf("preview of 14001 lists %d articles, want the 8 of 14011 and 14012", n)
	}

	rec = w.post(t, "/admin/catalog/"+strconv.FormatInt(reg["14002"], 10)+"/preview", op, nil)
	if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Contains(body, "栏目组") {
		t.Errorf("preview of 14002 (no children): status %d, warned of a group\n%s", rec.Code, section(body, `id="column-preview"`, "</section>"))
	}

	rec = w.post(t, "/admin/catalog/subscribe", op, map[string][]string{"id": {strconv.FormatInt(reg["14001"], 10)},
		"schedule": {"weekly"}, "expected_cadence_days": {"7"}, "content_category": {"政策文件"}})
	if rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("subscribing 14001: status %d, want 422 refused", rec.Code)
	}
	named("catalog subscribe", rec.Body.String())

	form := map[string][]string{"site_code": {"qingyuan"}, "dept_path": {"qyfgw"},
		"column_id": {"14001"}, "target_name": {"清远市发展和改革局｜政策文件"}, "channel_name": {"政策文件"},
		"channel_path": {"信息公开｜政策文件"}, "content_category": {"政策文件"}, "schedule": {"weekly"},
		"expected_cadence_days": {"7"}, "interval_sec": {"0"}, "enabled": {"1"}}
	named("the target form's dry-run", w.post(t, "/admin/targets/new/dry-run", op, form).Body.String())
	rec = w.post(t, "/admin/targets", op, form)
	if rec.Code == http.StatusSeeOther {
		t.Errorf("the target form saved a target on 14001")
	}
	named("target form", rec.Body.String())

	targetsAfter, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(targetsAfter) != len(targetsBefore) {
		t.Errorf("%d targets before, %d after: a refused group column was saved", len(targetsBefore), len(targetsAfter))
	}
}
