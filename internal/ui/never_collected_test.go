package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/health"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// rowWith is the table row of body that holds needle ("" for none).
func rowWith(body, needle string) string {
	i := strings.Index(body, needle)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<tr")
	end := strings.Index(body[i:], "</tr>")
	if start < 0 || end < 0 {
		return ""
	}
	return body[start : i+end]
}

// TestPagesSayNeverCollectedAsHealthDoes: an enabled target that has never
// been collected is 从未采集 on the site page, the target list and its own
// page exactly when `zhizhi health` lists it so (its first scheduled time
// plus the grace has passed); before that it waits for its first crawl and
// is not called healthy. The world's targets were all added at start-up
// and none ever ran.
func TestPagesSayNeverCollectedAsHealthDoes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		c := w.login(t, "viewer")
		targets, err := st.ListTargets(ctx, store.TargetFilter{SiteCode: "qingyuan"})
		if err != nil {
			t.Fatal(err)
		}
		added := targets[0].CreatedAt
		for _, tc := range []struct {
			name string
			now  time.Time
			want bool // every enabled target is 从未采集
		}{
			{"a minute after they were added", added.Add(time.Minute), false},
			// A day and six hours on, every daily, weekly or monthly
			// schedule has come round once and the grace has passed.
			{"45 days on", added.Add(45 * 24 * time.Hour), true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w.now = tc.now
				rep, err := health.Check(ctx, st, tc.now)
				if err != nil {
					t.Fatal(err)
				}
				never := map[string]bool{}
				for _, s := range rep.Stale {
					if s.NeverCollected {
						never[s.TargetCode] = true
					}
				}
				site := w.get(t, "/admin/sites/qingyuan", c).Body.String()
				list := w.get(t, "/admin/targets?site=qingyuan", c).Body.String()
				checked := 0
				for _, tg := range targets {
					if !tg.Enabled {
						continue
					}
					checked++
					if never[tg.TargetCode] != tc.want {
						t.Fatalf("%s: health lists it as never collected: %v, want %v", tg.TargetCode, never[tg.TargetCode], tc.want)
					}
					page := w.get(t, "/admin/targets/"+tg.TargetCode, c).Body.String()
					for where, row := range map[string]string{
						"site page":   rowWith(site, "<code>"+tg.TargetCode+"</code>"),
						"target list": rowWith(list, `href="/admin/targets/`+tg.TargetCode+`"`),
						"target page": section(page, "<h2>", "</h2>"),
					} {
						if row == "" {
							t.Fatalf("%s: no row for %s", where, tg.TargetCode)
						}
						if got := strings.Contains(row, "从未采集"); got != tc.want {
							t.Errorf("%s of %s: 从未采集 shown %v, want %v (as health says)\n%s", where, tg.TargetCode, got, tc.want, row)
						}
						if !tc.want && strings.Contains(row, "正常") {
							t.Errorf("%s of %s: a target never crawled is called 正常\n%s", where, tg.TargetCode, row)
						}
					}
				}
				if checked < 5 {
					t.Fatalf("checked %d enabled targets of qingyuan, want the site's columns", checked)
				}
			})
		}
	})
}
