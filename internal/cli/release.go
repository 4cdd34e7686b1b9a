package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

func init() { register(newReleaseCmd) }

func newReleaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Build, verify, activate and roll back corpus releases",
		Long: `A release is an immutable directory under the data directory's releases/,
built from every corpus work that may be published (rights confirmed, QA
passed, no duplicate waiting for a decision, not frozen or quarantined): a
manifest pinning every file by SHA-256, the canonical texts in shards, the
works' list, the works held back and why, a search index and citations.
Readers, search, citations and the MCP server answer from the active release
only; activating another or rolling back moves one pointer in the database.

Exit codes: 0 done; 1 verification found damage (each problem is named), or
a build/activation failed; 2 usage error, no zhizhi database, or the release
could not be checked.`,
	}
	cmd.AddCommand(newReleaseBuildCmd(), newReleaseVerifyCmd(), newReleaseActivateCmd(), newReleaseRollbackCmd(),
		newReleaseListCmd())
	return cmd
}

func corpusService(st *store.Store) *corpus.Service { return corpus.New(st, Version) }

func newReleaseBuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "build",
		Short: "Build a new release from the works that may be published",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				res, err := corpusService(st).Build(ctx, cliActor(), stderrProgress(cmd.ErrOrStderr()))
				if err != nil {
					return exitCode(1, "release build: "+err.Error())
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "release %s built in %s: %d works, %d held back", res.Version, res.Dir, res.Works, res.Held)
				if res.Frozen > 0 {
					fmt.Fprintf(out, ", %d frozen by takedowns", res.Frozen)
				}
				fmt.Fprintf(out, "\nnext: zhizhi release verify %s && zhizhi release activate %s\n", res.Version, res.Version)
				return nil
			})
		},
	}
}

func newReleaseVerifyCmd() *cobra.Command {
	var quick bool
	cmd := &cobra.Command{
		Use:   "verify VERSION",
		Short: "Check every hash of a release and of its works' snapshots",
		Long: `verify re-reads a release: the manifest against the SHA-256 the database
recorded at build time, every file against the manifest, every text against
its work's revision, and every work's snapshot (its WARC records' digests and
its text). A release that fails is marked failed and can never be activated.

Exit codes: 0 intact; 1 damaged (every problem listed); 2 could not check.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				var err error
				err = corpusService(st).Verify(ctx, args[0], cliActor(), corpus.VerifyOptions{SkipSnapshots: quick},
					stderrProgress(cmd.ErrOrStderr()))
				var verr *corpus.VerifyError
				switch {
				case errors.As(err, &verr):
					w := cmd.ErrOrStderr()
					fmt.Fprintf(w, "release %s is damaged (%d problems):\n", verr.Version, len(verr.Problems))
					for _, p := range verr.Problems {
						fmt.Fprintf(w, "  %s\n", p)
					}
					return exitCode(1, fmt.Sprintf("release verify: %s failed; it is marked failed and cannot be activated", args[0]))
				case err != nil:
					return exitCode(2, "release verify: could not check: "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "release %s verified: every hash matches\n", args[0])
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&quick, "quick", false, "check the release's files only, not its works' snapshots")
	return cmd
}

func newReleaseActivateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "activate VERSION",
		Short: "Make a verified release the one readers, search and agents answer from",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				svc := corpusService(st)
				svc.Switching = switchingNote(cmd)
				prev, err := svc.Activate(ctx, args[0], cliActor())
				if err != nil {
					return exitCode(1, "release activate: "+err.Error())
				}
				if prev == "" {
					prev = "none"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "release %s is active (was %s)\n", args[0], prev)
				return nil
			})
		},
	}
}

func newReleaseRollbackCmd() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Return to the release active before this one (or --to VERSION) in one step",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				svc := corpusService(st)
				svc.Switching = switchingNote(cmd)
				from, target, err := svc.Rollback(ctx, to, cliActor())
				if err != nil {
					return exitCode(1, "release rollback: "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "release %s is active again (was %s)\n", target, from)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the verified release to return to (default: the one active before)")
	return cmd
}

func newReleaseListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List releases, the active one marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				rels, err := st.CorpusReleases(ctx)
				if err != nil {
					return exitCode(1, "release list: "+err.Error())
				}
				t := &table{header: []string{"", "VERSION", "STATE", "WORKS", "HELD", "BUILT", "BY"}}
				for _, r := range rels {
					mark := ""
					if r.Active {
						mark = "*"
					}
					t.add(mark, r.Version, r.State, strconv.Itoa(r.Works), strconv.Itoa(r.Held),
						wallText(r.BuiltAt, "2006-01-02 15:04"), r.BuiltBy)
				}
				if len(rels) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no releases yet: zhizhi release build")
					return nil
				}
				return t.write(cmd.OutOrStdout())
			})
		},
	}
}

// switchingNote tells the operator that a release's files were checked
// and the active pointer moves now (one transaction: after this line the
// old or the new release is active, never neither).
func switchingNote(cmd *cobra.Command) func(string) {
	return func(v string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "release %s: every file checked; moving the active pointer\n", v)
	}
}

// stderrProgress reports long work on w: a line rewritten in place on a
// terminal, a line every few seconds otherwise.
func stderrProgress(w io.Writer) corpus.Progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	var last time.Time
	var lastStage string
	return func(stage string, done, total int) {
		now := time.Now()
		finished := total > 0 && done == total
		if stage == lastStage && now.Sub(last) < 2*time.Second && !finished && !(tty && now.Sub(last) > 200*time.Millisecond) {
			return
		}
		last, lastStage = now, stage
		msg := fmt.Sprintf("%s: %d", stage, done)
		if total > 0 {
			msg = fmt.Sprintf("%s: %d/%d (%d%%)", stage, done, total, done*100/total)
		}
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", msg)
			if finished {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintln(w, msg)
	}
}
