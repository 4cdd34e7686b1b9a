package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// alertsDir writes a configuration directory holding one site file and
// alerts.yaml with body, and returns it.
func alertsDir(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, SitesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	site := "site_code: s1\nsite_name: S\nbase_url: https://a.gov.test\nsite_role: county_local\n" +
		"template: {list: {item: li, link: a@href}, detail: {title: h1, body: div}}\n" +
		"targets: [{target_code: s1_a, target_name: A, entry_url: \"https://a.gov.test/a/\", dept_binding: external_ref}]\n"
	if err := os.WriteFile(filepath.Join(dir, SitesDir, "s1.yaml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AlertsFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAlertsFile: a good alerts.yaml is read with its defaults filled in,
// and the secrets come from the environment when the file names a variable.
func TestAlertsFile(t *testing.T) {
	t.Setenv("TEST_FEISHU_URL", "https://open.feishu.cn/open-apis/bot/v2/hook/abc")
	t.Setenv("TEST_FEISHU_SECRET", "s3cret")
	dir := alertsDir(t, `webhooks:
  - name: ops-feishu
    kind: feishu
    url_env: TEST_FEISHU_URL
    secret_env: TEST_FEISHU_SECRET
  - name: ops-wecom
    kind: wecom
    format: text
    url: https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k
  - {name: hook, kind: json, url: "http://127.0.0.1:9/alerts", secret: abc}
rules:
  success_rate: {below: 0.9, window_minutes: 30}
  challenge_rate: {enabled: false}
  review: {enabled: false}
`)
	b, problems := Load(dir)
	for _, p := range problems {
		t.Errorf("unexpected: %s", p)
	}
	a := b.Alerts
	if a == nil || len(a.Webhooks) != 3 {
		t.Fatalf("alerts %+v, want 3 webhooks", a)
	}
	fs, wc, js := a.Webhooks[0], a.Webhooks[1], a.Webhooks[2]
	if fs.Kind != WebhookFeishu || fs.Format != "post" || fs.URL != "https://open.feishu.cn/open-apis/bot/v2/hook/abc" || fs.Secret != "s3cret" || fs.URLEnv != "TEST_FEISHU_URL" {
		t.Errorf("feishu webhook %+v", fs)
	}
	if wc.Kind != WebhookWeCom || wc.Format != "text" || wc.Secret != "" {
		t.Errorf("wecom webhook %+v", wc)
	}
	if js.Kind != WebhookJSON || js.Format != "json" || js.Secret != "abc" {
		t.Errorf("json webhook %+v", js)
	}
	want := RateRule{Enabled: true, Threshold: 0.9, Window: 30 * time.Minute, MinRequests: 20}
	if a.SuccessRate != want {
		t.Errorf("success_rate %+v, want %+v (min_requests left at its default 20)", a.SuccessRate, want)
	}
	if a.ChallengeRate.Enabled || a.Review || !a.Stale {
		t.Errorf("rules: challenge_rate %v, review %v, stale %v; want off, off, on", a.ChallengeRate.Enabled, a.Review, a.Stale)
	}

	// A variable that is not set here is not a problem of the file: the
	// address is left empty, and whatever sends alerts refuses it.
	os.Unsetenv("NOT_SET_ANYWHERE")
	if err := os.WriteFile(filepath.Join(dir, AlertsFile), []byte("webhooks:\n  - {name: a, kind: feishu, url_env: NOT_SET_ANYWHERE}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, problems = Load(dir)
	if len(problems) != 0 || b.Alerts == nil || b.Alerts.Webhooks[0].URL != "" || b.Alerts.Webhooks[0].URLEnv != "NOT_SET_ANYWHERE" {
		t.Errorf("url_env naming an unset variable: problems %v, alerts %+v", problems, b.Alerts)
	}

	// Without the file there are no alerts and no problem.
	os.Remove(filepath.Join(dir, AlertsFile))
	if b, problems := Load(dir); b.Alerts != nil || len(problems) != 0 {
		t.Errorf("no alerts.yaml: alerts %+v, problems %v", b.Alerts, problems)
	}
}

// TestAlertsFileMistakes: every mistake in alerts.yaml is reported at its
// line and column, with what to do.
func TestAlertsFileMistakes(t *testing.T) {
	cases := []struct {
		name, body string
		line, col  int
		want       string
		warning    bool
	}{
		{"unknown top key", "webhook:\n  - {name: a, kind: feishu, url: \"https://x.test/h\"}\n", 1, 1, `unknown key "webhook" in alerts — did you mean webhooks?`, false},
		{"no webhooks", "rules:\n  stale: {enabled: true}\n", 1, 1, "alerts has no webhooks", false},
		{"percent instead of a fraction", "webhooks:\n  - {name: a, kind: feishu, url: \"https://x.test/h\"}\nrules:\n  success_rate:\n    below: 80\n", 5, 12, "below of rule success_rate is 80, not a fraction between 0 and 1", false},
		{"quoted number", "webhooks:\n  - {name: a, kind: feishu, url: \"https://x.test/h\"}\nrules:\n  challenge_rate: {above: \"0.2\"}\n", 4, 27, "above of rule challenge_rate must be a number", false},
		{"unknown kind", "webhooks:\n  - name: a\n    kind: dingtalk\n    url: https://x.test/h\n", 3, 11, `kind "dingtalk" is not a valid value`, false},
		{"format of another kind", "webhooks:\n  - name: a\n    kind: wecom\n    format: post\n    url: https://x.test/h\n", 4, 13, `format "post" is not a valid value`, false},
		{"no url", "webhooks:\n  - name: a\n    kind: feishu\n", 2, 5, "webhook a is missing required key url", false},
		{"url and url_env", "webhooks:\n  - name: a\n    kind: feishu\n    url: https://x.test/h\n    url_env: A_URL\n", 5, 5, "url of webhook a is given twice", false},
		{"relative url", "webhooks:\n  - name: a\n    kind: json\n    url: open.feishu.cn/hook\n", 4, 10, "url of webhook a is not an http(s) URL", false},
		{"wecom secret", "webhooks:\n  - name: a\n    kind: wecom\n    url: https://x.test/h\n    secret: s\n", 5, 5, "WeCom robots are not signed", false},
		{"duplicate name", "webhooks:\n  - {name: a, kind: json, url: \"https://x.test/1\"}\n  - {name: a, kind: json, url: \"https://x.test/2\"}\n", 3, 5, `duplicate webhook name "a"`, false},
		{"typo in a rule", "webhooks:\n  - {name: a, kind: json, url: \"https://x.test/1\"}\nrules:\n  stale: {enabeld: false}\n", 4, 11, `unknown key "enabeld" in rule stale — did you mean enabled?`, false},
		{"window of zero", "webhooks:\n  - {name: a, kind: json, url: \"https://x.test/1\"}\nrules:\n  success_rate: {window_minutes: 0}\n", 4, 34, "window_minutes of rule success_rate is 0", false},
		{"malformed YAML", "webhooks:\n  - name: a\n    kind: feishu\n    url: https://x.test/h: bad\n", 4, 1, "malformed YAML: mapping values are not allowed", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := alertsDir(t, c.body)
			file := filepath.Join(dir, AlertsFile)
			var found bool
			for _, p := range Lint(dir) {
				if p.Pos.File != file {
					t.Errorf("unexpected problem elsewhere: %s", p)
					continue
				}
				if p.Pos.Line == c.line && p.Pos.Column == c.col && p.Warning == c.warning && strings.Contains(p.String(), c.want) {
					found = true
					if !strings.Contains(p.String(), " — ") {
						t.Errorf("%s says what is wrong but not what to do", p)
					}
				}
			}
			if !found {
				t.Errorf("want %s:%d:%d: %q (warning %v); got %v", file, c.line, c.col, c.want, c.warning, Lint(dir))
			}
		})
	}
}
