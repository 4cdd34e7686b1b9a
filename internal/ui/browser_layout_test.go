package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/store/storetest"
)

// TestTargetListFitsAt1366: on a 1366 px screen the target list keeps its
// names readable — each on at most two lines, never squeezed into a column
// a few characters wide — so the demo's targets do not stretch the page
// to thousands of pixels.
func TestTargetListFitsAt1366(t *testing.T) {
	b := openBrowser(t)
	w := simWorld(t, storetest.SQLite(t))
	// As in a running system: every target has been crawled and has
	// articles, so the time columns are full.
	if _, err := w.st.DB().Exec(`UPDATE crawl_target SET last_crawled_at = '2026-04-23T02:00:00Z', last_article_time = '2026-04-22T09:30:00Z'`); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", w.h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b.do("log in at 1366 px", chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(srv.URL+"/admin/targets"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-operator"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#target-table`)))
	raw, err := chromedp.Run(b.tab, chromedp.Evaluate[string](`JSON.stringify((() => {
		const rows = [...document.querySelectorAll("#target-table tbody tr")].filter(r => r.cells.length > 2);
		let maxLines = 0, minWidth = 1e9, worst = "";
		for (const r of rows) {
			const cell = r.cells[1];
			const range = document.createRange(); range.selectNodeContents(cell);
			const lines = new Set([...range.getClientRects()].map(x => Math.round(x.top))).size;
			if (lines > maxLines) { maxLines = lines; worst = cell.innerText; }
			minWidth = Math.min(minWidth, cell.getBoundingClientRect().width);
		}
		return {rows: rows.length, maxLines, minWidth, worst, height: document.documentElement.scrollHeight};
	})())`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows     int
		MaxLines int
		MinWidth float64
		Worst    string
		Height   int
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	b.shoot("targets-1366")
	t.Logf("%d targets, page %d px tall, name cells ≥ %.0f px wide, at most %d lines", got.Rows, got.Height, got.MinWidth, got.MaxLines)
	if got.Rows < 30 {
		t.Fatalf("%d targets listed, want the demo's (at least 30)", got.Rows)
	}
	if got.MaxLines > 2 {
		t.Errorf("a target name takes %d lines at 1366 px (%q), want at most 2", got.MaxLines, got.Worst)
	}
	// Ten Chinese characters of 14 px: a name never narrower than that.
	if got.MinWidth < 140 {
		t.Errorf("the narrowest name cell is %.0f px wide at 1366 px, want at least 140", got.MinWidth)
	}
	b.checkClean()
}
