package alert_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
)

// TestDeliveryFailures: a webhook that does not take a message is an
// error, and the error says whether trying again later may help. Feishu
// and WeCom answer HTTP 200 with a code in the body for most refusals, so
// the body is read, not only the status.
func TestDeliveryFailures(t *testing.T) {
	n := alert.Notification{Webhook: "w", Key: "success_rate", Rule: "success_rate", State: alert.Firing, Episode: 1,
		At: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), Title: "【知止告警】抓取成功率过低", Lines: []string{"最近 60 分钟请求成功率 33.3%"}}
	cases := []struct {
		name   string
		kind   string
		status int
		body   string
		ok     bool
		retry  bool
	}{
		{"feishu success", config.WebhookFeishu, 200, `{"code":0,"msg":"success","data":{}}`, true, false},
		{"feishu old success shape", config.WebhookFeishu, 200, `{"Extra":null,"StatusCode":0,"StatusMessage":"success"}`, true, false},
		{"feishu bad signature", config.WebhookFeishu, 200, `{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}`, false, false},
		{"feishu keyword missing", config.WebhookFeishu, 200, `{"code":19024,"msg":"Key Words Not Found"}`, false, false},
		{"feishu malformed request", config.WebhookFeishu, 400, `{"code":9499,"msg":"Bad Request","data":{}}`, false, false},
		{"feishu rate limited", config.WebhookFeishu, 400, `{"code":11232,"msg":"frequency limited"}`, false, true},
		{"feishu server error", config.WebhookFeishu, 502, `<html>bad gateway</html>`, false, true},
		{"feishu 200 without a result", config.WebhookFeishu, 200, `<html>portal</html>`, false, true},
		{"wecom success", config.WebhookWeCom, 200, `{"errcode":0,"errmsg":"ok"}`, true, false},
		{"wecom wrong key", config.WebhookWeCom, 200, `{"errcode":93000,"errmsg":"invalid webhook url"}`, false, false},
		{"wecom rate limited", config.WebhookWeCom, 200, `{"errcode":45009,"errmsg":"api freq out of limit"}`, false, true},
		{"wecom busy", config.WebhookWeCom, 200, `{"errcode":-1,"errmsg":"system busy"}`, false, true},
		{"json accepted", config.WebhookJSON, 204, ``, true, false},
		{"json not found", config.WebhookJSON, 404, `no such hook`, false, false},
		{"json too many requests", config.WebhookJSON, 429, ``, false, true},
		{"json unavailable", config.WebhookJSON, 503, ``, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			w := config.Webhook{Name: "w", Kind: c.kind, URL: srv.URL + "/hook?key=SECRET-KEY"}
			err := alert.Deliver(context.Background(), w, n)
			if c.ok {
				if err != nil {
					t.Fatalf("delivery failed: %v", err)
				}
				return
			}
			var de *alert.DeliveryError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *DeliveryError", err)
			}
			if alert.Retryable(err) != c.retry {
				t.Errorf("retryable = %v, want %v (%v)", alert.Retryable(err), c.retry, err)
			}
			if strings.Contains(err.Error(), "SECRET-KEY") {
				t.Errorf("the error shows the webhook's key: %v", err)
			}
		})
	}

	t.Run("nobody listening", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := srv.URL
		srv.Close()
		err := alert.Deliver(context.Background(), config.Webhook{Name: "w", Kind: config.WebhookWeCom, URL: addr + "/send?key=SECRET-KEY"}, n)
		if err == nil || !alert.Retryable(err) {
			t.Fatalf("got %v, want a retryable failure", err)
		}
		if strings.Contains(err.Error(), "SECRET-KEY") {
			t.Errorf("the error shows the webhook's key: %v", err)
		}
	})

	t.Run("a webhook no longer configured", func(t *testing.T) {
		a, err := alert.New(nil, &config.Alerts{Webhooks: []config.Webhook{{Name: "other", Kind: config.WebhookJSON, URL: "http://127.0.0.1:9/x"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Send(context.Background(), n); err == nil || alert.Retryable(err) {
			t.Errorf("sending to a webhook that is not configured: %v, want a failure not worth retrying", err)
		}
	})
}

// TestNewRefusesWhatCannotDeliver: an Alerter is not built on a
// configuration whose webhook address is an unset environment variable.
func TestNewRefusesWhatCannotDeliver(t *testing.T) {
	for _, cfg := range []*config.Alerts{
		nil,
		{},
		{File: "config/alerts.yaml", Webhooks: []config.Webhook{{Name: "ops", Kind: config.WebhookFeishu, URLEnv: "FEISHU_WEBHOOK_URL"}}},
		{File: "config/alerts.yaml", Webhooks: []config.Webhook{{Name: "ops", Kind: config.WebhookFeishu, URL: "https://x.test/h", SecretEnv: "FEISHU_SECRET"}}},
	} {
		if _, err := alert.New(nil, cfg); err == nil {
			t.Errorf("New accepted %+v", cfg)
		} else if cfg != nil && len(cfg.Webhooks) > 0 && !strings.Contains(err.Error(), "is not set") {
			t.Errorf("New: %v, want it to name the unset variable", err)
		}
	}
}
