package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"zhizhi/internal/ledger"
)

func init() { register(newAuditCmd) }

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Seal, export and verify the signed daily record of crawler requests and human reads",
		Long: `Every day (Asia/Shanghai) once it is over, zhizhi seals two ledgers: the
crawler's — every request it made: host, purpose, method, status, bytes — and
the humans' — per card, how many times readers scored human viewed it and
clicked through to the source. Each ledger becomes a Merkle tree; the day's
head chains it to the day before and is signed with the installation's key.
Anyone holding an export and the public key can check that no record was
changed, added, removed or moved after sealing. The ledgers hold counts only,
never who read or clicked what.`,
	}
	cmd.AddCommand(newAuditSealCmd(), newAuditExportCmd(), newAuditVerifyCmd(), newAuditKeyCmd())
	return cmd
}

func newAuditSealCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "seal",
		Short: "Seal every day that is over and not sealed yet",
		Long: `seal seals, oldest first, every day that is over and not sealed yet, from the
day of the first logged request. A day counts as over 10 minutes after its
midnight (Asia/Shanghai), so that requests logged just after midnight are in
it. Days without records are sealed too, so the chain has no gaps. Running it
again, or while zhizhi serve seals, does no harm: a day is sealed once.

Exit codes: 0 done, 1 the database could not be read or written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			// Each day is told as it is stored: a backlog of months takes a
			// while, and what was printed stays sealed whatever happens next.
			s := &ledger.Sealer{Store: st, Human: ledger.ClosingHumanSource(st), Sealed: func(day string) {
				fmt.Fprintf(out, "audit seal: sealed %s\n", day)
			}}
			sealed, err := s.SealDue(ctx)
			if err != nil {
				return exitCode(1, "audit seal: "+err.Error())
			}
			last, ok, err := st.LastLedgerDay(ctx)
			if err != nil {
				return exitCode(1, "audit seal: "+err.Error())
			}
			switch {
			case !ok:
				fmt.Fprintln(out, "audit seal: nothing to seal yet — no request is logged, or the first day is not over")
			case len(sealed) == 0:
				fmt.Fprintf(out, "audit seal: nothing to seal — every day up to %s is sealed\n", last.Day)
			default:
				fmt.Fprintf(out, "audit seal: %d days sealed; every day up to %s is sealed, head %s\n", len(sealed), last.Day, last.Head)
			}
			return nil
		},
	}
}

func newAuditExportCmd() *cobra.Command {
	var day, from, to, out string
	cmd := &cobra.Command{
		Use:   "export --day YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD [--out DIR]",
		Short: "Write sealed days with their signed heads and a proof for every record",
		Long: `export writes each sealed day into DIR/YYYY-MM-DD/:
  head.note      the day's signed head
  verifier.key   the public key that checks the signature
  crawler.jsonl  the crawler's requests, one per line
  human.jsonl    the per-card counts of human views and click-throughs
Each line of a .jsonl file holds the record exactly as it was sealed, its
index in the day's tree and its proof of inclusion in the signed root, so
that the directory can be checked anywhere with
  zhizhi audit verify --dir DIR --key KEY
without the database. Nothing in an export identifies a reader.

Exit codes: 0 written, 1 a day is not sealed or the files could not be
written, 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (day == "") == (from == "" && to == "") || (day == "" && (from == "" || to == "")) {
				return exitCode(2, "audit export: give --day, or both --from and --to — see 'zhizhi audit export --help'")
			}
			if day != "" {
				from, to = day, day
			}
			for _, f := range []struct{ flag, v string }{{"--day", day}, {"--from", from}, {"--to", to}} {
				if f.v == "" {
					continue
				}
				if _, err := ledger.ParseDay(f.v); err != nil {
					return exitCode(2, fmt.Sprintf("audit export: %s: %v", f.flag, err))
				}
			}
			if to < from {
				return exitCode(2, fmt.Sprintf("audit export: --to %s is before --from %s", to, from))
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			written, err := ledger.Export(ctx, st, from, to, out)
			w := cmd.OutOrStdout()
			for _, p := range written {
				fmt.Fprintf(w, "audit export: wrote %s\n", p)
			}
			if err != nil {
				return exitCode(1, "audit "+err.Error())
			}
			vkey, err := ledger.VerifierKey(ctx, st)
			if err != nil {
				return exitCode(1, "audit export: "+err.Error())
			}
			fmt.Fprintf(w, "audit export: %d days; check them with: zhizhi audit verify --dir %s --key %s\n", len(written), out, vkey)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&day, "day", "", "the day to export (YYYY-MM-DD, Asia/Shanghai)")
	f.StringVar(&from, "from", "", "the first day of a range to export")
	f.StringVar(&to, "to", "", "the last day of a range to export")
	f.StringVar(&out, "out", ".", "the directory to write the day directories in")
	return cmd
}

func newAuditVerifyCmd() *cobra.Command {
	var dir, key, knownHeads string
	cmd := &cobra.Command{
		Use:   "verify [--dir DIR] [--key KEY|FILE] [--known-heads FILE|URL]",
		Short: "Check every signature, head, chain link and record of the sealed days",
		Long: `verify checks the sealed days in the database, or with --dir an export
(a directory of day directories, or one day directory): every head note's
signature, every day head, that the days follow each other without a gap and
each links to the head of the day before, and that every record is in its
day's signed tree — none changed, added, removed or moved. It names the first
day and record found wrong and stops there. On the database it also
compares every sealed record with the row it was sealed from (the day's
crawl_log rows and human tallies): a row changed, deleted or added after
sealing is named too.

--key is the public verifier key (as 'zhizhi audit key' prints it, or a file
holding it). Without it the database's own key is used, or for an export the
key it carries — which only shows the export agrees with itself; pass the
key the operator published to trust it.

--known-heads is a copy of the heads feed (/ledger/heads) kept earlier, as a
file or an http(s) address: verify then also proves that the chain still
extends every head in it — the same head on each of those days. A day
rewritten after its head was published fails, and so does a chain cut
short of a known day. For an export, a known day outside its range cannot
be checked (exit 2).

Exit codes: 0 all checks pass, 1 something was changed after sealing (the
line names the day and record), 2 the check could not be made ("could not
check: …": the database or export could not be read, a bad key or flag).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			vkey, err := readVerifierKey(key)
			if err != nil {
				return exitCode(2, "audit verify: --key: "+err.Error())
			}
			var known []ledger.KnownHead
			if knownHeads != "" {
				b, err := readKnownHeads(cmd.Context(), knownHeads)
				if err == nil {
					known, err = ledger.ParseKnownHeads(b)
				}
				if err != nil {
					return exitCode(2, "audit verify: could not check: --known-heads "+knownHeads+": "+err.Error())
				}
			}
			var sum ledger.Summary
			var note string
			if dir != "" {
				var used string
				sum, used, err = ledger.VerifyDir(dir, vkey)
				if vkey == "" && used != "" {
					note = "; checked with the key in the export (" + used + ") — compare it with the published key"
				}
			} else {
				ctx := cmd.Context()
				st, oerr := openStore(ctx)
				if oerr != nil {
					return oerr
				}
				defer st.Close()
				sum, err = ledger.VerifyStore(ctx, st, vkey, ledger.StoredHumanSource(st))
			}
			// 1 only for tampering found; anything that kept the check from
			// being made is 2, so that a cron job tells the two apart.
			var problem *ledger.Problem
			if err == nil && known != nil {
				err = ledger.CheckKnownHeads(sum, known, dir == "")
			}
			if errors.As(err, &problem) {
				return exitCode(1, "audit verify: "+err.Error())
			}
			if err != nil {
				return exitCode(2, "audit verify: could not check: "+err.Error())
			}
			if known != nil {
				note += fmt.Sprintf("; the chain extends all %d known heads", len(known))
			}
			w := cmd.OutOrStdout()
			if sum.Days == 0 {
				fmt.Fprintln(w, "audit verify: no sealed day to check yet")
				return nil
			}
			if sum.ContinuesFrom != "" {
				note += "; the first day continues head " + sum.ContinuesFrom + ", which is not among the checked days"
			}
			span := fmt.Sprintf("%d days from %s to %s", sum.Days, sum.First, sum.Last)
			if sum.Days == 1 {
				span = "1 day, " + sum.First
			}
			fmt.Fprintf(w, "audit verify: all good — %s: signatures, heads and chain links check out, and %d crawler and %d human records are each in their day's signed tree; last head %s%s\n",
				span, sum.CrawlerRecords, sum.HumanRecords, sum.LastHead, note)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "check an export in this directory instead of the database")
	cmd.Flags().StringVar(&key, "key", "", "the public verifier key, or a file holding it")
	cmd.Flags().StringVar(&knownHeads, "known-heads", "", "heads kept earlier (a copy of /ledger/heads): a file or an http(s) address")
	return cmd
}

// maxKnownHeads bounds a heads feed read: years of days, a note each.
const maxKnownHeads = 64 << 20

// readKnownHeads reads the kept heads from a file or an http(s) address.
// The address is the one the operator typed, fetched once, plainly: no
// redirect to another host, no cookie, a size limit.
func readKnownHeads(ctx context.Context, arg string) ([]byte, error) {
	if !strings.HasPrefix(arg, "http://") && !strings.HasPrefix(arg, "https://") {
		return os.ReadFile(filepath.Clean(arg))
	}
	u, err := url.Parse(arg)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("not a web address")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "zhizhi-audit-verify")
	req.Header.Set("Accept", "application/json")
	c := &http.Client{CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if r.URL.Host != u.Host || len(via) > 3 {
			return fmt.Errorf("redirected to %s: not followed", r.URL.Redacted())
		}
		return nil
	}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxKnownHeads+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKnownHeads {
		return nil, fmt.Errorf("larger than %d MB", maxKnownHeads>>20)
	}
	return b, nil
}

// readVerifierKey takes a key or the name of a file holding one; "" stays "".
func readVerifierKey(arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	vkey := arg
	if b, err := os.ReadFile(filepath.Clean(arg)); err == nil {
		vkey = strings.TrimSpace(string(b))
	} else if !errors.Is(err, os.ErrNotExist) || !strings.Contains(arg, "+") {
		return "", fmt.Errorf("%q is neither a readable file nor a verifier key", arg)
	}
	if _, err := ledger.ParseVerifierKey(vkey); err != nil {
		return "", fmt.Errorf("%q: %v — give the key as 'zhizhi audit key' prints it", arg, err)
	}
	return vkey, nil
}

func newAuditKeyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "key",
		Short: "Print the public key that checks the sealed days' signatures",
		Long: `key prints the public verifier key of this installation (creating the key
pair on first use). Publish it: with it anyone can check an export with
'zhizhi audit verify --dir DIR --key KEY'. The private half stays in the
database.

Exit codes: 0 printed, 1 the database could not be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			vkey, err := ledger.VerifierKey(ctx, st)
			if err != nil {
				return exitCode(1, "audit key: "+err.Error())
			}
			fmt.Fprintln(cmd.OutOrStdout(), vkey)
			return nil
		},
	}
}
