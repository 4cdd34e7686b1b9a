package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/auth"
	"zhizhi/internal/store"
)

func init() { register(newUserCmd) }

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "The people who may sign in to the admin console: add, list, change password or role, disable",
		Long: `Users sign in to the admin console with a username and password. Each has a
role: viewer (reads everything), operator (also changes targets and
departments, crawls now, exports) or admin (also manages users, API keys and
host blocks). Passwords are never given as flags: they are read from the
terminal, twice, or from standard input with --password-stdin.`,
	}
	cmd.AddCommand(newUserAddCmd(), newUserListCmd(), newUserPasswdCmd(), newUserRoleCmd(),
		newUserDisableCmd(), newUserEnableCmd())
	return cmd
}

// withAuth opens the store and the user service on it, runs do as the
// person at the terminal and closes the store again. A failure of do is
// turned into an exit code by authExit.
func withAuth(cmd *cobra.Command, do func(ctx context.Context, svc *auth.Service, actor string) error) error {
	st, err := openStore(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	if err := do(cmd.Context(), auth.New(st, auth.Options{}), cliActor()); err != nil {
		return authExit(err)
	}
	return nil
}

// cliActor names the person at the terminal in the audit trail.
func cliActor() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	if name == "" {
		name = "unknown"
	}
	return "cli:" + name
}

// authExit turns a refusal because of what was asked into exit 2 and any
// other failure into exit 1, with the service's message.
func authExit(err error) error {
	if errors.Is(err, auth.ErrInvalid) || errors.Is(err, auth.ErrNotFound) || errors.Is(err, auth.ErrExists) {
		return exitCode(2, err.Error())
	}
	return exitCode(1, err.Error())
}

// readPassword reads a new password: from standard input when fromStdin
// (the whole input, less one line end), else from the terminal, twice,
// without echo.
func readPassword(cmd *cobra.Command, fromStdin bool) (string, error) {
	where := cmd.CommandPath()
	if fromStdin {
		b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 4096))
		if err != nil {
			return "", exitCode(1, fmt.Sprintf("%s: read the password from standard input: %v", where, err))
		}
		pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if pw == "" {
			return "", exitCode(2, fmt.Sprintf("%s: standard input is empty: pipe the password in, e.g. printf '%%s' \"$PW\" | %s --password-stdin", where, where))
		}
		return pw, nil
	}
	in, ok := cmd.InOrStdin().(*os.File)
	if !ok || !isTTY(in) {
		return "", exitCode(2, fmt.Sprintf("%s: no terminal to read the password from: pipe it in with --password-stdin", where))
	}
	errw := cmd.ErrOrStderr()
	fmt.Fprint(errw, "新密码 New password: ")
	first, err := readHidden(in)
	fmt.Fprintln(errw)
	if err != nil {
		return "", exitCode(1, fmt.Sprintf("%s: read the password: %v", where, err))
	}
	fmt.Fprint(errw, "再输入一次 Again: ")
	second, err := readHidden(in)
	fmt.Fprintln(errw)
	if err != nil {
		return "", exitCode(1, fmt.Sprintf("%s: read the password: %v", where, err))
	}
	if first != second {
		return "", exitCode(2, where+": the two passwords differ; nothing was changed, try again")
	}
	return first, nil
}

// readLine reads up to a line end one byte at a time, so nothing after it
// is taken from the terminal.
func readLine(r io.Reader) (string, error) {
	var b bytes.Buffer
	one := make([]byte, 1)
	for b.Len() < 4096 {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b.WriteByte(one[0])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimSuffix(b.String(), "\r"), nil
}

func newUserAddCmd() *cobra.Command {
	var (
		role    string
		pwStdin bool
	)
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Add a user who signs in to the admin console",
		Example: `  zhizhi user add alice --role operator
  printf '%s' "$PW" | zhizhi user add bot --role viewer --password-stdin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := auth.ParseRole(role)
			if err != nil {
				return exitCode(2, "user add: --role: "+err.Error())
			}
			name, err := auth.CheckUsername(args[0])
			if err != nil {
				return exitCode(2, "user add: "+err.Error())
			}
			pw, err := readPassword(cmd, pwStdin)
			if err != nil {
				return err
			}
			var u *store.User
			err = withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) (err error) {
				u, err = svc.CreateUser(ctx, actor, name, pw, r)
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "已添加用户 %s，角色 %s。\n", u.Username, roleText(auth.Role(u.Role)))
			return nil
		},
	}
	cmd.Flags().StringVar(&role, "role", "viewer", "viewer, operator or admin")
	cmd.Flags().BoolVar(&pwStdin, "password-stdin", false, "read the password from standard input instead of the terminal")
	return cmd
}

func newUserListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the users with their role, state and last sign-in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var users []store.User
			err := withAuth(cmd, func(ctx context.Context, svc *auth.Service, _ string) (err error) {
				users, err = svc.ListUsers(ctx)
				return err
			})
			if err != nil {
				return err
			}
			t := &table{header: []string{"ID", "用户名 USERNAME", "角色 ROLE", "状态 STATE", "最近登录 LAST LOGIN", "创建时间 CREATED"}}
			for _, u := range users {
				state := "🟢 启用"
				if u.Disabled {
					state = "⛔ 已停用"
				}
				t.add(fmt.Sprint(u.ID), u.Username, roleText(auth.Role(u.Role)), state, timeText(u.LastLoginAt), wallText(u.CreatedAt, "2006-01-02 15:04"))
			}
			if err := t.write(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "共 %d 个用户。\n", len(users))
			return nil
		},
	}
}

func newUserPasswdCmd() *cobra.Command {
	var pwStdin bool
	cmd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Give a user a new password; they are signed out everywhere",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := auth.CheckUsername(args[0])
			if err != nil {
				return exitCode(2, "user passwd: "+err.Error())
			}
			pw, err := readPassword(cmd, pwStdin)
			if err != nil {
				return err
			}
			err = withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) error {
				return svc.SetPassword(ctx, actor, name, pw)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "用户 %s 的密码已更改，其所有登录会话已结束。\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&pwStdin, "password-stdin", false, "read the password from standard input instead of the terminal")
	return cmd
}

func newUserRoleCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "role NAME ROLE",
		Short: "Change a user's role (viewer, operator or admin); their keys follow",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := auth.ParseRole(args[1])
			if err != nil {
				return exitCode(2, "user role: "+err.Error())
			}
			err = withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) error {
				return svc.SetRole(ctx, actor, args[0], r)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "用户 %s 的角色已改为 %s。\n", strings.ToLower(strings.TrimSpace(args[0])), roleText(r))
			return nil
		},
	}
}

func newUserDisableCmd() *cobra.Command {
	return newUserSwitchCmd("disable NAME",
		"Stop a user signing in; their sessions end and their API keys stop at once",
		(*auth.Service).DisableUser, "用户 %s 已停用：登录会话已结束，API 密钥已失效。\n")
}

func newUserEnableCmd() *cobra.Command {
	return newUserSwitchCmd("enable NAME",
		"Let a disabled user sign in again; their keys that are not revoked or expired work again",
		(*auth.Service).EnableUser, "用户 %s 已重新启用。\n")
}

// newUserSwitchCmd makes a command that turns one user on or off with
// change and then says so with done, a format taking the username.
func newUserSwitchCmd(use, short string, change func(*auth.Service, context.Context, string, string) error, done string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := withAuth(cmd, func(ctx context.Context, svc *auth.Service, actor string) error {
				return change(svc, ctx, actor, args[0])
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), done, strings.ToLower(strings.TrimSpace(args[0])))
			return nil
		},
	}
}

func roleText(r auth.Role) string {
	switch r {
	case auth.RoleViewer:
		return "查看者 viewer"
	case auth.RoleOperator:
		return "操作员 operator"
	case auth.RoleAdmin:
		return "管理员 admin"
	}
	return string(r)
}

func timeText(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return wallText(*t, "2006-01-02 15:04")
}
