package sim

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"
	"unicode/utf16"
)

// buildFile returns the bytes of an attachment. Every file is a real,
// parseable document holding the article's Chinese text.
func buildFile(f *attachment, seed int) []byte {
	switch f.Ext {
	case "pdf":
		return buildPDF(f.Lines)
	case "docx":
		return buildDOCX(f.Lines)
	default:
		return buildPNG(seed)
	}
}

// buildPDF writes a PDF 1.7 file: the non-embedded Adobe-GB1 font
// STSong-Light through a Type0 font with the UniGB-UCS2-H encoding (so
// viewers draw the glyphs) and a ToUnicode CMap (so text extraction such as
// pdftotext gets the Unicode back).
func buildPDF(lines []string) []byte {
	const perLine, perPage = 38, 44
	var wrapped []string
	for _, l := range lines {
		rs := []rune(l)
		for len(rs) > perLine {
			wrapped = append(wrapped, string(rs[:perLine]))
			rs = rs[perLine:]
		}
		wrapped = append(wrapped, string(rs))
	}
	var pages [][]string
	for len(wrapped) > perPage {
		pages = append(pages, wrapped[:perPage])
		wrapped = wrapped[perPage:]
	}
	pages = append(pages, wrapped)

	var objs []string // objs[i] is object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // pages, filled in below
	toUni := add(stream(toUnicodeCMap()))
	desc := add("<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>")
	cid := add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor %d 0 R /DW 1000 >>", desc))
	font := add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>", cid, toUni))
	var kids []string
	for _, pg := range pages {
		var c strings.Builder
		c.WriteString("BT\n/F1 12 Tf\n16 TL\n56 780 Td\n")
		for _, l := range pg {
			c.WriteString("<" + ucs2Hex(l) + "> Tj T*\n")
		}
		c.WriteString("ET\n")
		content := add(stream(c.String()))
		page := add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", font, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))

	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func stream(s string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(s), s)
}

// ucs2Hex is s as big-endian UTF-16 in hex, the codes UniGB-UCS2-H expects.
func ucs2Hex(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	return b.String()
}

// toUnicodeCMap maps every 2-byte code to the same UTF-16 value, in
// 256-code ranges (a bfrange may not cross a high-byte boundary).
func toUnicodeCMap() string {
	var b strings.Builder
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	var ranges []string
	for hi := 0; hi < 256; hi++ {
		if hi >= 0xD8 && hi <= 0xDF {
			continue // surrogates are not characters
		}
		ranges = append(ranges, fmt.Sprintf("<%02X00> <%02XFF> <%02X00>", hi, hi, hi))
	}
	for len(ranges) > 0 {
		n := min(100, len(ranges))
		fmt.Fprintf(&b, "%d beginbfrange\n%s\nendbfrange\n", n, strings.Join(ranges[:n], "\n"))
		ranges = ranges[n:]
	}
	b.WriteString("endcmap\nCMapName currentdict /defineresource pop\nend\nend")
	return b.String()
}

// docxTime is the fixed timestamp of every zip entry, so bytes don't depend
// on when the world started.
var docxTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// buildDOCX writes a minimal WordprocessingML package: one paragraph per line.
func buildDOCX(lines []string) []byte {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	doc.WriteString(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for _, l := range lines {
		var t bytes.Buffer
		_ = xml.EscapeText(&t, []byte(l))
		doc.WriteString(`<w:p><w:r><w:rPr><w:rFonts w:eastAsia="宋体"/></w:rPr><w:t xml:space="preserve">` + t.String() + `</w:t></w:r></w:p>`)
	}
	doc.WriteString(`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body></w:document>`)
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", doc.String()},
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, p := range parts {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: zip.Deflate, Modified: docxTime})
		if err != nil {
			return nil
		}
		_, _ = fw.Write([]byte(p.body))
	}
	_ = zw.Close()
	return b.Bytes()
}

// buildPNG draws a small deterministic picture for news articles.
func buildPNG(seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	base := color.RGBA{uint8(seed * 37), uint8(seed * 91), uint8(seed * 53), 255}
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{base.R + uint8(x*2), base.G + uint8(y*3), base.B, 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
