package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/search"
	"zhizhi/internal/store"
)

func init() { register(newSearchCmd) }

func newSearchCmd() *cobra.Command {
	var q search.Query
	var asJSON bool
	var cite string
	cmd := &cobra.Command{
		Use:   "search [WORDS...]",
		Short: "Search the active corpus release (one- and two-character Chinese queries work)",
		Long: `search looks in the active corpus release: every word must occur in a work's
title, text or 文号 (one Chinese character, two, or more; letters and digits
as words). Filters narrow it to a department, a column, a publisher, a 文号 or
a date range; with no words it lists the works the filters select, newest
first. Each hit shows the text around the first match with the matched words
in 【】, and --cite prints each hit's citation.

Exit codes: 0 answered (also with no hits); 2 a bad query, no active release,
or no zhizhi database.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q.Text = strings.Join(args, " ")
			switch cite {
			case "", "gbt7714", "csl-json", "bibtex":
			default:
				return exitCode(2, fmt.Sprintf("search: --cite %q: want gbt7714, csl-json or bibtex", cite))
			}
			return withStore(cmd, func(ctx context.Context, st *store.Store) error {
				rel, err := corpus.New(st, Version).Active(ctx)
				if errors.Is(err, corpus.ErrNoActive) {
					return exitCode(2, "search: "+err.Error())
				}
				if err != nil {
					return exitCode(2, "search: "+err.Error())
				}
				res, err := rel.Search(ctx, q)
				var qe *search.QueryError
				if errors.As(err, &qe) {
					return exitCode(2, fmt.Sprintf("search: %s (%s)", qe.Msg, qe.Field))
				}
				if err != nil {
					return exitCode(2, "search: "+err.Error())
				}
				out := cmd.OutOrStdout()
				if asJSON {
					enc := json.NewEncoder(out)
					enc.SetEscapeHTML(false)
					enc.SetIndent("", "  ")
					return enc.Encode(map[string]any{"release": rel.Version, "total": res.Total, "hits": res.Hits})
				}
				fmt.Fprintf(out, "release %s: %d works match", rel.Version, res.Total)
				if len(res.Hits) < res.Total {
					fmt.Fprintf(out, ", showing %d from %d", len(res.Hits), q.Offset+1)
				}
				fmt.Fprintln(out)
				for i, h := range res.Hits {
					fmt.Fprintf(out, "\n%d. %s  [%s]\n", q.Offset+i+1, mark(h.Title, h.TitleHighlights), h.ID)
					var meta []string
					for _, s := range []string{h.Date, h.Publisher, h.DocNo, h.DeptName} {
						if s != "" {
							meta = append(meta, s)
						}
					}
					if len(meta) > 0 {
						fmt.Fprintf(out, "   %s\n", strings.Join(meta, " · "))
					}
					fmt.Fprintf(out, "   %s\n   %s\n", mark(h.Snippet, h.Highlights), h.URL)
					if cite != "" {
						c, err := rel.Citation(h.ID, cite)
						if err != nil {
							return exitCode(2, "search: "+err.Error())
						}
						fmt.Fprintf(out, "   %s\n", c)
					}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.DeptCode, "dept", "", "only works of this department (its code)")
	f.StringVar(&q.Channel, "channel", "", "only works of this column")
	f.StringVar(&q.Publisher, "publisher", "", "only works of this publisher (发布机构)")
	f.StringVar(&q.DocNo, "docno", "", "only the work with this 文号")
	f.StringVar(&q.From, "from", "", "published on or after this day (YYYY-MM-DD)")
	f.StringVar(&q.To, "to", "", "published on or before this day (YYYY-MM-DD)")
	f.IntVar(&q.Limit, "limit", 10, "hits per page (at most 100)")
	f.IntVar(&q.Offset, "offset", 0, "skip this many hits")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&cite, "cite", "", "print each hit's citation: gbt7714, csl-json or bibtex")
	return cmd
}

// mark puts 【】 around the highlighted byte ranges of s.
func mark(s string, spans [][2]int) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[0] < last || sp[1] > len(s) || sp[0] > sp[1] {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString("【" + s[sp[0]:sp[1]] + "】")
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
