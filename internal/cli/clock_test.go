package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// TestClockFaceOneZone: the command line and the console show one instant
// at the same wall time, in the zone ZHIZHI_TIMEZONE names (Beijing time
// when unset), and the command line names the zone. A breaker open until
// 2030-01-02 00:23 UTC is 08:23 in Beijing, 00:23 in UTC, 09:23 in Tokyo.
func TestClockFaceOneZone(t *testing.T) {
	waitBound(t)
	sw := newServeWorld(t, store.DialectSQLite)
	keepTargets(t, sw.st, "gd_ref_wjk")
	const host = "www.clock.gov.test"
	until := time.Date(2030, 1, 2, 0, 23, 0, 0, time.UTC)
	if err := sw.st.PutHostHealth(context.Background(), &model.HostState{Host: host, BreakerUntil: &until}); err != nil {
		t.Fatal(err)
	}
	zhizhi := func(env []string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(zhizhiBinary(t), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	env := sw.serveEnv(sw.dataDir)
	cmd := exec.Command(zhizhiBinary(t), "user", "add", "clock", "--role", "viewer", "--password-stdin")
	cmd.Env = env
	cmd.Stdin = strings.NewReader("s3cret-pass-1\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name, tz  string
		cli, page string // what `host list`/`health` and /admin/hosts show
	}{
		{"unset is Beijing time", "", "01-02 08:23 CST", "2030-01-02 08:23"},
		{"UTC", "UTC", "01-02 00:23 UTC", "2030-01-02 00:23 UTC"},
		{"Tokyo", "Asia/Tokyo", "01-02 09:23 JST", "2030-01-02 09:23 JST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := sw.serveEnv(sw.dataDir)
			if tc.tz != "" {
				env = append(env, "ZHIZHI_TIMEZONE="+tc.tz)
			}
			out, _ := zhizhi(env, "host", "list")
			if line := lineWith(out, host); !strings.Contains(line, tc.cli) {
				t.Errorf("host list shows %s as %q, want %q", host, line, tc.cli)
			}
			out, _ = zhizhi(env, "health")
			if line := lineWith(out, host); !strings.Contains(line, tc.cli) {
				t.Errorf("health shows %s as %q, want %q:\n%s", host, line, tc.cli, out)
			}

			p := spawnServe(t, env)
			select {
			case p.addr = <-p.listening:
			case err := <-p.done:
				t.Fatalf("serve exited before it listened: %v\n%s", err, p.output())
			case <-time.After(2 * time.Minute): // a safety net, not a measure
				p.kill()
				t.Fatalf("serve did not start:\n%s", p.output())
			}
			defer p.stop(t)
			base := "http://" + p.addr
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			form := url.Values{"username": {"clock"}, "password": {"s3cret-pass-1"}, "next": {"/admin/hosts"}}
			req, _ := http.NewRequest("POST", base+"/admin/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			resp, err = c.Get(base + "/admin/hosts")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			i := strings.Index(body, host)
			if resp.StatusCode != http.StatusOK || i < 0 {
				t.Fatalf("GET /admin/hosts = %d without %s:\n%.500s", resp.StatusCode, host, body)
			}
			if row := body[i:min(len(body), i+2000)]; !strings.Contains(row, tc.page) {
				t.Errorf("console shows %s without %q:\n%.1200s", host, tc.page, row)
			}
		})
	}

	// A zone name that does not exist is refused before any time is shown.
	out, code := zhizhi(append(sw.serveEnv(sw.dataDir), "ZHIZHI_TIMEZONE=Asia/Shanghia"), "host", "list")
	if code != 2 || !strings.Contains(out, `ZHIZHI_TIMEZONE "Asia/Shanghia" is not a time zone`) || strings.Contains(out, host) {
		t.Errorf("a misspelt zone: exit %d\n%s\nwant exit 2 naming ZHIZHI_TIMEZONE and no listing", code, out)
	}
}
