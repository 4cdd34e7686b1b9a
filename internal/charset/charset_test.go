package charset

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

func gb18030(t testing.TB, s string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode gb18030: %v", err)
	}
	return b
}

func TestDecodeHTML(t *testing.T) {
	// 𠀀 (U+20000) and € need GB18030's four-byte and extended forms: a GBK
	// decoder would lose them.
	const title = "清远市人民政府关于印发《2024年政务公开工作要点》的通知 𠀀 €"
	page := func(meta string) string {
		return "<!DOCTYPE html><html><head>" + meta + "<title>" + title + "</title></head><body>正文</body></html>"
	}
	utf16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(page("")))

	tests := []struct {
		name        string
		body        []byte
		contentType string
		wantCharset string
	}{
		{"GB18030 declared in Content-Type", gb18030(t, page("")), "text/html; charset=GB18030", "gb18030"},
		{"gbk label decoded as GB18030", gb18030(t, page("")), "text/html; charset=gbk", "gb18030"},
		{"x-gbk and cp936 labels", gb18030(t, page("")), "text/html;charset=x-gbk", "gb18030"},
		{"gb2312 only in meta charset", gb18030(t, page(`<meta charset="gb2312">`)), "text/html", "gb18030"},
		{"gb2312 only in meta http-equiv", gb18030(t, page(`<meta http-equiv="Content-Type" content="text/html; charset=gb2312">`)), "", "gb18030"},
		{"GB_2312-80 in meta", gb18030(t, page(`<META HTTP-EQUIV="content-type" CONTENT="text/html;charset=GB_2312-80">`)), "", "gb18030"},
		{"meta after a long head comment", gb18030(t, "<!--"+strings.Repeat(" ", 2000)+"-->"+page(`<meta charset="gbk">`)), "", "gb18030"},
		{"Content-Type wins over meta", []byte(page(`<meta charset="gb2312">`)), "text/html; charset=utf-8", "utf-8"},
		{"UTF-8 BOM wins over Content-Type", append([]byte("\xef\xbb\xbf"), page("")...), "text/html; charset=gbk", "utf-8"},
		{"UTF-16LE BOM", utf16le, "text/html; charset=gbk", "utf-16le"},
		{"undeclared UTF-8 detected", []byte(page("")), "", "utf-8"},
		{"undeclared GB18030 detected", gb18030(t, page("")), "text/html", "gb18030"},
		{"unknown Content-Type label falls through to meta", gb18030(t, page(`<meta charset="gbk">`)), "text/html; charset=x-nonsense", "gb18030"},
		{"sloppy Content-Type still read", gb18030(t, page("")), "text/html;charset=GBK;;", "gb18030"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cs, err := DecodeHTML(tt.body, tt.contentType)
			if err != nil {
				t.Fatalf("DecodeHTML: %v", err)
			}
			if cs != tt.wantCharset {
				t.Errorf("charset = %q, want %q", cs, tt.wantCharset)
			}
			if !bytes.Contains(out, []byte("<title>"+title+"</title>")) {
				t.Errorf("title not decoded exactly; got %q", out)
			}
			if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
				t.Error("BOM left in the output")
			}
		})
	}
}

func TestDecodeHTMLInvalidBytesBecomeReplacement(t *testing.T) {
	body := []byte("<html><body>ok \xff\xfe\xfd end</body></html>")
	out, _, err := DecodeHTML(body, "text/html; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(out) || !bytes.Contains(out, []byte("\uFFFD")) || !bytes.Contains(out, []byte("end")) {
		t.Errorf("got %q, want valid UTF-8 with U+FFFD and the rest kept", out)
	}
}

func TestDecodeHTMLTruncatedUTF8StaysUTF8(t *testing.T) {
	body := []byte("<html><body>" + strings.Repeat("政务公开", 50))
	body = body[:len(body)-1] // cut in the middle of the last character
	_, cs, err := DecodeHTML(body, "")
	if err != nil {
		t.Fatal(err)
	}
	if cs != "utf-8" {
		t.Errorf("charset = %q, want utf-8 for UTF-8 cut at a size limit", cs)
	}
}

func TestDecodeText(t *testing.T) {
	json := `{"title":"关于做好2024年政务公开工作的通知"}`
	tests := []struct {
		name        string
		body        []byte
		contentType string
		wantCharset string
	}{
		{"plain JSON", []byte(json), "application/json", "utf-8"},
		{"GBK JSON with header", gb18030(t, json), "application/json; charset=GBK", "gb18030"},
		{"GB JSON without header", gb18030(t, json), "application/json", "gb18030"},
		{"BOM", append([]byte("\xef\xbb\xbf"), json...), "", "utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cs, err := DecodeText(tt.body, tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if cs != tt.wantCharset || string(out) != json {
				t.Errorf("got %q as %q, want %q as %q", out, cs, json, tt.wantCharset)
			}
		})
	}
}

func FuzzCharsetSniff(f *testing.F) {
	f.Add([]byte(`<meta charset="gbk"><title>x</title>`), "text/html")
	f.Add([]byte("\xef\xbb\xbf<p>x</p>"), "text/html; charset=gb2312")
	f.Add([]byte("\xc7\xe5\xd4\xb6"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		out, cs, err := DecodeHTML(body, contentType)
		if err != nil {
			return
		}
		if !utf8.Valid(out) {
			t.Fatalf("DecodeHTML output is not valid UTF-8 (charset %q)", cs)
		}
		if cs == "" {
			t.Fatal("DecodeHTML returned no charset name")
		}
		out, _, err = DecodeText(body, contentType)
		if err == nil && !utf8.Valid(out) {
			t.Fatal("DecodeText output is not valid UTF-8")
		}
	})
}
