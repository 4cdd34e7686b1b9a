// Package chrometest is for tests only: it starts Debian's headless
// Chromium for a test that drives a page of zhizhi's own (the console, the
// portal) and keeps the test's screenshots where a person can look at them.
package chrometest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
)

// Path is Debian's Chromium.
const Path = "/usr/bin/chromium"

// Require skips the test without Chromium, and fails it under CI=true,
// where a green run must have driven the browser.
func Require(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is required under CI=true: %v", err)
		}
		t.Skipf("chromium not installed (%v); apt-get install chromium", err)
	}
}

// Options shape the browser a test starts.
type Options struct {
	UserAgent string // empty: Chromium's own
	// Listen hears every event of the tab (script exceptions, console log
	// entries: the console log is enabled).
	Listen func(ev any)
}

// Start starts Chromium for t (see Require) in a fresh profile and returns
// its tab; everything is closed when the test ends.
func Start(t *testing.T, o Options) context.Context {
	t.Helper()
	Require(t)
	// A safety net against a hung browser, not a measure.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.WindowSize(1280, 800), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("lang", "zh-CN"),
		// A wheel scrolls at once: with the smooth-scroll animation a click
		// aimed at a link while the page still moves (a slow, loaded
		// machine) lands beside it and the test waits for a page that
		// never comes.
		chromedp.Flag("disable-smooth-scrolling", true))
	if o.UserAgent != "" {
		opts = append(opts, chromedp.UserAgent(o.UserAgent))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	var tabOpts []chromedp.ContextOption
	if o.Listen != nil {
		tabOpts = append(tabOpts, chromedp.WithListener(o.Listen))
	}
	tab, cancelTab := chromedp.NewContext(allocCtx, tabOpts...)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(tab, log.Enable, struct{}{}); err != nil {
		t.Fatalf("enable the console log: %v", err)
	}
	return tab
}

// ArtifactDir is where a test's screenshots go: $ZHIZHI_TEST_ARTIFACTS/sub
// when set (make test sets ./artifacts, CI keeps it), else a temporary
// directory that outlives the test.
func ArtifactDir(t *testing.T, sub string) string {
	t.Helper()
	dir := os.Getenv("ZHIZHI_TEST_ARTIFACTS")
	if dir != "" {
		dir = filepath.Join(dir, sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "zhizhi-"+sub+"-shots-"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots (%s): %s", sub, dir)
	// Without a Chinese font Chromium draws every character as a box: the
	// test still passes, but the pictures are useless to a person.
	if out, err := exec.Command("fc-list", ":lang=zh").Output(); err == nil && len(bytes.TrimSpace(out)) == 0 {
		t.Log("NO CHINESE FONT: the screenshots will show boxes; apt-get install fonts-wqy-microhei")
	}
	return dir
}

// Shoot saves a full-page screenshot of tab as dir/name.png.
func Shoot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
