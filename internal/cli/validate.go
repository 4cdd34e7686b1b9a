package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"zhizhi/internal/crawl"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

func init() { register(newValidateCmd) }

func newValidateCmd() *cobra.Command {
	var targetCode, siteCode, entry, sample string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate (--target CODE | --site CODE --entry URL [--sample URL])",
		Short: "Dry-run a target's selectors on its list page and a sample article",
		Long: `Validate fetches the list page and one sample article politely and reports what
the parser finds: list items, title, publication time, body length, public
attributes and attachments. It is green only when the list selectors hit,
the title is non-empty and the body has at least 50 characters. Exit status 0
when green, 1 otherwise.

It stores nothing a crawl would: no article, attachment, page state
(url_state) or column probe. Each request it makes is logged in crawl_log,
and what it learns about the host's politeness (robots.txt, backing off
after errors, challenge cookies) is kept as for any fetch.`,
		Example: `  zhizhi validate --target lianzhou_tzgg
  zhizhi validate --site gd_ref --entry http://www.gd.gov.test/zwgk/wjk/ --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (targetCode == "") == (siteCode == "") {
				return exitCode(2, "validate: give --target CODE, or --site CODE with --entry URL")
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			b, err := loadBundle()
			if err != nil {
				return err
			}
			var target *model.Target
			if targetCode != "" {
				target, err = st.TargetByCode(ctx, targetCode)
				if errors.Is(err, store.ErrNotFound) {
					return exitCode(1, fmt.Sprintf("validate: target %q is not in the database — run `zhizhi config sync`", targetCode))
				}
				if err != nil {
					return exitCode(1, err.Error())
				}
				if entry == "" {
					entry = target.EntryURL
				}
				if sample == "" {
					sample = target.SampleArticleURL
				}
			}
			var site *model.Site
			if target != nil {
				site, err = st.SiteByID(ctx, target.SiteID)
			} else {
				site, err = st.SiteByCode(ctx, siteCode)
				if errors.Is(err, store.ErrNotFound) {
					return exitCode(1, fmt.Sprintf("validate: site %q is not in the database — run `zhizhi config sync`", siteCode))
				}
			}
			if err != nil {
				return exitCode(1, err.Error())
			}
			if err := sameHost(site, entry); err != nil {
				return err
			}
			client, err := newClient(ctx, st, b)
			if err != nil {
				return err
			}
			defer client.Close()
			c := &crawl.Crawler{Store: st, Blobs: st.Blobs(), Fetch: client, Bundle: b}
			v, err := c.Validate(ctx, site, target, entry, sample)
			if err != nil {
				return exitCode(1, "validate: "+err.Error())
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				_ = enc.Encode(v)
			} else {
				printValidation(out, v)
			}
			if !v.Green {
				return exitCode(1, "")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&targetCode, "target", "", "validate this target (its entry and sample URLs)")
	cmd.Flags().StringVar(&siteCode, "site", "", "validate this site's template on --entry and --sample")
	cmd.Flags().StringVar(&entry, "entry", "", "list page URL")
	cmd.Flags().StringVar(&sample, "sample", "", "sample article URL (default: the first list item)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printValidation(w io.Writer, v *crawl.Validation) {
	mark := func(ok bool) string {
		if ok {
			return "✓"
		}
		return "✗"
	}
	fmt.Fprintf(w, "站点 %s\n", v.Site)
	if v.Entry != "" {
		fmt.Fprintf(w, "%s 列表页 %s: %d 条\n", mark(v.ListItems > 0), v.Entry, v.ListItems)
		for _, t := range v.ListFirst {
			fmt.Fprintf(w, "    · %s\n", t)
		}
		if v.NextPage != "" {
			fmt.Fprintf(w, "    下一页 %s\n", v.NextPage)
		}
	}
	sample := v.Sample
	if v.SampleFromList {
		sample += " (列表第一条)"
	}
	fmt.Fprintf(w, "  样例文章 %s\n", sample)
	fmt.Fprintf(w, "%s 标题: %s\n", mark(v.Title != ""), v.Title)
	if v.PublishTime != "" {
		fmt.Fprintf(w, "  发布时间: %s\n", v.PublishTime)
	}
	fmt.Fprintf(w, "%s 正文: %d 字 %s\n", mark(v.ContentChars >= crawl.MinContentChars), v.ContentChars, v.ContentHead)
	labels := make([]string, 0, len(v.Attributes))
	for l := range v.Attributes {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	fmt.Fprintf(w, "  公开属性 %d 项\n", len(labels))
	for _, l := range labels {
		fmt.Fprintf(w, "    %s: %s\n", l, v.Attributes[l])
	}
	if len(v.Attachments) > 0 {
		fmt.Fprintf(w, "  附件 %d 个: %s\n", len(v.Attachments), strings.Join(v.Attachments, ", "))
	}
	if len(v.SelectorsMiss) > 0 {
		fmt.Fprintf(w, "  未命中的选择器: %s\n", strings.Join(v.SelectorsMiss, ", "))
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "  ⚠ %s\n", p)
	}
	fmt.Fprintln(w, "  写入: 仅 crawl_log 请求记录；未保存文章、附件或页面状态")
	if v.Green {
		fmt.Fprintln(w, "结果: ✓ 通过 (green)")
	} else {
		fmt.Fprintln(w, "结果: ✗ 未通过 (red)")
	}
}

// sameHost refuses an entry page on another host than the site's, as
// `config lint` refuses such an entry_url: a dry run on another site's host
// would be judged with this site's template and politeness.
func sameHost(site *model.Site, entry string) error {
	e, err := url.Parse(entry)
	if err != nil || e.Host == "" {
		return nil // not a URL with a host: Validate says what is wrong with it
	}
	base, err := url.Parse(site.BaseURL)
	if err != nil || base.Host == "" || strings.EqualFold(base.Host, e.Host) {
		return nil
	}
	return exitCode(2, fmt.Sprintf("validate: entry_url host %s differs from base_url host %s of site %s — point --entry at a page of %s, or give --site of the site for %s",
		e.Host, base.Host, site.SiteCode, base.Host, e.Host))
}
