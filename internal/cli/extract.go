package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	htmlcharset "golang.org/x/net/html/charset"

	"zhizhi/internal/charset"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
)

func init() { register(newExtractCmd) }

func newExtractCmd() *cobra.Command {
	var (
		rawURL      string
		charsetFlag string
		base        string
	)
	cmd := &cobra.Command{
		Use:   "extract [--url URL | FILE]",
		Short: "Extract title, time, text, attributes and links from a page with no template",
		Long: `Extract runs the generic extractor (main text, the 公开属性 block, dates, links)
on a saved HTML file or, with --url, on a page fetched politely (robots.txt,
rate limits and the resolve map all apply). It prints one JSON object:
{title, publish_time, publish_date, text, attributes, canonical, links}.
publish_time is UTC; publish_date and the canonical publish_date and
effective_date are YYYY-MM-DD in Beijing time. A page that states no date
gets none: numbers in its URL or file name are never taken for one.

The page's charset is detected (BOM, Content-Type, <meta>, sniffing);
--charset names it when detection is wrong. At most 20 MB of HTML is read;
an empty file, or one that is not HTML (a PDF, an image, plain text), is
refused.`,
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
				bodySize    int64 // the whole input's size, when more than was read
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
				b, size, err := readCapped(args[0], extractMaxBytes)
				if err != nil {
					return exitCode(1, fmt.Sprintf("extract: %v", err))
				}
				body, bodySize = b, size
				if base != "" {
					u, err := url.Parse(base)
					if err != nil || u.Host == "" {
						return exitCode(2, fmt.Sprintf("extract: --base %q is not an absolute URL", base))
					}
					pageURL = u
				}
			}
			what := "the page at " + rawURL
			if rawURL == "" {
				what = args[0]
			}
			if len(body) > extractMaxBytes {
				size := "larger than " + mb(int64(extractMaxBytes))
				if bodySize > int64(extractMaxBytes) {
					size = mb(bodySize)
				} else if rawURL != "" {
					size = mb(int64(len(body)))
				}
				return exitCode(1, fmt.Sprintf("extract: %s is %s; extract reads at most %s of HTML — "+
					"no article page is that large: save just the page you want", what, size, mb(int64(extractMaxBytes))))
			}
			if len(bytes.TrimSpace(body)) == 0 {
				return exitCode(1, fmt.Sprintf("extract: %s is an empty file; nothing to extract", what))
			}
			if kind, ok := looksHTML(body); !ok {
				return exitCode(1, fmt.Sprintf("extract: %s is not HTML (it looks like %s); give a saved web page", what, kind))
			}
			if charsetFlag != "" {
				if enc, _ := htmlcharset.Lookup(charsetFlag); enc == nil {
					return exitCode(2, fmt.Sprintf("extract: --charset %q is not a known charset (try utf-8, gb18030, gbk, big5)", charsetFlag))
				}
				contentType = "text/html; charset=" + charsetFlag
			}
			html, _, err := charset.DecodeHTML(body, contentType)
			if err != nil {
				return exitCode(1, fmt.Sprintf("extract: decode: %v", err))
			}
			if !htmlTagRe.Match(html) {
				return exitCode(1, fmt.Sprintf("extract: %s is not HTML (plain text with no tags); give a saved web page", what))
			}
			if note := charset.Note(body, contentType); note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "extract: %s: charset %s; decoded as what the bytes are\n", what, note)
			}
			page, err := extract.Generic(html, pageURL, nil)
			if err != nil {
				return exitCode(1, fmt.Sprintf("extract: %v", err))
			}
			out := extractOutput{Page: page}
			if page.PublishTime != nil {
				out.PublishDate = page.PublishTime.In(extract.Shanghai).Format("2006-01-02")
			}
			for _, f := range []string{extract.FieldPublishDate, extract.FieldEffectiveDate} {
				raw, ok := page.Canonical[f]
				if !ok {
					continue
				}
				if d, err := extract.DateOnly(raw); err == nil {
					page.Canonical[f] = d
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "extract: %s %q is not a date; kept as written\n", f, raw)
				}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "fetch this URL politely and extract it")
	cmd.Flags().StringVar(&charsetFlag, "charset", "", "decode the page with this charset (e.g. gb18030, gbk, utf-8)")
	cmd.Flags().StringVar(&base, "base", "", "base URL to resolve a file's links against")
	return cmd
}

// extractMaxBytes caps what extract reads: the fetcher's limit for a body
// off the wire. Parsing costs tens of times the input in memory (a 50 MB
// file took 2.3 GB), and no article page comes near it.
var extractMaxBytes = int(fetch.DefaultLimits.MaxRawBytes)

// extractOutput is the extracted page plus its publication day.
type extractOutput struct {
	*extract.Page
	PublishDate string `json:"publish_date,omitempty"` // YYYY-MM-DD, Beijing
}

// readCapped reads at most limit+1 bytes of the file at path, so a larger
// file is recognised without being read whole. size is the file's size
// when known (not for a pipe), else 0.
func readCapped(path string, limit int) (b []byte, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			return nil, 0, errors.New(path + " is a directory; give a saved web page")
		}
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	b, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return b, size, nil
}

// htmlTagRe finds an HTML element, comment or doctype.
var htmlTagRe = regexp.MustCompile(`<(?:[a-zA-Z][a-zA-Z0-9]*[\s/>]|!--|![dD][oO][cC][tT][yY][pP][eE])`)

// looksHTML refuses bodies that are plainly something else (a PDF, a
// picture, an archive, binary); text goes on to be decoded and checked for
// tags. kind is what the body looks like.
func looksHTML(body []byte) (kind string, ok bool) {
	kind = http.DetectContentType(body)
	switch {
	case strings.HasPrefix(kind, "text/"):
		return kind, true
	case strings.HasPrefix(kind, "application/pdf"):
		return "a PDF document", false
	case strings.HasPrefix(kind, "image/"):
		return "an image (" + kind + ")", false
	case strings.HasPrefix(kind, "application/zip"), strings.HasPrefix(kind, "application/x-gzip"),
		strings.HasPrefix(kind, "application/x-rar"):
		return "an archive (" + kind + ")", false
	case strings.HasPrefix(kind, "application/octet-stream"):
		return "binary data", false
	}
	return kind, false
}

// mb writes a byte count in megabytes for a person.
func mb(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
