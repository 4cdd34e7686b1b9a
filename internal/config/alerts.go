package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// AlertsFile is the alert configuration inside the configuration directory.
const AlertsFile = "alerts.yaml"

// Kinds of webhook.
const (
	WebhookFeishu = "feishu" // a Feishu (飞书) group's custom bot
	WebhookWeCom  = "wecom"  // a WeCom (企业微信) group robot
	WebhookJSON   = "json"   // any endpoint taking zhizhi's own JSON
)

// Alerts is config/alerts.yaml: where alerts go and when they are raised.
type Alerts struct {
	File          string
	Webhooks      []Webhook
	SuccessRate   RateRule // fires when the success rate is below Threshold
	ChallengeRate RateRule // fires when the challenge rate is above Threshold
	Stale         bool     // a target gone stale
	Review        bool     // a host flagged for review
	Takedown      bool     // a takedown request near or past its 48-hour deadline
}

// Webhook is one destination of alert messages.
type Webhook struct {
	Name   string
	Kind   string // WebhookFeishu, WebhookWeCom, WebhookJSON
	Format string // feishu: text, post, interactive; wecom: text, markdown; json: json
	URL    string // "" when url_env names a variable that is not set
	// Secret signs what is sent: Feishu's signature check, or for a JSON
	// webhook an X-Zhizhi-Signature header. Empty: unsigned.
	Secret string
	// The environment variables url and secret come from, when they do.
	URLEnv, SecretEnv string
	Pos               Pos
}

// RateRule is a rule on a rate of requests over a sliding window.
type RateRule struct {
	Enabled     bool
	Threshold   float64 // a fraction, 0 < t < 1
	Window      time.Duration
	MinRequests int // fewer requests in the window say nothing either way
}

// Defaults of the rules a file does not configure.
var (
	DefaultSuccessRate   = RateRule{Enabled: true, Threshold: 0.8, Window: time.Hour, MinRequests: 20}
	DefaultChallengeRate = RateRule{Enabled: true, Threshold: 0.2, Window: time.Hour, MinRequests: 20}
)

// The keys of alerts.yaml, for the docs test and "did you mean".
var (
	alertKeys             = []string{"webhooks", "rules"}
	webhookKeys           = []string{"name", "kind", "url", "url_env", "secret", "secret_env", "format"}
	alertRuleKeys         = []string{"success_rate", "challenge_rate", "stale", "review", "takedown"}
	successRateKeys       = []string{"enabled", "below", "window_minutes", "min_requests"}
	challengeRateKeys     = []string{"enabled", "above", "window_minutes", "min_requests"}
	alertToggleKeys       = []string{"enabled"}
	webhookKinds          = []string{WebhookFeishu, WebhookWeCom, WebhookJSON}
	webhookFormats        = map[string][]string{WebhookFeishu: {"post", "text", "interactive"}, WebhookWeCom: {"markdown", "text"}, WebhookJSON: {"json"}}
	webhookNameRe         = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,50}$`)
	envNameRe             = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	defaultWebhookFormats = map[string]string{WebhookFeishu: "post", WebhookWeCom: "markdown", WebhookJSON: "json"}
)

// readAlerts decodes alerts.yaml.
func (r *reporter) readAlerts(path string, root *yaml.Node) *Alerts {
	a := &Alerts{File: path, SuccessRate: DefaultSuccessRate, ChallengeRate: DefaultChallengeRate, Stale: true, Review: true, Takedown: true}
	if root == nil {
		r.errorf(Pos{File: path}, "list at least one webhook under `webhooks:` (see docs/config.md), or remove the file", "alerts file is empty")
		return a
	}
	m := r.readMapping(path, root, "alerts", alertKeys, nil)
	hooks := m.seq("webhooks")
	if len(hooks) == 0 {
		r.errorf(m.keyPos("webhooks"), "add a webhook: `webhooks: [{name: ops, kind: feishu, url_env: FEISHU_WEBHOOK_URL}]`",
			"alerts has no webhooks, so no alert could be sent")
	}
	names := map[string]Pos{}
	for i, n := range hooks {
		w := r.readWebhook(path, n, fmt.Sprintf("webhook %d", i+1))
		if w.Name != "" {
			if first, dup := names[w.Name]; dup {
				r.errorf(w.Pos, "give each webhook its own name (the first is at "+first.String()+")", "duplicate webhook name %q", w.Name)
			}
			names[w.Name] = w.Pos
		}
		a.Webhooks = append(a.Webhooks, w)
	}
	if v, ok := m.vals["rules"]; ok {
		rules := r.readMapping(path, v, "rules", alertRuleKeys, nil)
		if n, ok := rules.vals["success_rate"]; ok {
			a.SuccessRate = r.readRateRule(path, n, "rule success_rate", "below", successRateKeys, DefaultSuccessRate)
		}
		if n, ok := rules.vals["challenge_rate"]; ok {
			a.ChallengeRate = r.readRateRule(path, n, "rule challenge_rate", "above", challengeRateKeys, DefaultChallengeRate)
		}
		if n, ok := rules.vals["stale"]; ok {
			a.Stale = r.readMapping(path, n, "rule stale", alertToggleKeys, nil).boolean("enabled", true)
		}
		if n, ok := rules.vals["review"]; ok {
			a.Review = r.readMapping(path, n, "rule review", alertToggleKeys, nil).boolean("enabled", true)
		}
		if n, ok := rules.vals["takedown"]; ok {
			a.Takedown = r.readMapping(path, n, "rule takedown", alertToggleKeys, nil).boolean("enabled", true)
		}
	}
	return a
}

func (r *reporter) readWebhook(path string, n *yaml.Node, what string) Webhook {
	m := r.readMapping(path, n, what, webhookKeys, nil)
	w := Webhook{Pos: m.start()}
	w.Name = m.str("name", true, "ops")
	if w.Name != "" {
		if !webhookNameRe.MatchString(w.Name) {
			r.errorf(m.valPos("name"), "use letters, digits, '.', '_' or '-' (at most 50)", "webhook name %q is not a valid name", w.Name)
		}
		what = "webhook " + w.Name
		m.what = what
	}
	w.Kind = m.str("kind", true, WebhookFeishu)
	if !m.oneOf("kind", w.Kind, webhookKinds) {
		w.Kind = ""
	}
	w.Format = m.str("format", false, "")
	if w.Kind != "" {
		if w.Format == "" {
			w.Format = defaultWebhookFormats[w.Kind]
		} else if !m.oneOf("format", w.Format, webhookFormats[w.Kind]) {
			w.Format = defaultWebhookFormats[w.Kind]
		}
	}
	w.URL, w.URLEnv = r.readSecretPair(m, "url", "url_env", true)
	if w.URL != "" {
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			where := m.valPos("url")
			if w.URLEnv != "" {
				where = m.valPos("url_env")
			}
			r.errorf(where, "give the full address the group's bot shows, starting with https://", "url of %s is not an http(s) URL", what)
			w.URL = ""
		}
	}
	w.Secret, w.SecretEnv = r.readSecretPair(m, "secret", "secret_env", false)
	if (m.has("secret") || m.has("secret_env")) && w.Kind == WebhookWeCom {
		key := "secret"
		if m.has("secret_env") {
			key = "secret_env"
		}
		r.errorf(m.keyPos(key), "remove it: a WeCom group robot has no signature; keep its URL secret instead",
			"%s of %s: WeCom robots are not signed", key, what)
	}
	return w
}

// readSecretPair reads a value written inline (key) or named by an
// environment variable (envKey): exactly one of them. env is the
// variable's name. A variable that is not set here is no problem of the
// file (it may be checked on a machine that sends no alerts); whatever
// sends alerts refuses to start without it.
func (r *reporter) readSecretPair(m *mapping, key, envKey string, required bool) (val, env string) {
	switch {
	case m.has(key) && m.has(envKey):
		r.errorf(m.keyPos(envKey), fmt.Sprintf("keep one of %s and %s", key, envKey), "%s of %s is given twice", key, m.what)
		return "", ""
	case m.has(envKey):
		env = m.str(envKey, true, "FEISHU_WEBHOOK_URL")
		if env == "" {
			return "", ""
		}
		if !envNameRe.MatchString(env) {
			r.errorf(m.valPos(envKey), "name an environment variable, e.g. FEISHU_WEBHOOK_URL", "%s %q is not a variable name", envKey, env)
			return "", ""
		}
		return strings.TrimSpace(os.Getenv(env)), env
	case m.has(key):
		return m.str(key, true, "https://open.feishu.cn/open-apis/bot/v2/hook/…"), ""
	case required:
		m.missing(key, "https://open.feishu.cn/open-apis/bot/v2/hook/… (or "+envKey+": VARIABLE)")
	}
	return "", ""
}

func (r *reporter) readRateRule(path string, n *yaml.Node, what, thresholdKey string, keys []string, def RateRule) RateRule {
	m := r.readMapping(path, n, what, keys, nil)
	rule := def
	rule.Enabled = m.boolean("enabled", true)
	if v, ok := m.number(thresholdKey); ok {
		if v <= 0 || v >= 1 {
			r.errorf(m.valPos(thresholdKey), fmt.Sprintf("write a fraction between 0 and 1, e.g. %s: %g for %g%%", thresholdKey, def.Threshold, def.Threshold*100),
				"%s of %s is %g, not a fraction between 0 and 1", thresholdKey, what, v)
		} else {
			rule.Threshold = v
		}
	}
	if v, ok := m.integer("window_minutes"); ok {
		if v < 1 || v > 7*24*60 {
			r.errorf(m.valPos("window_minutes"), "use a whole number of minutes from 1 to 10080 (7 days), e.g. 60", "window_minutes of %s is %d", what, v)
		} else {
			rule.Window = time.Duration(v) * time.Minute
		}
	}
	if v, ok := m.integer("min_requests"); ok {
		if v < 1 {
			r.errorf(m.valPos("min_requests"), "use a positive whole number, e.g. 20", "min_requests of %s is %d", what, v)
		} else {
			rule.MinRequests = int(v)
		}
	}
	return rule
}

// number returns a numeric value (integer or decimal); ok is false when
// absent or not a number.
func (m *mapping) number(key string) (float64, bool) {
	v, present := m.vals[key]
	if !present {
		return 0, false
	}
	if v.Kind == yaml.ScalarNode && (v.ShortTag() == "!!float" || v.ShortTag() == "!!int") {
		if f, err := strconv.ParseFloat(v.Value, 64); err == nil {
			return f, true
		}
	}
	m.r.errorf(m.pos(v), "write a number without quotes, e.g. 0.8", "%s of %s must be a number, got %s %q", m.name(key), m.what, kindName(v), v.Value)
	return 0, false
}
