package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/auth"
	"zhizhi/internal/budget"
	"zhizhi/internal/store"
)

func init() { register(newAPIKeyCmd) }

func newAPIKeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apikey",
		Short: "Keys that programs use for the API and the export: create, list, budget, revoke",
		Long: `An API key lets a program call the API as the user it belongs to, sent as
"Authorization: Bearer zk_…". Its scopes limit it further: read (read
through the API), write (make the changes the user's role allows), export
(the incremental export), acquire (fetch, render, crawl and parse pages now
through /v1, within the key's daily budgets and per-minute rate; operator
or admin). A key acts with its user's role, stops when the user is
disabled, and is kept only as a hash: it is shown once, when made.`,
	}
	cmd.AddCommand(newAPIKeyCreateCmd(), newAPIKeyListCmd(), newAPIKeyBudgetCmd(), newAPIKeyRevokeCmd())
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
	var (
		userName, name, scopes, expires string
		bf                              budgetFlags
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a key for a user; it is printed once and never again",
		Example: `  zhizhi apikey create --user alice --name 知识库导出 --scope read,export --expires 90d
  zhizhi apikey create --user alice --name 智能体 --scope acquire --requests-per-day 500 --browser-seconds-per-day 0`,
		Args: cobra.NoArgs,
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
			lim, changed, err := bf.limits(cmd, budget.Defaults)
			if err != nil {
				return exitCode(2, "apikey create: "+err.Error())
			}
			acquire := slices.Contains(sc, auth.ScopeAcquire)
			if changed && !acquire {
				return exitCode(2, "apikey create: budgets are for the acquisition API: add acquire to --scope, or drop the budget flags")
			}
			var key string
			var k *store.APIKey
			err = withBudget(cmd, func(ctx context.Context, _ *store.Store, svc *auth.Service, b *budget.Service, actor string) (err error) {
				var also func(tx *store.Tx, keyID int64) error
				if acquire {
					// The defaults are written too, so the key keeps the
					// budget it was shown whatever later versions default
					// to; in the key's own transaction, so no key is left
					// without the budget it was made with.
					also = func(tx *store.Tx, keyID int64) error { return b.SetLimitsIn(ctx, tx, actor, keyID, lim) }
				}
				key, k, err = svc.CreateAPIKeyWith(ctx, actor, userName, name, sc, exp, also)
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
			if acquire {
				fmt.Fprintln(out, limitsText(lim))
			}
			fmt.Fprintln(out, "请立即复制并妥善保存：此密钥只显示这一次，之后无法再次查看。")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&userName, "user", "", "the user the key acts for")
	f.StringVar(&name, "name", "", "a label saying what the key is for")
	f.StringVar(&scopes, "scope", "", "read, write, export and/or acquire, separated by commas")
	f.StringVar(&scopes, "scopes", "", "the same as --scope")
	f.StringVar(&expires, "expires", "", "how long the key lasts, like 90d or 36h (default: until revoked)")
	bf.register(cmd, budget.Defaults)
	return cmd
}

func newAPIKeyBudgetCmd() *cobra.Command {
	var bf budgetFlags
	cmd := &cobra.Command{
		Use:   "budget ID",
		Short: "Show an acquire key's daily budgets and today's use; with flags, change them",
		Long: `Show what an API key with the acquire scope may spend per day (a day in
UTC+8: requests, bytes downloaded, browser seconds, OCR pages) and per
minute, and what it has used today; give any of the flags to change that
limit (the others stay). A limit of 0 allows none: --browser-seconds-per-day 0
keeps a key off the browser. A change applies from the key's next request
and is recorded in the audit trail.`,
		Example: `  zhizhi apikey budget 3
  zhizhi apikey budget 3 --requests-per-day 5000 --bytes-per-day 5GiB --requests-per-minute 120`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return exitCode(2, fmt.Sprintf("apikey budget: %q is not a key ID: give the number in the ID column of `zhizhi apikey list`", args[0]))
			}
			var u budget.Usage
			err = withBudget(cmd, func(ctx context.Context, st *store.Store, _ *auth.Service, b *budget.Service, actor string) error {
				keys, err := st.ListAPIKeys(ctx, 0)
				if err != nil {
					return err
				}
				i := slices.IndexFunc(keys, func(k store.APIKey) bool { return k.ID == id })
				if i < 0 {
					return exitCode(2, fmt.Sprintf("apikey budget: no api key %d (see the key list)", id))
				}
				if !slices.Contains(keys[i].Scopes, auth.ScopeAcquire) {
					return exitCode(2, fmt.Sprintf("apikey budget: key #%d has no acquire scope, and budgets are for the acquisition API only; make a key with --scope acquire", id))
				}
				cur, err := b.Limits(ctx, id)
				if err != nil {
					return err
				}
				lim, changed, err := bf.limits(cmd, cur)
				if err != nil {
					return exitCode(2, "apikey budget: "+err.Error())
				}
				if changed {
					if err := b.SetLimits(ctx, actor, id, lim); err != nil {
						return err
					}
				}
				u, err = b.Usage(ctx, id)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "密钥 #%d 的预算（按北京时间自然日计，%s 重置）\n", id, wallText(u.ResetsAt, "2006-01-02 15:04"))
			t := &table{header: []string{"预算 BUDGET", "每日上限 LIMIT", "已用 USED", "占用中 RESERVED", "剩余 REMAINING"}}
			for _, row := range []struct {
				label string
				m     budget.Meter
				text  func(int64) string
			}{
				{"请求 requests", u.Requests, itoa64},
				{"流量 bytes", u.Bytes, bytesText},
				{"浏览器秒数 browser_seconds", u.BrowserSeconds, itoa64},
				{"OCR 页数 ocr_pages", u.OCRPages, itoa64},
			} {
				t.add(row.label, row.text(row.m.Limit), row.text(row.m.Used), row.text(row.m.Reserved), row.text(row.m.Remaining))
			}
			if err := t.write(out); err != nil {
				return err
			}
			fmt.Fprintf(out, "每分钟最多 %d 次请求。\n", u.RequestsPerMinute)
			return nil
		},
	}
	bf.register(cmd, budget.Defaults)
	return cmd
}

// budgetFlags are the limit flags of apikey create and apikey budget.
type budgetFlags struct {
	requests, browserSeconds, ocrPages, perMinute int64
	bytes                                         string
}

func (b *budgetFlags) register(cmd *cobra.Command, def budget.Limits) {
	f := cmd.Flags()
	f.Int64Var(&b.requests, "requests-per-day", def.PerDay.Requests, "requests the key may make per day (UTC+8)")
	f.StringVar(&b.bytes, "bytes-per-day", bytesFlag(def.PerDay.Bytes), "bytes the key may download per day, like 1GiB, 200MiB or 1048576")
	f.Int64Var(&b.browserSeconds, "browser-seconds-per-day", def.PerDay.BrowserSeconds, "seconds of headless browser per day; 0 keeps the key off the browser")
	f.Int64Var(&b.ocrPages, "ocr-pages-per-day", def.PerDay.OCRPages, "PDF pages the key may have read by OCR per day")
	f.Int64Var(&b.perMinute, "requests-per-minute", def.RequestsPerMinute, "requests the key may make per minute; more are answered 429")
}

// limits returns base with the flags the user gave over it, and whether
// they gave any.
func (b *budgetFlags) limits(cmd *cobra.Command, base budget.Limits) (budget.Limits, bool, error) {
	f := cmd.Flags()
	l, changed := base, false
	for _, v := range []struct {
		flag string
		dst  *int64
		val  int64
	}{
		{"requests-per-day", &l.PerDay.Requests, b.requests},
		{"browser-seconds-per-day", &l.PerDay.BrowserSeconds, b.browserSeconds},
		{"ocr-pages-per-day", &l.PerDay.OCRPages, b.ocrPages},
		{"requests-per-minute", &l.RequestsPerMinute, b.perMinute},
	} {
		if !f.Changed(v.flag) {
			continue
		}
		if v.val < 0 {
			return l, false, fmt.Errorf("--%s %d: give 0 or more", v.flag, v.val)
		}
		*v.dst, changed = v.val, true
	}
	if f.Changed("bytes-per-day") {
		n, err := parseBytes(b.bytes)
		if err != nil {
			return l, false, fmt.Errorf("--bytes-per-day %q: give bytes like 1GiB, 200MiB, 64KiB or 1048576", b.bytes)
		}
		l.PerDay.Bytes, changed = n, true
	}
	return l, changed, nil
}

var byteUnits = []struct {
	suffix string
	size   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// parseBytes reads a whole number of bytes, GiB, MiB or KiB ("1GiB").
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	unit := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, unit = strings.TrimSpace(num), u.size
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	return n * unit, nil
}

// bytesFlag writes n as parseBytes reads it, in the largest whole unit.
func bytesFlag(n int64) string {
	for _, u := range byteUnits {
		if n > 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// bytesText is n for a person: "1 GiB", "3.5 MiB", "900 B".
func bytesText(n int64) string {
	for _, u := range byteUnits {
		if n >= u.size {
			v := strconv.FormatFloat(float64(n)/float64(u.size), 'f', 2, 64)
			return strings.TrimSuffix(strings.TrimRight(v, "0"), ".") + " " + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func limitsText(l budget.Limits) string {
	return fmt.Sprintf("每日预算（北京时间）：请求 %d 次，流量 %s，浏览器 %d 秒，OCR %d 页；每分钟最多 %d 次请求。",
		l.PerDay.Requests, bytesText(l.PerDay.Bytes), l.PerDay.BrowserSeconds, l.PerDay.OCRPages, l.RequestsPerMinute)
}

// withBudget is withAuth with the budget service beside it, on one store.
func withBudget(cmd *cobra.Command, do func(ctx context.Context, st *store.Store, a *auth.Service, b *budget.Service, actor string) error) error {
	st, err := openStore(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	err = do(cmd.Context(), st, auth.New(st, auth.Options{}), budget.New(st, nil), cliActor())
	var ec *exitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ec):
		return err
	case errors.Is(err, budget.ErrInvalid) || errors.Is(err, store.ErrNotFound):
		return exitCode(2, err.Error())
	}
	return authExit(err)
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
