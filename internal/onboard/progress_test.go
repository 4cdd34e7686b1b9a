package onboard

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestWizardReportsProgress: a page shows a long batch advancing, so every
// site detected, every dept scanned and every site scanned is reported as
// it is done — each once, a site's depts before the site.
func TestWizardReportsProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("reads simulated county sites at the default polite pace")
	}
	ctx := context.Background()
	sw := newSimWizard(t)
	var (
		mu       sync.Mutex
		detected []string
		depts    = map[string][]string{} // base URL → dept paths, in report order
		scanned  []string
		late     []string
	)
	w := *sw.wizard
	w.Progress = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Detection != nil:
			detected = append(detected, e.Detection.BaseURL)
		case e.Dept != nil:
			depts[e.BaseURL] = append(depts[e.BaseURL], e.Dept.DeptPath)
			for _, s := range scanned {
				if s == e.BaseURL {
					late = append(late, e.BaseURL+"/"+e.Dept.DeptPath)
				}
			}
		case e.Site != nil:
			scanned = append(scanned, e.Site.BaseURL)
			if len(e.Site.Depts) != len(depts[e.BaseURL]) {
				late = append(late, fmt.Sprintf("%s: site reported with %d depts, %d reported before it", e.BaseURL, len(e.Site.Depts), len(depts[e.BaseURL])))
			}
		}
	}
	lines, _ := ParseBaseURLs("http://c001.county.gov.test\nhttp://c002.county.gov.test\nhttp://c003.county.gov.test\nhttp://" + deadHost)
	ds := w.Detect(ctx, lines)
	mu.Lock()
	got := append([]string(nil), detected...)
	mu.Unlock()
	sort.Strings(got)
	if want := "[http://c001.county.gov.test http://c002.county.gov.test http://c003.county.gov.test http://" + deadHost + "]"; fmt.Sprint(got) != want {
		t.Errorf("detections reported %v, want each of the 4 lines once: %s", got, want)
	}
	if len(ds) != 4 {
		t.Fatalf("%d detections", len(ds))
	}
	sites := w.Scan(ctx, ds)
	if len(sites) != 2 {
		t.Fatalf("%d sites scanned, want the 2 gkmlpt counties", len(sites))
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(scanned)
	if fmt.Sprint(scanned) != "[http://c001.county.gov.test http://c003.county.gov.test]" {
		t.Errorf("sites reported scanned: %v", scanned)
	}
	for _, s := range sites {
		var want []string
		for _, d := range s.Depts {
			want = append(want, d.DeptPath)
		}
		if len(want) == 0 || strings.Join(depts[s.BaseURL], " ") != strings.Join(want, " ") {
			t.Errorf("%s: depts reported %v, want %v", s.BaseURL, depts[s.BaseURL], want)
		}
	}
	if len(late) > 0 {
		t.Errorf("reported out of order: %v", late)
	}
}
