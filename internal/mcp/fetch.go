package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"zhizhi/internal/auth"
)

// fetch answers the fetch tool: one page now, through the Backend's polite
// client, fenced.
func (t *tools) fetch(ctx context.Context, _ *sdk.CallToolRequest, in FetchInput) (*sdk.CallToolResult, *FetchOutput, error) {
	// NewServer lists fetch only for a principal with the scope; this is
	// the second lock on the same door.
	if !t.p.Allows(auth.ScopeAcquire) {
		return nil, nil, errors.New(t.refusal("fetch", auth.ScopeAcquire))
	}
	in, err := checkFetch(in)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch: %w", err)
	}
	out, err := t.b.Fetch(t.ctx(ctx), t.p, in)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", in.URL, err)
	}
	if out == nil {
		return nil, nil, fmt.Errorf("fetch %s: the acquisition API gave no answer; try again, and tell the operator if it persists", in.URL)
	}
	out.Marking = marking()

	head := fmt.Sprintf("Fetched %s: HTTP %d, %s at %s.", out.URL, out.StatusCode, cacheWords(out.CacheState), out.FetchedAt)
	var b strings.Builder
	field(&b, "final_url", out.FinalURL)
	field(&b, "content_type", out.ContentType)
	field(&b, "title", out.Title)
	field(&b, "publisher", out.Publisher)
	field(&b, "docno", out.DocNo)
	field(&b, "published", out.Published)
	for _, f := range in.Formats {
		body := out.Markdown
		if f == FormatText {
			body = out.Text
		}
		fmt.Fprintf(&b, "\n--- %s ---\n%s\n", f, body)
	}
	return fenced(head, b.String(), ""), out, nil
}

func cacheWords(state string) string {
	if state == "hit" {
		return "from a stored snapshot taken"
	}
	return "fetched"
}

// checkFetch refuses a URL that is not an absolute http(s) URL and
// formats fetch does not offer; formats default to markdown, each once.
func checkFetch(in FetchInput) (FetchInput, error) {
	in.URL = strings.TrimSpace(in.URL)
	u, err := url.Parse(in.URL)
	if in.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return in, fmt.Errorf("url %q: give an absolute http or https URL, e.g. https://www.gd.gov.cn/", in.URL)
	}
	var formats []string
	for _, f := range in.Formats {
		f = strings.ToLower(strings.TrimSpace(f))
		if !slices.Contains(FetchFormats, f) {
			return in, fmt.Errorf("format %q: choose %s", f, strings.Join(FetchFormats, " or "))
		}
		if !slices.Contains(formats, f) {
			formats = append(formats, f)
		}
	}
	if len(formats) == 0 {
		formats = []string{FormatMarkdown}
	}
	in.Formats = formats
	return in, nil
}
