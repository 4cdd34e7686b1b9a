package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

func init() { register(newAPIKeyCmd) }

func newAPIKeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apikey",
		Short: "Keys that programs use for the API and the export: create, list, revoke",
		Long: `An API key lets a program call the API as the user it belongs to, sent as
"Authorization: Bearer zk_…". Its scopes limit it further: read (read
through the API), write (make the changes the user's role allows), export
(the incremental export). A key acts with its user's role, stops when the
user is disabled, and is kept only as a hash: it is shown once, when made.`,
	}
	cmd.AddCommand(newAPIKeyCreateCmd(), newAPIKeyListCmd(), newAPIKeyRevokeCmd())
	return cmd
}

// parseExpiry reads "90d" (days) or a Go duration ("36h") as a time from
// now; "" is no expiry.
func parseExpiry(s string, now time.Time) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 3650 {
			return nil, fmt.Errorf("--expires %q: give a number of days from 1 to 3650, like 90d", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d <= 0 {
			return nil, fmt.Errorf("--expires %q: give days like 90d or hours like 36h", s)
		}
	}
	at := now.Add(d)
	return &at, nil
}

func newAPIKeyCreateCmd() *cobra.Command {
	var userName, name, scopes, expires string
	cmd := &cobra.Command{
		Use:     "create",
		Short:   "Make a key for a user; it is printed once and never again",
		Example: `  zhizhi apikey create --user alice --name 知识库导出 --scope read,export --expires 90d`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(userName) == "" || strings.TrimSpace(name) == "" || strings.TrimSpace(scopes) == "" {
				return exitCode(2, "apikey create: give --user, --name and --scope (e.g. --user alice --name 知识库导出 --scope read,export)")
			}
			sc, err := auth.ParseScopes(scopes)
			if err != nil {
				return exitCode(2, "apikey create: --scope: "+err.Error())
			}
			exp, err := parseExpiry(expires, time.Now())
			if err != nil {
				return exitCode(2, "apikey create: "+err.Error())
			}
			var key string
			var k *store.APIKey
			err = withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) (err error) {
				key, k, err = svc.CreateAPIKey(ctx, actor, userName, name, sc, exp)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, key)
			until := "永不过期"
			if k.ExpiresAt != nil {
				until = wallText(*k.ExpiresAt, "2006-01-02 15:04") + " 过期"
			}
			fmt.Fprintf(out, "密钥 #%d（用户 %s，名称 %s，权限 %s，%s）\n", k.ID, k.Username, k.Name, strings.Join(k.Scopes, ","), until)
			fmt.Fprintln(out, "请立即复制并妥善保存：此密钥只显示这一次，之后无法再次查看。")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&userName, "user", "", "the user the key acts for")
	f.StringVar(&name, "name", "", "a label saying what the key is for")
	f.StringVar(&scopes, "scope", "", "read, write and/or export, separated by commas")
	f.StringVar(&expires, "expires", "", "how long the key lasts, like 90d or 36h (default: until revoked)")
	return cmd
}

func newAPIKeyListCmd() *cobra.Command {
	var userName string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the API keys (never the keys themselves) with owner, scopes, last use and state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var keys []store.APIKey
			err := withAuth(cmd, func(ctx context.Context, svc *auth.Service, _ string) (err error) {
				keys, err = svc.ListAPIKeys(ctx, userName)
				return err
			})
			if err != nil {
				return err
			}
			now := time.Now()
			t := &table{header: []string{"ID", "用户 USER", "名称 NAME", "前缀 PREFIX", "权限 SCOPES", "创建时间 CREATED", "最近使用 LAST USED", "到期 EXPIRES", "状态 STATE"}}
			for _, k := range keys {
				exp := "永不"
				if k.ExpiresAt != nil {
					exp = timeText(k.ExpiresAt)
				}
				t.add(fmt.Sprint(k.ID), k.Username, k.Name, k.Prefix+"…", strings.Join(k.Scopes, ","),
					wallText(k.CreatedAt, "2006-01-02 15:04"), timeText(k.LastUsedAt), exp, keyStateText(k, now))
			}
			if err := t.write(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "共 %d 个密钥。`zhizhi apikey revoke ID` 吊销一个密钥。\n", len(keys))
			return nil
		},
	}
	cmd.Flags().StringVar(&userName, "user", "", "only this user's keys")
	return cmd
}

func keyStateText(k store.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "⛔ 已吊销 " + wallText(*k.RevokedAt, "2006-01-02")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "⌛ 已过期"
	}
	return "🟢 有效"
}

func newAPIKeyRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Stop a key working, from its next request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return exitCode(2, fmt.Sprintf("apikey revoke: %q is not a key ID: give the number in the ID column of `zhizhi apikey list`", args[0]))
			}
			err = withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) error {
				return svc.RevokeAPIKey(ctx, actor, id)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "密钥 #%d 已吊销，此后的请求一律拒绝。\n", id)
			return nil
		},
	}
}
