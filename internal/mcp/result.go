package mcp

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fenced is a tool result whose text content is head (zhizhi's own words),
// then body (web-sourced) inside a fresh fence, then tail (zhizhi's own
// words again); its _meta says it is untrusted and names the fence.
func fenced(head, body, tail string) *sdk.CallToolResult {
	f := newFence()
	var b strings.Builder
	if head != "" {
		b.WriteString(head)
		b.WriteByte('\n')
	}
	b.WriteString(f.wrap(body))
	if tail != "" {
		b.WriteByte('\n')
		b.WriteString(tail)
	}
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: b.String()}},
		Meta:    sdk.Meta{MetaUntrusted: true, MetaFence: f.nonce, MetaTrust: TrustNote},
	}
}

// marking is the Marking of every result.
func marking() Marking {
	return Marking{Untrusted: true, Trust: "titles, snippets, text and citations were " + TrustNote}
}

// field writes "label: value\n" when value is not empty.
func field(b *strings.Builder, label, value string) {
	if value == "" {
		return
	}
	b.WriteString(label)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteByte('\n')
}

// writeMeta writes a work's metadata, one field a line.
func writeMeta(b *strings.Builder, m WorkMeta) {
	field(b, "title", m.Title)
	field(b, "publisher", m.Publisher)
	field(b, "dept", m.Dept)
	field(b, "channel", m.Channel)
	field(b, "docno", m.DocNo)
	field(b, "published", m.Published)
	field(b, "url", m.URL)
}
