package charset

import (
	"bytes"
	"testing"
)

// Sites that lie about their charset: the bytes are decoded as what they
// are, and the lie is reported so it can be kept with the article.
func TestDecodeHTMLDeclaredCharsetContradicted(t *testing.T) {
	const title = "清远市人民政府办公室关于印发《2024年政务公开工作要点》的通知"
	page := func(meta string) string {
		return "<!DOCTYPE html><html><head>" + meta + "<title>" + title + "</title></head><body><p>各县（市、区）人民政府</p></body></html>"
	}
	tests := []struct {
		name        string
		body        []byte
		contentType string
		wantCharset string
		wantNote    string
	}{
		{"GBK in Content-Type, UTF-8 sent", []byte(page("")), "text/html; charset=gbk",
			"utf-8", "declared gb18030, body is utf-8"},
		{"gb2312 in meta, UTF-8 sent", []byte(page(`<meta charset="gb2312">`)), "text/html",
			"utf-8", "declared gb18030, body is utf-8"},
		{"UTF-8 in Content-Type, GB18030 sent", gb18030(t, page(`<meta charset="gb2312">`)), "text/html; charset=utf-8",
			"gb18030", "declared utf-8, body is gb18030"},
		{"UTF-8 in meta, GB18030 sent", gb18030(t, page(`<meta charset="utf-8">`)), "text/html",
			"gb18030", "declared utf-8, body is gb18030"},
		{"GB18030 cut at a size limit, UTF-8 declared", gb18030(t, page(""))[:len(gb18030(t, page("")))-len("</p></body></html>")-1], "text/html; charset=utf-8",
			"gb18030", "declared utf-8, body is gb18030"},
		// The declaration holds: nothing to note.
		{"honest GBK", gb18030(t, page("")), "text/html; charset=gbk", "gb18030", ""},
		{"honest UTF-8", []byte(page("")), "text/html; charset=utf-8", "utf-8", ""},
		{"nothing declared", gb18030(t, page("")), "text/html", "gb18030", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cs, err := DecodeHTML(tt.body, tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if cs != tt.wantCharset {
				t.Errorf("charset = %q, want %q", cs, tt.wantCharset)
			}
			if !bytes.Contains(out, []byte("<title>"+title+"</title>")) {
				t.Errorf("title not decoded; got %q", out)
			}
			if note := Note(tt.body, tt.contentType); note != tt.wantNote {
				t.Errorf("note = %q, want %q", note, tt.wantNote)
			}
		})
	}
}

// A Western page mislabelled as GBK has no Chinese to prove it UTF-8, and
// bytes that do not decode cleanly as GB18030 are not called GB18030: the
// label stays.
func TestDecodeHTMLLabelKeptWithoutProof(t *testing.T) {
	ascii := []byte("<html><head><title>Notice</title></head><body>plain</body></html>")
	if note := Note(ascii, "text/html; charset=gbk"); note != "" {
		t.Errorf("ASCII page under a gbk label: note %q, want none", note)
	}
	junk := []byte("<html><body>caf\xe9\n</body></html>")
	if _, cs, _ := DecodeHTML(junk, "text/html; charset=utf-8"); cs != "utf-8" {
		t.Errorf("undecodable bytes under utf-8: charset %q, want utf-8 kept", cs)
	}
}

func TestDecodeTextDeclaredCharsetContradicted(t *testing.T) {
	json := `{"title":"关于做好2024年政务公开工作的通知"}`
	for _, tc := range []struct {
		body []byte
		ct   string
	}{
		{[]byte(json), "application/json; charset=gbk"},
		{gb18030(t, json), "application/json; charset=utf-8"},
	} {
		out, _, err := DecodeText(tc.body, tc.ct)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != json {
			t.Errorf("%s: got %q, want %q", tc.ct, out, json)
		}
	}
}
