package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"zhizhi/internal/config/zone"

	"github.com/alexedwards/argon2id"
	"github.com/spf13/cobra"

	"zhizhi/internal/auth"
	"zhizhi/internal/config"
	"zhizhi/internal/queue"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// demoUser is the console account `zhizhi demo --serve` keeps; its password
// is made once per data directory and kept in demoPasswordFile there.
const (
	demoUser         = "demo"
	demoPasswordFile = "demo-password.txt"
)

// runDemoServe starts the simulated web and `zhizhi serve` on it in this
// process, with a demo account, until SIGINT or SIGTERM.
func runDemoServe(cmd *cobra.Command, seed int64) error {
	out := cmd.OutOrStdout()
	dir, err := useDemoDir()
	if err != nil {
		return err
	}
	now, err := demoClock(dir)
	if err != nil {
		return err
	}
	w, err := sim.Start(cmd.Context(), sim.Options{Seed: seed, Now: now})
	if err != nil {
		return exitCode(1, "demo: start the simulated web: "+err.Error())
	}
	defer w.Close()
	settings.Resolve = w.ResolveString()
	b, err := loadBundle()
	if err != nil {
		return err
	}
	password, err := ensureDemoAccount(cmd.Context(), b, w)
	if err != nil {
		return err
	}
	listen := envOr("ZHIZHI_LISTEN", "127.0.0.1:8080")
	loc, err := zone.FromEnv()
	if err != nil {
		return exitCode(2, "demo: "+err.Error())
	}
	fmt.Fprintf(out, "== 模拟政务网已启动: %d 个站点\n== 管理后台: http://%s/admin/  用户名 %s  密码 %s\n",
		len(w.Hosts())-1, listen, demoUser, password)
	return runServe(cmd, serveOptions{listen: listen, workers: queue.DefaultWorkers, budget: queue.DefaultBudget,
		loc: loc, tick: queue.DefaultTickEvery})
}

// ensureDemoAccount makes sure the demo admin exists, enabled, with the
// password kept in the data directory (made the first time), and returns
// that password.
//
// It refuses (before the service starts) when the demo's configuration or
// database names a host the simulated web w does not serve.
func ensureDemoAccount(ctx context.Context, b *config.Bundle, w *sim.World) (string, error) {
	st, err := createStore(ctx)
	if err != nil {
		return "", err
	}
	defer st.Close()
	known, err := st.ListTargets(ctx, store.TargetFilter{})
	if err != nil {
		return "", exitCode(1, err.Error())
	}
	if err := refuseForeignHosts(b, known, w); err != nil {
		return "", err
	}
	path := filepath.Join(settings.DataDir, demoPasswordFile)
	password, err := demoPassword(path)
	if err != nil {
		return "", exitCode(1, "demo: "+err.Error())
	}
	svc := auth.New(st, auth.Options{})
	const actor = "cli:demo"
	u, err := st.UserByName(ctx, demoUser)
	switch {
	case errors.Is(err, store.ErrNotFound):
		_, err = svc.CreateUser(ctx, actor, demoUser, password, auth.RoleAdmin)
	case err == nil:
		// Whatever became of the account since, the demo's own works.
		if u.Disabled {
			err = svc.EnableUser(ctx, actor, demoUser)
		}
		if err == nil && u.Role != string(auth.RoleAdmin) {
			err = svc.SetRole(ctx, actor, demoUser, auth.RoleAdmin)
		}
		if ok, _ := argon2id.ComparePasswordAndHash(password, u.PasswordHash); err == nil && !ok {
			err = svc.SetPassword(ctx, actor, demoUser, password)
		}
	}
	if err != nil {
		return "", exitCode(1, "demo: the demo account: "+err.Error())
	}
	return password, nil
}

// demoPassword reads the demo password kept at path, or makes one and
// keeps it there (readable by this user only).
func demoPassword(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if p := strings.TrimSpace(string(b)); len(p) >= 8 {
			return p, nil
		}
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read the demo password: %w", err)
	}
	p := "demo-" + strings.ToLower(rand.Text()[:12])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("keep the demo password: %w", err)
	}
	if err := os.WriteFile(path, []byte(p+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keep the demo password: %w", err)
	}
	return p, nil
}
