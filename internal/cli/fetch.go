package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/spf13/cobra"

	"zhizhi/internal/config"
	"zhizhi/internal/extract"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

func init() { register(newFetchCmd) }

func newFetchCmd() *cobra.Command {
	var (
		render  bool
		format  string
		purpose string
	)
	cmd := &cobra.Command{
		Use:   "fetch URL",
		Short: "Fetch one URL politely (robots.txt, limiter, breaker, SSRF guard) and print it",
		Long: `Fetches one URL through everything a crawl goes through: the SSRF guard and
the resolve map (ZHIZHI_RESOLVE), robots.txt, the host's backoff and breaker,
the host limiter, size and time limits and, for sites that need it, the
browser tier. The request is written to crawl_log like any other.

A refusal says why, e.g. blocked by robots.txt line 7 "Disallow: /zwgk/".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "html", "text", "json":
			default:
				return exitCode(2, fmt.Sprintf("fetch: --format %q: want html, text or json", format))
			}
			if !slices.Contains(fetchPurposes, purpose) {
				// robots is not offered: it is zhizhi's own robots.txt
				// request, and no request chosen by a person may pass as one.
				return exitCode(2, fmt.Sprintf("fetch: --purpose %q: want one of %s (robots is zhizhi's own robots.txt request; to read a site's robots.txt, fetch it with the default purpose)",
					purpose, strings.Join(fetchPurposes, ", ")))
			}
			ctx := cmd.Context()
			st, err := openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// Policies only: a broken configuration still lets one fetch through.
			b, _ := config.Load(settings.ConfigDir)
			c, err := newClient(ctx, st, b)
			if err != nil {
				return err
			}
			defer c.Close()
			req := fetch.Request{URL: args[0], Purpose: purpose}
			if render {
				req.Tier = fetch.TierBrowser
			}
			resp, err := c.Do(ctx, req)
			if err != nil {
				return exitCode(1, refusalText(err))
			}
			if err := printFetched(cmd, resp, format); err != nil {
				return err
			}
			// The answer is printed either way; a site error is a failure.
			if resp.Status >= 400 {
				return exitCode(1, fmt.Sprintf("fetch: %s answered HTTP %d", resp.URL, resp.Status))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&render, "render", false, "load the page in the browser tier (headless Chromium)")
	cmd.Flags().StringVar(&format, "format", "html", "output: html (UTF-8 body), text (readable text) or json (status, headers, tier, bytes, body)")
	cmd.Flags().StringVar(&purpose, "purpose", model.PurposeProbe, "purpose recorded in crawl_log: "+strings.Join(fetchPurposes, ", "))
	return cmd
}

// fetchPurposes are the crawl_log purposes a person may give a fetch.
var fetchPurposes = []string{model.PurposeProbe, model.PurposeIndex, model.PurposeList, model.PurposeDetail, model.PurposeAttachment}

// refusalText says in words why the fetch did not happen.
func refusalText(err error) string {
	var (
		re *fetch.RobotsError
		rf *fetch.RefusedError
		be *fetch.BlockedError
	)
	switch {
	case errors.As(err, &re), errors.As(err, &rf):
		// Their messages are already the sentence a user needs.
		if re != nil {
			return re.Error()
		}
		return rf.Error()
	case errors.As(err, &be):
		return "refused: " + be.Error()
	case errors.Is(err, fetch.ErrCaptcha):
		return "stopped: " + fetch.ErrCaptcha.Error()
	}
	return "fetch: " + err.Error()
}

type fetchJSON struct {
	URL         string            `json:"url"`
	Status      int               `json:"status"`
	Tier        string            `json:"tier"`
	Headers     map[string]string `json:"headers"`
	WireBytes   int64             `json:"wire_bytes"`
	BodyBytes   int               `json:"body_bytes"`
	Charset     string            `json:"charset,omitempty"`
	NotModified bool              `json:"not_modified,omitempty"`
	Truncated   bool              `json:"truncated,omitempty"`
	DurationMS  int64             `json:"duration_ms"`
	Body        string            `json:"body"`
	// BodyBase64 carries a binary body (PDF, DOCX) instead of Body.
	BodyBase64 string `json:"body_base64,omitempty"`
}

func printFetched(cmd *cobra.Command, resp *fetch.Response, format string) error {
	out := cmd.OutOrStdout()
	body, charset, err := decodeBody(resp)
	if err != nil {
		return exitCode(1, fmt.Sprintf("fetch: decode %s: %v", resp.URL, err))
	}
	switch format {
	case "json":
		j := fetchJSON{
			URL: resp.URL, Status: resp.Status, Tier: resp.Tier, Headers: map[string]string{},
			WireBytes: resp.WireBytes, BodyBytes: len(resp.Body), Charset: charset,
			NotModified: resp.NotModified, Truncated: resp.Truncated,
			DurationMS: resp.Duration.Milliseconds(),
		}
		if charset != "" || len(body) == 0 {
			j.Body = string(body)
		} else {
			j.BodyBase64 = base64.StdEncoding.EncodeToString(body)
		}
		keys := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			j.Headers[k] = strings.Join(resp.Header[k], ", ")
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(j)
	case "text":
		if isHTML(resp) {
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
			if err != nil {
				return exitCode(1, fmt.Sprintf("fetch: parse %s: %v", resp.URL, err))
			}
			doc.Find("script, style, noscript").Remove()
			fmt.Fprintln(out, extract.BodyText(doc.Find("body")))
			return nil
		}
		fmt.Fprintln(out, string(body))
		return nil
	default:
		_, err := out.Write(body)
		return err
	}
}

func isHTML(resp *fetch.Response) bool {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	return strings.Contains(ct, "html") || ct == "" && strings.Contains(strings.ToLower(http.DetectContentType(resp.Body)), "html")
}

// decodeBody transcodes HTML and text to UTF-8; other bodies pass as they are.
func decodeBody(resp *fetch.Response) ([]byte, string, error) {
	if len(resp.Body) == 0 {
		return nil, "", nil
	}
	if isHTML(resp) {
		return resp.HTML()
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml") || strings.Contains(ct, "javascript") {
		return resp.Text()
	}
	return resp.Body, "", nil
}
