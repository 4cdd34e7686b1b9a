package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// truthOfHosts is the truth's articles on hosts, as JSON per host, for
// comparing two worlds.
func truthOfHosts(t *testing.T, w *World, hosts []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range w.Truth() {
		if !slices.Contains(hosts, a.Host) {
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		out[a.Host] += string(b) + "\n"
	}
	return out
}

// TestCountiesAreAdded: Counties adds that many distinct hosts with their
// own articles and leaves the hand-written sites exactly as they were; the
// same seed gives the same counties whatever their number, another seed
// other ones.
func TestCountiesAreAdded(t *testing.T) {
	plain := startWorld(t, Options{Seed: 1})
	six := startWorld(t, Options{Seed: 1, Counties: 6})
	four := startWorld(t, Options{Seed: 1, Counties: 4})
	other := startWorld(t, Options{Seed: 2, Counties: 4})

	handWritten := plain.Hosts()[1:]
	if len(six.Hosts()) != len(plain.Hosts())+6 {
		t.Fatalf("6 counties: %d hosts, the plain world has %d", len(six.Hosts()), len(plain.Hosts()))
	}
	want := []string{"c001.county.gov.test", "c002.county.gov.test", "c003.county.gov.test",
		"c004.county.gov.test", "c005.county.gov.test", "c006.county.gov.test"}
	if got := six.CountyHosts(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("county hosts %v, want %v", got, want)
	}
	for _, h := range want {
		if six.ResolveMap()[h] == "" {
			t.Errorf("%s is not in the resolve map", h)
		}
	}

	a, b := truthOfHosts(t, plain, handWritten), truthOfHosts(t, six, handWritten)
	for _, h := range handWritten {
		if a[h] == "" || a[h] != b[h] {
			t.Errorf("%s: the hand-written site's truth changed when counties were added", h)
		}
	}

	sixT, fourT, otherT := truthOfHosts(t, six, want), truthOfHosts(t, four, want[:4]), truthOfHosts(t, other, want[:4])
	names := map[string]string{}
	for _, h := range want {
		if sixT[h] == "" {
			t.Errorf("%s has no article in the truth", h)
		}
		name := six.byHost[h].Name
		if prev, dup := names[name]; dup {
			t.Errorf("%s and %s are both named %s", prev, h, name)
		}
		names[name] = h
	}
	for _, h := range want[:4] {
		if fourT[h] != sixT[h] {
			t.Errorf("%s differs between a world of 4 and one of 6 counties", h)
		}
		if otherT[h] == fourT[h] {
			t.Errorf("%s is the same under another seed", h)
		}
	}
}

// TestCountiesRange: 0 to 200 counties, nothing else.
func TestCountiesRange(t *testing.T) {
	for _, n := range []int{-1, 201} {
		if w, err := Start(context.Background(), Options{Counties: n}); err == nil {
			w.Close()
			t.Errorf("Start with %d counties: no error", n)
		}
	}
}

// TestCountiesKinds: with 200 counties half run gkmlpt and half are
// template sites of both kinds, and each keeps the awkward parts of the
// hand-written site it imitates.
func TestCountiesKinds(t *testing.T) {
	w := startWorld(t, Options{Seed: 1, Counties: 200})
	c := client(w)
	kinds := map[siteKind]int{}
	var groups, jumps, unconfigured, paginated int
	for _, s := range w.counties {
		kinds[s.Kind]++
		for _, col := range s.columns {
			switch {
			case len(col.Children) > 0:
				groups++
			case col.JumpURL != "":
				jumps++
			case col.TargetCode == "":
				unconfigured++
			case len(col.articles) > s.PageSize:
				paginated++
			}
		}
	}
	if kinds[kindGkmlpt] != 100 || kinds[kindLianzhou] != 50 || kinds[kindGD] != 50 {
		t.Errorf("kinds of 200 counties: %d gkmlpt, %d GB18030 template, %d provincial-style template; want 100, 50, 50",
			kinds[kindGkmlpt], kinds[kindLianzhou], kinds[kindGD])
	}
	for what, n := range map[string]int{"group nodes": groups, "jump-only nodes": jumps, "unconfigured columns": unconfigured, "columns of more than one list page": paginated} {
		if n == 0 {
			t.Errorf("no county has %s", what)
		}
	}

	// c001 runs gkmlpt: the TREE in window._CONFIG, the JSON list API with
	// its sid, the 公开属性 table on details.
	gk := w.byHost["c001.county.gov.test"]
	d := gk.Depts[0]
	idx := get(t, c, "GET", "http://c001.county.gov.test/"+d.Path+"/gkmlpt/index")
	if idx.status != http.StatusOK || !bytes.Contains(idx.body, []byte("window._CONFIG")) || !bytes.Contains(idx.body, []byte("SID: '"+gk.SID+"'")) {
		t.Errorf("c001 gkmlpt index: %d\n%.300s", idx.status, idx.body)
	}
	leafCol := d.Columns[0]
	api := get(t, c, "GET", fmt.Sprintf("http://c001.county.gov.test/%s/gkmlpt/api/all/%s?page=1&sid=%s", d.Path, leafCol.ID, gk.SID))
	var list gkList
	if err := json.Unmarshal(api.body, &list); err != nil || list.Total != len(leafCol.articles) {
		t.Errorf("c001 list API: %v, total %d, want %d", err, list.Total, len(leafCol.articles))
	}
	if bad := get(t, c, "GET", fmt.Sprintf("http://c001.county.gov.test/%s/gkmlpt/api/all/%s?page=1&sid=1", d.Path, leafCol.ID)); bad.status != http.StatusBadRequest {
		t.Errorf("c001 list API with a wrong sid: %d, want 400", bad.status)
	}
	detail := get(t, c, "GET", "http://c001.county.gov.test"+leafCol.articles[0].Path)
	if !bytes.Contains(detail.body, []byte(`class="table-infos"`)) || !bytes.Contains(detail.body, []byte("索引号")) {
		t.Errorf("c001 detail has no 公开属性 table:\n%.500s", detail.body)
	}

	// c002 is a TRS-style site: GB18030 declared only in <meta>, lists
	// index.html, index_1.html.
	tr := w.byHost["c002.county.gov.test"]
	col := tr.Depts[0].Columns[0]
	page := get(t, c, "GET", "http://c002.county.gov.test/"+col.ID+"/")
	if ct := page.header.Get("Content-Type"); ct != "text/html" {
		t.Errorf("c002 list Content-Type %q, want text/html without a charset", ct)
	}
	utf8Page, err := simplifiedchinese.GB18030.NewDecoder().Bytes(page.body)
	if err != nil || !bytes.Contains(utf8Page, []byte(tr.Name)) || bytes.Contains(page.body, []byte(tr.Name)) {
		t.Errorf("c002 list is not GB18030 carrying the site's name %s", tr.Name)
	}
	if len(col.articles) > tr.PageSize {
		if p2 := get(t, c, "GET", "http://c002.county.gov.test/"+col.ID+"/index_1.html"); p2.status != http.StatusOK {
			t.Errorf("c002 second list page index_1.html: %d", p2.status)
		}
	}

	// c004 is provincial-style: robots.txt forbids a column the truth marks.
	robots := get(t, c, "GET", "http://c004.county.gov.test/robots.txt")
	if !bytes.Contains(robots.body, []byte("Disallow: /zwgk/rsrm/")) {
		t.Errorf("c004 robots.txt:\n%s", robots.body)
	}
	forbidden := 0
	for _, a := range w.Truth() {
		if a.Host == "c004.county.gov.test" && a.RobotsDisallowed {
			forbidden++
		}
	}
	if forbidden == 0 {
		t.Error("no article of c004 is marked robots_disallowed")
	}

	// Every county request is in the access log.
	w.ResetLog()
	for _, h := range w.CountyHosts()[:10] {
		get(t, c, "GET", "http://"+h+"/robots.txt")
		if log := w.AccessLog(h); len(log) != 1 || log[0].Path != "/robots.txt" {
			t.Errorf("%s: access log %v, want the one robots.txt request", h, log)
		}
	}
}

// TestWriteCountyConfigRefuses: a directory that is not empty, or a
// bundled directory without the adapter, writes nothing.
func TestWriteCountyConfigRefuses(t *testing.T) {
	w := startWorld(t, Options{Seed: 1, Counties: 2})
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteCountyConfig(full, configDir(t)); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("into a directory with a file: %v, want a not-empty error", err)
	}
	if err := w.WriteCountyConfig(filepath.Join(parent, "new"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "cms/gkmlpt.yaml") {
		t.Errorf("without a bundled adapter: %v, want the missing file named", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "full" {
		t.Errorf("after the refusals %s holds %v, want only full/", parent, entries)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep.txt")); string(b) != "mine" {
		t.Errorf("keep.txt changed: %q", b)
	}
	if err := startWorld(t, Options{Seed: 1}).WriteCountyConfig(filepath.Join(parent, "none"), configDir(t)); err == nil {
		t.Error("a world without counties wrote a county config")
	}
}
