package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"
	htmlcharset "golang.org/x/net/html/charset"

	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
)

func init() { register(newExtractCmd) }

func newExtractCmd() *cobra.Command {
	var (
		rawURL  string
		charset string
		base    string
	)
	cmd := &cobra.Command{
		Use:   "extract [--url URL | FILE]",
		Short: "Extract title, time, text, attributes and links from a page with no template",
		Long: `Extract runs the generic extractor (main text, the 公开属性 block, dates, links)
on a saved HTML file or, with --url, on a page fetched politely (robots.txt,
rate limits and the resolve map all apply). It prints one JSON object:
{title, publish_time, text, attributes, canonical, links}. The page's charset
is detected (BOM, Content-Type, <meta>, sniffing); --charset overrides it.`,
		Example: `  zhizhi extract saved.html
  zhizhi extract --charset gb18030 --base http://www.lianzhou.gov.test/tzgg/ page.html
  zhizhi extract --url http://www.gd.gov.test/zwgk/zcwj/content/post_1001.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (rawURL == "") == (len(args) == 0) {
				return exitCode(2, "extract: give either --url URL or one FILE")
			}
			var (
				body        []byte
				contentType string
				pageURL     *url.URL
			)
			if rawURL != "" {
				resp, err := politeGet(cmd.Context(), rawURL)
				if err != nil {
					return exitCode(1, fmt.Sprintf("extract: %v", err))
				}
				if resp.Status >= 400 {
					return exitCode(1, fmt.Sprintf("extract: %s answered HTTP %d; nothing to extract", resp.URL, resp.Status))
				}
				body, contentType = resp.Body, resp.Header.Get("Content-Type")
				pageURL, _ = url.Parse(resp.URL)
			} else {
				b, err := os.ReadFile(args[0])
				if err != nil {
					return exitCode(1, fmt.Sprintf("extract: %v", err))
				}
				body = b
				if base != "" {
					u, err := url.Parse(base)
					if err != nil || u.Host == "" {
						return exitCode(2, fmt.Sprintf("extract: --base %q is not an absolute URL", base))
					}
					pageURL = u
				}
			}
			if charset != "" {
				if enc, _ := htmlcharset.Lookup(charset); enc == nil {
					return exitCode(2, fmt.Sprintf("extract: --charset %q is not a known charset (try utf-8, gb18030, gbk, big5)", charset))
				}
				contentType = "text/html; charset=" + charset
			}
			html, _, err := fetch.DecodeHTML(body, contentType)
			if err != nil {
				return exitCode(1, fmt.Sprintf("extract: decode: %v", err))
			}
			page, err := extract.Generic(html, pageURL, nil)
			if err != nil {
				return exitCode(1, fmt.Sprintf("extract: %v", err))
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			return enc.Encode(page)
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "fetch this URL politely and extract it")
	cmd.Flags().StringVar(&charset, "charset", "", "decode the page with this charset (e.g. gb18030, gbk, utf-8)")
	cmd.Flags().StringVar(&base, "base", "", "base URL to resolve a file's links against")
	return cmd
}
