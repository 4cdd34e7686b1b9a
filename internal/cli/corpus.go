package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

func init() { register(newCorpusCmd) }

func newCorpusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "corpus",
		Short: "Take articles into the governed corpus and look after its works",
		Long: `The corpus is what may become a release. An article enters it only when a
person asks (zhizhi corpus intake, the console, the API) or by an intake rule a
person set up. Intake copies the article into a snapshot that never changes
(its page as WARC records, its normalized text, a manifest) and gives it a work
with a stable id; new content later is a new revision of the same work. Each
revision is checked (title, length, encoding, dates, attributes, the summary
card's grade), each site has a rights profile (corpus.rights in its YAML), and
possible duplicates are listed for people to decide: the system never merges
works on its own.

Exit codes: 0 done; 1 some of the work failed (listed), or reading failed;
2 usage error, no zhizhi database, or no such work or target.`,
	}
	cmd.AddCommand(newCorpusIntakeCmd(), newCorpusWorksCmd(), newCorpusShowCmd(), newCorpusCandidatesCmd(),
		newCorpusDecideCmd(), newCorpusStatusCmd(), newCorpusRuleCmd())
	return cmd
}

func newCorpusIntakeCmd() *cobra.Command {
	var articles []int64
	var targets, fetched []string
	var rules bool
	cmd := &cobra.Command{
		Use:   "intake",
		Short: "Copy articles into the corpus (--article N, --target CODE, --fetched URL, or --rules)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			if len(articles) > 0 {
				n++
			}
			if len(targets) > 0 {
				n++
			}
			if rules {
				n++
			}
			if len(fetched) > 0 {
				n++
			}
			if n != 1 {
				return exitCode(2, "corpus intake: give exactly one of --article, --target, --fetched or --rules")
			}
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				var err error
				svc := corpusService(st)
				out := cmd.OutOrStdout()
				var sum corpus.RunSummary
				switch {
				case rules:
					sum, err = svc.RunRules(ctx, stderrProgress(cmd.ErrOrStderr()))
				case len(targets) > 0:
					sum, err = svc.IntakeTargets(ctx, targets, cliActor(), stderrProgress(cmd.ErrOrStderr()))
				case len(fetched) > 0:
					for _, u := range fetched {
						res, ierr := svc.IntakeFetch(ctx, u, cliActor())
						if ierr != nil {
							ierr = fmt.Errorf("%s: %w", u, ierr)
						}
						sum.Add(0, res, ierr)
					}
				default:
					for _, id := range articles {
						res, ierr := svc.IntakeArticle(ctx, id, cliActor())
						sum.Add(id, res, ierr)
					}
				}
				if err != nil {
					return exitCode(2, "corpus intake: "+err.Error())
				}
				fmt.Fprintf(out, "corpus intake: %d articles looked at: %d new works, %d new revisions, %d unchanged, %d failed QA, %d duplicate candidates\n",
					sum.Looked, sum.NewWorks, sum.NewRevisions, sum.Unchanged, sum.FailedQA, sum.Candidates)
				for _, f := range sum.Failures {
					if f.ArticleID == 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "  %s\n", f.Error)
						continue
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "  article %d: %s\n", f.ArticleID, f.Error)
				}
				if len(sum.Failures) > 0 {
					return exitCode(1, fmt.Sprintf("corpus intake: %d articles could not be taken in", len(sum.Failures)))
				}
				return nil
			})
		},
	}
	cmd.Flags().Int64SliceVar(&articles, "article", nil, "article ids to take in")
	cmd.Flags().StringSliceVar(&targets, "target", nil, "take in every ready article of these targets (full-access sites only)")
	cmd.Flags().BoolVar(&rules, "rules", false, "run every enabled intake rule")
	cmd.Flags().StringSliceVar(&fetched, "fetched", nil, "take in the acquisition API's stored answer for these URLs (pages of full-access sites only)")
	return cmd
}

func newCorpusWorksCmd() *cobra.Command {
	var status, q string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "works",
		Short: "List works, with why each is held back from a release",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				rows, err := st.ListCorpusWorks(ctx, store.CorpusWorkFilter{Status: status, Q: q, Limit: limit})
				if err != nil {
					return exitCode(1, "corpus works: "+err.Error())
				}
				if asJSON {
					type row struct {
						ID     string   `json:"id"`
						Rev    int      `json:"rev"`
						Title  string   `json:"title"`
						Status string   `json:"status"`
						Site   string   `json:"site"`
						Held   []string `json:"held_back"`
					}
					var out []row
					for i := range rows {
						r := &rows[i]
						out = append(out, row{r.ID, r.CurrentRev, r.Rev.Title, r.Status, r.SiteCode, corpus.HeldReasons(r)})
					}
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(out)
				}
				t := &table{header: []string{"WORK", "REV", "SITE", "STATUS", "TITLE", "HELD BACK"}}
				for i := range rows {
					r := &rows[i]
					t.add(r.ID, strconv.Itoa(r.CurrentRev), r.SiteCode, r.Status, clip(r.Rev.Title, 30),
						strings.Join(corpus.HeldReasons(r), "；"))
				}
				return t.write(cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only works in this status (active, frozen, quarantined, merged)")
	cmd.Flags().StringVar(&q, "q", "", "only works whose title contains this, or with this id")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func newCorpusShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show WORK",
		Short: "Show a work: its revisions and provenance, step by step",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				w, err := st.CorpusWorkRow(ctx, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return exitCode(2, fmt.Sprintf("corpus show: no work %s (zhizhi corpus works lists them)", args[0]))
				}
				if err != nil {
					return exitCode(1, "corpus show: "+err.Error())
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "work %s — %s\nsource: %s\nsite: %s (%s), rights %s, access %s\nstatus: %s, review %s, revision %d\n",
					w.ID, w.Rev.Title, w.SourceURL, w.SiteName, w.SiteCode, w.SiteRights, w.Access, w.Status, w.Review, w.CurrentRev)
				if held := corpus.HeldReasons(w); len(held) > 0 {
					fmt.Fprintf(out, "held back: %s\n", strings.Join(held, "；"))
				}
				revs, err := st.CorpusRevisions(ctx, w.ID)
				if err != nil {
					return exitCode(1, "corpus show: "+err.Error())
				}
				fmt.Fprintln(out, "\nrevisions:")
				for _, r := range revs {
					fmt.Fprintf(out, "  %d  %s  text %s…  snapshot %s…  %d chars  QA %s\n", r.Rev,
						wallText(r.CreatedAt, "2006-01-02 15:04"), r.TextSHA256[:12], r.SnapshotID[:12], r.Chars, r.QA)
				}
				evs, err := st.CorpusEvents(ctx, w.ID)
				if err != nil {
					return exitCode(1, "corpus show: "+err.Error())
				}
				fmt.Fprintln(out, "\nprovenance:")
				for _, e := range evs {
					fmt.Fprintf(out, "  %s  %-9s  %s  %s", wallText(e.At, "2006-01-02 15:04:05"), e.Kind, e.Actor, e.Detail)
					if e.Evidence != "" {
						fmt.Fprintf(out, "  [%s]", e.Evidence)
					}
					fmt.Fprintln(out)
				}
				return nil
			})
		},
	}
}

func newCorpusCandidatesCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "candidates",
		Short: "List possible duplicates waiting for a person's decision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				status := store.CandidateOpen
				if all {
					status = ""
				}
				ks, err := st.ListCorpusCandidates(ctx, status, 500)
				if err != nil {
					return exitCode(1, "corpus candidates: "+err.Error())
				}
				t := &table{header: []string{"ID", "KIND", "STATUS", "WORK A", "WORK B", "WHY"}}
				for _, k := range ks {
					t.add(strconv.FormatInt(k.ID, 10), k.Kind, k.Status, k.WorkA+" "+clip(k.TitleA, 16),
						k.WorkB+" "+clip(k.TitleB, 16), k.Detail)
				}
				return t.write(cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "decided ones too")
	return cmd
}

func newCorpusDecideCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "decide CANDIDATE same|different",
		Short: "Record a person's decision on a duplicate candidate",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return exitCode(2, "corpus decide: the candidate is a number (zhizhi corpus candidates lists them)")
			}
			if args[1] != store.CandidateSame && args[1] != store.CandidateDifferent {
				return exitCode(2, "corpus decide: say same or different")
			}
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				if err := st.DecideCorpusCandidate(ctx, id, args[1], cliActor()); err != nil {
					return exitCode(1, "corpus decide: "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "candidate %d decided: %s\n", id, args[1])
				return nil
			})
		},
	}
}

func newCorpusStatusCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "status WORK active|quarantined",
		Short: "Quarantine a work (keep it out of releases) or let it back in",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] != store.WorkActive && args[1] != store.WorkQuarantined {
				return exitCode(2, "corpus status: say active or quarantined")
			}
			if args[1] == store.WorkQuarantined && strings.TrimSpace(reason) == "" {
				return exitCode(2, "corpus status: say why with --reason")
			}
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				if err := st.SetCorpusWorkStatus(ctx, args[0], args[1], "", reason, cliActor()); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return exitCode(2, "corpus status: no work "+args[0])
					}
					return exitCode(1, "corpus status: "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "work %s is %s\n", args[0], args[1])
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept in the work's provenance and the audit trail)")
	return cmd
}

func newCorpusRuleCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rule", Short: "Intake rules: standing orders to take articles in"}
	var name string
	var targets []string
	add := &cobra.Command{
		Use:   "add",
		Short: "Take every ready article of these targets (all when none) of full-access sites in, from now on",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(name) == "" {
				return exitCode(2, "corpus rule add: give the rule a --name")
			}
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				r := &store.CorpusIntakeRule{Name: name, TargetCodes: targets, Enabled: true, CreatedBy: cliActor()}
				if err := corpusService(st).CheckRuleTargets(ctx, targets); err != nil {
					return exitCode(2, "corpus rule add: "+err.Error())
				}
				if err := st.CreateCorpusIntakeRule(ctx, r); err != nil {
					return exitCode(1, "corpus rule add: "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "intake rule %d added; serve runs it after each crawl, or: zhizhi corpus intake --rules\n", r.ID)
				return nil
			})
		},
	}
	add.Flags().StringVar(&name, "name", "", "a name people will recognise")
	add.Flags().StringSliceVar(&targets, "target", nil, "target codes (default: every target)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List intake rules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				rules, err := st.CorpusIntakeRules(ctx)
				if err != nil {
					return exitCode(1, "corpus rule list: "+err.Error())
				}
				t := &table{header: []string{"ID", "NAME", "TARGETS", "ENABLED", "LAST RUN", "ADDED"}}
				for _, r := range rules {
					last := "-"
					if r.LastRunAt != nil {
						last = wallText(*r.LastRunAt, "2006-01-02 15:04")
					}
					tg := strings.Join(r.TargetCodes, ",")
					if tg == "" {
						tg = "(all)"
					}
					t.add(strconv.FormatInt(r.ID, 10), r.Name, tg, strconv.FormatBool(r.Enabled), last, strconv.Itoa(r.LastAdded))
				}
				return t.write(cmd.OutOrStdout())
			})
		},
	}
	cmd.AddCommand(add, list)
	return cmd
}
