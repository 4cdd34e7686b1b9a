// Command gen writes the PDF fixtures of internal/pdf's tests, well-formed
// and hostile, into the directory it is given:
//
//	go run ./internal/pdf/testdata/gen internal/pdf/testdata
//
// It needs Debian's chromium (to typeset Chinese text with an embedded,
// subset font), poppler-utils (pdftoppm, to turn a page into a scan) and
// qpdf (encryption, attachments): scripts/ensure-deps.sh chromium poppler
// qpdf cjkfont installs them. The hand-built hostile files are written
// byte by byte here, so each says exactly what is wrong with it.
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The text of the scanned page: the OCR test compares what tesseract reads
// with it, character by character.
const scannedText = `关于做好政务公开工作的通知
各区人民政府，市政府各部门：
为进一步推进政务公开，提高政府工作透明度，现就有关事项通知如下。
一、加强组织领导。各单位要明确分管负责同志和工作机构，落实工作责任。
二、规范公开内容。依法主动公开机构职能、政策文件、规划计划和财政预决算等信息。
三、做好政策解读。重要政策文件印发后，应当同步发布解读材料，回应社会关切。
四、强化监督检查。市政府办公厅将定期开展检查，并通报检查结果。`

const textPage1 = `市人民政府办公厅关于印发二〇二六年政务公开工作要点的通知
各区人民政府，市政府各部门、各直属机构：
经市政府同意，现将《二〇二六年政务公开工作要点》印发给你们，请结合实际认真贯彻落实。`

const textPage2 = `附件：二〇二六年政务公开工作要点
一、围绕稳增长促发展，加大政策公开力度。
二、围绕优化营商环境，深化办事服务公开。`

const mixedText = `政务信息公开目录（扫描件附后）`

func main() {
	log.SetFlags(0)
	if len(os.Args) != 2 {
		log.Fatal("usage: gen <output dir>")
	}
	out := os.Args[1]
	tmp, err := os.MkdirTemp("", "pdfgen")
	check(err)
	defer os.RemoveAll(tmp)
	g := gen{out: out, tmp: tmp}

	text := g.chromium("text", page(textPage1)+`<div style="break-before:page"></div>`+page(textPage2))
	g.write("text-zh.pdf", text)

	scanSrc := g.chromium("scansrc", page(scannedText))
	scan := g.render(scanSrc, 200) // 16 pt characters at 200 dpi: about 44 px tall
	g.write("scanned-zh.pdf", imagePDF(scan, 200))
	g.write("scanned-zh.txt", []byte(scannedText+"\n"))
	// The same page scanned at 400 dpi: characters about 90 px tall, too
	// large for the OCR model, so Parse renders the page smaller.
	g.write("scanned-zh-400dpi.pdf", imagePDF(g.render(scanSrc, 400), 400))

	top := crop(scan, scan.Bounds().Dy()/2)
	var pngBuf bytes.Buffer
	check(png.Encode(&pngBuf, top))
	imgPath := filepath.Join(tmp, "scan.png")
	check(os.WriteFile(imgPath, pngBuf.Bytes(), 0o644))
	g.write("mixed-zh.pdf", g.chromium("mixed", page(mixedText)+
		`<img src="file://`+imgPath+`" style="width:170mm">`))

	textPath := filepath.Join(out, "text-zh.pdf")
	g.write("encrypted-user.pdf", g.qpdf("--encrypt", "用户密码", "owner-secret", "256", "--", textPath))
	g.write("encrypted-owner.pdf", g.qpdf("--encrypt", "", "owner-secret", "256", "--", textPath))

	note := filepath.Join(tmp, "名单.csv")
	check(os.WriteFile(note, []byte("姓名,单位\n张三,市政府办公厅\n"), 0o644))
	g.write("embedded-file.pdf", g.qpdf(textPath, "--add-attachment", note, "--mimetype=text/csv", "--", "--"))

	// A scanner's "searchable PDF": the scan with its OCR as invisible
	// text over it (text render mode 3).
	g.write("searchable-scan.pdf", searchablePDF(scan, 200))
	g.write("malformed-xref.pdf", breakXref(text))
	g.write("truncated.pdf", text[:len(text)/2])
	g.write("not-a-pdf.pdf", []byte("<html><body>404 页面不存在</body></html>\n"))
	// Found by fuzzing: a trailer whose root is object 0 made pdfcpu
	// dereference a nil page tree.
	g.write("no-page-tree.pdf", []byte("%PDF-1.0000\nxref\ntrailer0<</Size 00/Root 0 0 R000startxref"))
	g.write("javascript.pdf", javascriptPDF())
	g.write("object-explosion.pdf", explosionPDF(20_000))
	g.write("compression-bomb.pdf", bombPDF(1<<30))
	g.write("huge-image.pdf", hugeImagePDF(200_000, 200_000))
}

type gen struct{ out, tmp string }

func (g gen) write(name string, b []byte) {
	check(os.WriteFile(filepath.Join(g.out, name), b, 0o644))
	log.Printf("%-22s %8d bytes", name, len(b))
}

func page(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("<p>" + line + "</p>")
	}
	return b.String()
}

// chromium typesets body as an A4 page in the CJK font ensure-deps installs.
func (g gen) chromium(name, body string) []byte {
	html := filepath.Join(g.tmp, name+".html")
	pdf := filepath.Join(g.tmp, name+".pdf")
	check(os.WriteFile(html, []byte(`<!doctype html><html lang="zh-CN"><meta charset="utf-8"><title>`+name+`</title>
<style>@page{size:A4;margin:20mm} body{font-family:"WenQuanYi Micro Hei";font-size:16pt;line-height:1.9} p{margin:0 0 6pt}</style>
<body>`+body+`</body></html>`), 0o644))
	run("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--allow-file-access-from-files",
		"--user-data-dir="+filepath.Join(g.tmp, "chromium"), "--no-pdf-header-footer",
		"--print-to-pdf="+pdf, "file://"+html)
	b, err := os.ReadFile(pdf)
	check(err)
	return b
}

// render draws the first page of pdf as a grey image at dpi.
func (g gen) render(pdf []byte, dpi int) *image.Gray {
	in := filepath.Join(g.tmp, "render.pdf")
	check(os.WriteFile(in, pdf, 0o644))
	run("pdftoppm", "-gray", "-png", "-r", fmt.Sprint(dpi), "-f", "1", "-l", "1", "-singlefile", in, filepath.Join(g.tmp, "render"))
	f, err := os.Open(filepath.Join(g.tmp, "render.png"))
	check(err)
	defer f.Close()
	im, err := png.Decode(f)
	check(err)
	gray := image.NewGray(im.Bounds())
	draw.Draw(gray, gray.Bounds(), im, im.Bounds().Min, draw.Src)
	return gray
}

func crop(im *image.Gray, h int) *image.Gray {
	return im.SubImage(image.Rect(0, 0, im.Bounds().Dx(), h)).(*image.Gray)
}

func (g gen) qpdf(args ...string) []byte {
	outPath := filepath.Join(g.tmp, "qpdf-out.pdf")
	args = append(args, outPath)
	// qpdf wants the output after the input; with options ending in "--"
	// the input came first.
	run("qpdf", append([]string{"--static-id"}, args...)...)
	b, err := os.ReadFile(outPath)
	check(err)
	return b
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// --- hand-built files -------------------------------------------------------

// writer lays out numbered objects and the cross-reference table that
// points at them.
type writer struct {
	buf     bytes.Buffer
	offsets []int
}

func newWriter() *writer {
	w := &writer{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return w
}

// obj writes object number len(offsets)+1 and returns its number.
func (w *writer) obj(body string) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	return n
}

func (w *writer) stream(dict string, data []byte) int {
	return w.obj(fmt.Sprintf("<<%s /Length %d>>\nstream\n%s\nendstream", dict, len(data), data))
}

func (w *writer) finish(root int) []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, o := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&w.buf, "trailer\n<</Size %d /Root %d 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(w.offsets)+1, root, xref)
	return w.buf.Bytes()
}

// Objects are numbered in the order they are written: catalog 1, pages 2,
// page 3, then the page's content and resources.
const a4 = "[0 0 595 842]"

func deflate(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

// imagePDF wraps a grey image as a one-page A4 PDF, as a scanner would.
func imagePDF(im *image.Gray, dpi int) []byte {
	b := im.Bounds()
	pix := make([]byte, 0, b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		pix = append(pix, im.Pix[im.PixOffset(b.Min.X, y):im.PixOffset(b.Max.X, y)]...)
	}
	wpt := float64(b.Dx()) * 72 / float64(dpi)
	hpt := float64(b.Dy()) * 72 / float64(dpi)
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj(fmt.Sprintf("<</Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Contents 4 0 R /Resources <</XObject <</Im0 5 0 R>>>>>>", wpt, hpt))
	w.stream("", []byte(fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q", wpt, hpt)))
	w.stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", b.Dx(), b.Dy()), deflate(pix))
	return w.finish(1)
}

// searchablePDF is imagePDF with an invisible text layer.
func searchablePDF(im *image.Gray, dpi int) []byte {
	b := im.Bounds()
	pix := make([]byte, 0, b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		pix = append(pix, im.Pix[im.PixOffset(b.Min.X, y):im.PixOffset(b.Max.X, y)]...)
	}
	wpt := float64(b.Dx()) * 72 / float64(dpi)
	hpt := float64(b.Dy()) * 72 / float64(dpi)
	var layer strings.Builder
	layer.WriteString("BT 3 Tr /F1 10 Tf 60 780 Td 12 TL\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&layer, "(Searchable layer line %02d of the scanned notice) '\n", i)
	}
	layer.WriteString("ET")
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj(fmt.Sprintf("<</Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Contents [4 0 R 6 0 R] /Resources <</XObject <</Im0 5 0 R>> /Font <</F1 7 0 R>>>>>>", wpt, hpt))
	w.stream("", []byte(fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q", wpt, hpt)))
	w.stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", b.Dx(), b.Dy()), deflate(pix))
	w.stream("", []byte(layer.String()))
	w.obj("<</Type /Font /Subtype /Type1 /BaseFont /Helvetica>>")
	return w.finish(1)
}

// helvetica page showing an ASCII line, with extra catalog entries.
func simplePDF(catalogExtra string, extra func(w *writer)) []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R " + catalogExtra + ">>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox " + a4 + " /Contents 4 0 R /Resources <</Font <</F1 5 0 R>>>>>>")
	w.stream("", []byte("BT /F1 14 Tf 72 760 Td (Notice 2026-17) Tj ET"))
	w.obj("<</Type /Font /Subtype /Type1 /BaseFont /Helvetica>>")
	if extra != nil {
		extra(w)
	}
	return w.finish(1)
}

// javascriptPDF runs a script when opened, from the document's name tree
// and its open action.
func javascriptPDF() []byte {
	return simplePDF("/OpenAction 6 0 R /Names <</JavaScript 7 0 R>>", func(w *writer) {
		w.obj("<</Type /Action /S /JavaScript /JS (app.alert\\('opened'\\);)>>")
		w.obj("<</Names [(init) 8 0 R]>>")
		w.obj("<</Type /Action /S /JavaScript /JS (this.submitForm\\('http://127.0.0.1/'\\);)>>")
	})
}

// explosionPDF has n objects in a chain nobody needs.
func explosionPDF(n int) []byte {
	return simplePDF("/Junk 6 0 R", func(w *writer) {
		for i := 0; i < n; i++ {
			w.obj(fmt.Sprintf("[%d 0 R]", 7+i))
		}
		w.obj("null")
	})
}

// bombPDF's page content inflates to size bytes through two Flate passes
// (a few kilobytes on disk).
func bombPDF(size int64) []byte {
	var inner bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&inner, zlib.BestCompression)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for left := size; left > 0; left -= int64(len(chunk)) {
		_, _ = zw.Write(chunk[:min(int64(len(chunk)), left)])
	}
	_ = zw.Close()
	outer := deflate(inner.Bytes())
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox " + a4 + " /Contents 4 0 R /Resources <<>>>>")
	w.stream("/Filter [/FlateDecode /FlateDecode]", outer)
	return w.finish(1)
}

// hugeImagePDF draws an image that declares width×height grey pixels and
// carries a few bytes of them.
func hugeImagePDF(width, height int) []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox " + a4 + " /Contents 4 0 R /Resources <</XObject <</Im0 5 0 R>>>>>>")
	w.stream("", []byte("q 595 0 0 842 0 0 cm /Im0 Do Q"))
	w.stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", width, height),
		deflate(bytes.Repeat([]byte{0xff}, 4096)))
	return w.finish(1)
}

// breakXref points every cross-reference entry and startxref at the wrong
// place, as a careless editor that rewrote the body would leave it.
func breakXref(pdf []byte) []byte {
	out := append([]byte(nil), pdf...)
	i := bytes.LastIndex(out, []byte("\nxref\n"))
	if i < 0 {
		log.Fatal("breakXref: no classic xref table")
	}
	j := bytes.Index(out[i:], []byte("trailer"))
	table := out[i : i+j]
	for k := 0; k+20 <= len(table); k++ {
		if table[k] == '\n' && k+11 < len(table) && isDigits(table[k+1:k+11]) && table[k+11] == ' ' {
			copy(table[k+1:k+11], fmt.Sprintf("%010d", 7*k+3))
		}
	}
	s := bytes.LastIndex(out, []byte("startxref\n"))
	rest := out[s+len("startxref\n"):]
	e := bytes.IndexByte(rest, '\n')
	return append(append(out[:s+len("startxref\n"):s+len("startxref\n")], []byte("123")...), rest[e:]...)
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
