package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/alert"
	"zhizhi/internal/config"
)

func init() { register(newAlertCmd) }

func newAlertCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alert",
		Short: "Alert webhooks of config/alerts.yaml: check that each one delivers",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAlertTestCmd())
	return cmd
}

func newAlertTestCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "test",
		Short: "Send a test message to every webhook of config/alerts.yaml and say whether each delivered it",
		Long: `Test sends one test message (titled 【知止测试】) to every webhook configured
in alerts.yaml in the configuration directory, and prints for each whether
it was delivered: the webhook answered 2xx and, for Feishu and WeCom, its
code said the message was taken. Use it after adding or changing a webhook,
before relying on it for alerts. Nothing is written to the database, and
the test message is not retried.

Exit status:
  0    every webhook took the message
  1    at least one did not (each failure is listed with its reason)
  2    no alerts.yaml, or alerts.yaml has errors (zhizhi config lint)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadAlerts()
			if err != nil {
				return err
			}
			from, _ := os.Hostname()
			if from == "" {
				from = "zhizhi"
			}
			results := sendTests(cmd.Context(), cfg.Webhooks, from, time.Now())
			t := &table{header: []string{"通道", "类型", "结果"}}
			failed := 0
			for i, w := range cfg.Webhooks {
				if results[i] == nil {
					t.add(w.Name, w.Kind, "已送达")
					continue
				}
				failed++
				t.add(w.Name, w.Kind, "失败："+deliveryReason(results[i]))
			}
			if err := t.write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if failed > 0 {
				return exitCode(1, fmt.Sprintf("alert test: %d of %d webhooks did not take the test message — fix the address or secret in %s (or the variables it names) and run it again",
					failed, len(cfg.Webhooks), cfg.File))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "全部 %d 个通道已送达，请在群里确认收到测试消息。\n", len(cfg.Webhooks))
			return nil
		},
	}
}

// loadAlerts reads alerts.yaml from the configuration directory. Problems
// in other files do not stop a webhook test; problems in alerts.yaml do.
func loadAlerts() (*config.Alerts, error) {
	b, problems, err := loadConfig(settings.ConfigDir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(settings.ConfigDir, config.AlertsFile)
	var mine []config.Problem
	for _, p := range config.Errors(problems) {
		if p.Pos.File == path {
			mine = append(mine, p)
		}
	}
	if len(mine) > 0 {
		msg := fmt.Sprintf("alert test: %s has %d error(s) — fix them (zhizhi config lint shows them all):", path, len(mine))
		for _, p := range mine {
			msg += "\n  " + p.String()
		}
		return nil, exitCode(2, msg)
	}
	if b.Alerts == nil {
		return nil, exitCode(2, fmt.Sprintf("alert test: %s does not exist — create it with at least one webhook", path))
	}
	if len(b.Alerts.Webhooks) == 0 {
		return nil, exitCode(2, fmt.Sprintf("alert test: %s names no webhook — add one under webhooks", path))
	}
	return b.Alerts, nil
}

// sendTests sends the test message to every webhook at once (one that
// hangs costs its own timeout, not the others'); the result of each is at
// its index, nil when delivered.
func sendTests(ctx context.Context, hooks []config.Webhook, from string, now time.Time) []error {
	out := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, w := range hooks {
		switch {
		case w.URL == "" && w.URLEnv != "":
			out[i] = fmt.Errorf("environment variable %s is not set", w.URLEnv)
			continue
		case w.URL == "":
			out[i] = fmt.Errorf("no address")
			continue
		case w.SecretEnv != "" && w.Secret == "":
			out[i] = fmt.Errorf("environment variable %s (the signing secret) is not set", w.SecretEnv)
			continue
		}
		wg.Go(func() {
			out[i] = alert.Deliver(ctx, w, alert.TestNotification(w.Name, from, now))
		})
	}
	wg.Wait()
	return out
}

// deliveryReason is why a test message was not delivered, without the
// webhook's name (the row has it), with a word on whether to wait.
func deliveryReason(err error) string {
	var de *alert.DeliveryError
	if !errors.As(err, &de) {
		return err.Error()
	}
	if de.Retry {
		return de.Err.Error() + "（可能是暂时的，稍后再试）"
	}
	return de.Err.Error()
}
