package cli

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// initConfig is the commented starting configuration `zhizhi init` writes.
//
//go:embed initconfig
var initConfig embed.FS

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init DIR",
		Short: "Write a commented starting configuration directory",
		Long: `Init writes a starting configuration directory to DIR (a new or empty
directory): sites/example.yaml (a disabled example site to copy and fill in),
cms/gkmlpt.yaml (the gkmlpt CMS adapter), topic_synonyms.yaml, departments.csv
(the header only: put your departments below it) and alerts.yaml (an example).
'zhizhi config lint' accepts it as written. Then point zhizhi at it:

  export ZHIZHI_CONFIG_DIR=DIR

There is no default configuration directory: commands that need one refuse
until ZHIZHI_CONFIG_DIR (or --config-dir) names it. The simulated web's
configuration is not a starting point: 'zhizhi demo' keeps its own.

It refuses a DIR that exists and is not empty (exit 2), and writes nothing
then; a failure part-way leaves nothing behind.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := filepath.Clean(args[0])
			if err := writeInitConfig(dir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote a starting configuration to %s\nnext: export ZHIZHI_CONFIG_DIR=%s; edit %s; zhizhi config lint\n",
				dir, dir, filepath.Join(dir, "sites", "example.yaml"))
			return nil
		},
	}
}

func writeInitConfig(dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return exitCode(2, fmt.Sprintf("init: %s is a file: give a new or empty directory", dir))
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return exitCode(2, fmt.Sprintf("init: %s is not empty: nothing written — give a new or empty directory", dir))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitCode(2, "init: "+err.Error())
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return exitCode(1, "init: "+err.Error())
	}
	tmp, err := os.MkdirTemp(parent, ".zhizhi-init-")
	if err != nil {
		return exitCode(1, "init: "+err.Error())
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(initConfig, "initconfig", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(p, "initconfig")))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := initConfig.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		// An empty dir is replaced; rename refuses a non-empty one.
		_ = os.Remove(dir)
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		return exitCode(1, "init: "+err.Error())
	}
	return nil
}
