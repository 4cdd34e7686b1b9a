package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Class says where a page's (or a file's) text is.
type Class string

const (
	ClassText    Class = "text"    // drawn as text: pdftotext reads it
	ClassScanned Class = "scanned" // only a picture of text: needs OCR
	ClassMixed   Class = "mixed"   // text and a page-sized picture, or text pages and scanned pages
	ClassEmpty   Class = "empty"   // neither text nor a large picture
)

// Report is what Inspect finds in a file.
type Report struct {
	Version       string         `json:"version"`
	Bytes         int64          `json:"bytes"`
	PageCount     int            `json:"page_count"`
	Objects       int            `json:"objects"`
	Encryption    Encryption     `json:"encryption"`
	JavaScript    bool           `json:"javascript"`
	EmbeddedFiles []EmbeddedFile `json:"embedded_files"`
	Class         Class          `json:"class"`
	OCRPages      []int          `json:"ocr_pages"` // 1-based; scanned and mixed pages
	Pages         []Page         `json:"pages"`
}

// Encryption says whether and how a file is encrypted. A file encrypted
// with only an owner password opens without one (its permissions are
// advisory); one with a user password cannot be read without it.
type Encryption struct {
	Encrypted    bool `json:"encrypted"`
	UserPassword bool `json:"user_password"`
}

// EmbeddedFile is a file attached inside the PDF (never opened here).
type EmbeddedFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"` // as declared; -1 when not declared
}

// Page is one page's fonts and images as its resources declare them.
type Page struct {
	Number int      `json:"number"`
	Class  Class    `json:"class"`
	Text   bool     `json:"text"` // its content stream shows text with a font
	Fonts  []string `json:"fonts"`
	Images []Image  `json:"images"`
	Width  float64  `json:"width_pt"` // media box, in points
	Height float64  `json:"height_pt"`
}

// Image is an image XObject a page draws (directly or inside a form).
type Image struct {
	Object           int    `json:"object"`
	Width            int    `json:"width"`
	Height           int    `json:"height"`
	BitsPerComponent int    `json:"bits_per_component"`
	Filter           string `json:"filter,omitempty"`
}

// Pixels is the image's declared size.
func (im Image) Pixels() int64 { return int64(im.Width) * int64(im.Height) }

// A picture this large on a page is taken for a scan of it (an A4 page at
// 100 dpi is 827×1169); logos and seals are far smaller.
const scanMinSide, scanMinPixels = 300, 250_000

func (im Image) pageSized() bool {
	return min(im.Width, im.Height) >= scanMinSide && im.Pixels() >= scanMinPixels
}

// Inspect reads data's structure. On ErrEncrypted (a user password is
// needed) the report is still returned with what is known without it: its
// version, size and encryption. Every other error comes with a nil report.
func Inspect(ctx context.Context, data []byte, limits Limits) (rep *Report, err error) {
	// pdfcpu recovers most of its own panics, not all (a page tree it
	// could not find, a nil where a dict was declared): none reaches the
	// caller.
	defer func() {
		if r := recover(); r != nil {
			rep, err = nil, failf(ErrMalformed, "parser gave up: %v", r)
		}
	}()
	lim := limits.withDefaults()
	xt, rep, err := open(ctx, data, lim)
	if err != nil {
		return rep, err
	}
	if err := describe(ctx, xt, rep, lim); err != nil {
		return nil, err
	}
	return rep, nil
}

// open parses the file with pdfcpu within lim.
func open(ctx context.Context, data []byte, lim Limits) (xt *model.XRefTable, rep *Report, err error) {
	if int64(len(data)) > lim.MaxBytes {
		return nil, nil, failf(ErrTooBig, "%d bytes is over the limit of %d", len(data), lim.MaxBytes)
	}
	head := data[:min(len(data), 1024)]
	if !bytes.Contains(head, []byte("%PDF-")) {
		return nil, nil, failf(ErrMalformed, "no %%PDF- header in the first 1024 bytes")
	}
	// pdfcpu loads every object into memory: count them first, cheaply, so
	// that a file of a million tiny objects is refused before it is parsed.
	if n := bytes.Count(data, []byte("endobj")); n > lim.MaxObjects {
		return nil, nil, failf(ErrTooBig, "%d objects is over the limit of %d", n, lim.MaxObjects)
	}

	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Cmd = model.LISTINFO
	conf.Limits.MaxStreamBytes = lim.MaxBytes
	conf.Limits.MaxDecodeBytes = lim.MaxDecodedBytes
	conf.Limits.MaxImagePixels = lim.MaxImagePixels
	conf.Limits.MaxObjectCount = lim.MaxObjects
	conf.Limits.MaxObjectStreamCount = lim.MaxObjects
	conf.Limits.MaxXRefEntries = lim.MaxObjects

	pc, err := pdfcpu.ReadWithContext(ctx, bytes.NewReader(data), conf)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, nil, ctxErr
		}
		var kindErr *Error
		switch {
		case errors.As(err, &kindErr):
			return nil, nil, err
		case errors.Is(err, pdfcpu.ErrWrongPassword):
			return nil, &Report{Version: headerVersion(head), Bytes: int64(len(data)),
				Encryption: Encryption{Encrypted: true, UserPassword: true}}, failf(ErrEncrypted, "a user password is needed to open it")
		case overLimit(err):
			return nil, nil, failf(ErrTooBig, "%v", err)
		}
		return nil, nil, failf(ErrMalformed, "%v", err)
	}
	xt = pc.XRefTable
	if err := xt.EnsurePageCount(); err != nil {
		return nil, nil, failf(ErrMalformed, "page tree: %v", err)
	}
	if xt.PageCount > lim.MaxPages {
		return nil, nil, failf(ErrTooBig, "%d pages is over the limit of %d", xt.PageCount, lim.MaxPages)
	}
	objects := 0
	for _, e := range xt.Table {
		if e != nil && !e.Free {
			objects++
		}
	}
	if objects > lim.MaxObjects {
		return nil, nil, failf(ErrTooBig, "%d objects is over the limit of %d", objects, lim.MaxObjects)
	}
	version := headerVersion(head)
	if v := xt.Version(); v >= 0 {
		version = v.String()
	}
	return xt, &Report{
		EmbeddedFiles: []EmbeddedFile{},
		OCRPages:      []int{},
		Pages:         []Page{},
		Version:       version,
		Bytes:         int64(len(data)),
		PageCount:     xt.PageCount,
		Objects:       objects,
		Encryption:    Encryption{Encrypted: xt.Encrypt != nil},
	}, nil
}

func overLimit(err error) bool {
	if errors.Is(err, filter.ErrDecodeLimitExceeded) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "exceeds limit") || strings.Contains(s, "limit exceeded")
}

func headerVersion(head []byte) string {
	i := bytes.Index(head, []byte("%PDF-"))
	if i < 0 || i+8 > len(head) {
		return ""
	}
	return string(head[i+5 : i+8])
}

// describe fills in the scripts, embedded files and pages of rep.
func describe(ctx context.Context, xt *model.XRefTable, rep *Report, lim Limits) error {
	// Scripts and embedded files can hide anywhere (name trees, actions on
	// annotations, form fields): look at every object rather than at the
	// places a well-formed file would put them.
	for nr, e := range xt.Table {
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		var d types.Dict
		switch o := e.Object.(type) {
		case types.Dict:
			d = o
		case types.StreamDict:
			d = o.Dict
		default:
			continue
		}
		if _, ok := d.Find("JS"); ok {
			rep.JavaScript = true
		}
		if s := d.NameEntry("S"); s != nil && *s == "JavaScript" {
			rep.JavaScript = true
		}
		if ef, ok := d.Find("EF"); ok {
			rep.EmbeddedFiles = append(rep.EmbeddedFiles, embeddedFile(xt, nr, d, ef))
		}
	}
	sort.Slice(rep.EmbeddedFiles, func(i, j int) bool { return rep.EmbeddedFiles[i].Name < rep.EmbeddedFiles[j].Name })

	counts := map[Class]int{}
	for n := 1; n <= xt.PageCount; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := describePage(xt, n, lim)
		if err != nil {
			return err
		}
		if p.Class == ClassScanned || p.Class == ClassMixed {
			rep.OCRPages = append(rep.OCRPages, n)
		}
		counts[p.Class]++
		rep.Pages = append(rep.Pages, p)
	}
	switch {
	case counts[ClassMixed] > 0 || counts[ClassText] > 0 && counts[ClassScanned] > 0:
		rep.Class = ClassMixed
	case counts[ClassScanned] > 0:
		rep.Class = ClassScanned
	case counts[ClassText] > 0:
		rep.Class = ClassText
	default:
		rep.Class = ClassEmpty
	}
	return nil
}

func embeddedFile(xt *model.XRefTable, nr int, d types.Dict, ef types.Object) EmbeddedFile {
	f := EmbeddedFile{Name: fmt.Sprintf("object %d", nr), Size: -1}
	for _, k := range []string{"UF", "F"} {
		if o, ok := d.Find(k); ok {
			if s, err := xt.DereferenceStringOrHexLiteral(o, model.V10, nil); err == nil && s != "" {
				f.Name = s
				break
			}
		}
	}
	efd, err := xt.DereferenceDict(ef)
	if err != nil || efd == nil {
		return f
	}
	o, ok := efd.Find("F")
	if !ok {
		return f
	}
	sd, _, err := xt.DereferenceStreamDict(o)
	if err != nil || sd == nil {
		return f
	}
	if pd, err := xt.DereferenceDict(sd.Dict["Params"]); err == nil && pd != nil {
		if sz := pd.IntEntry("Size"); sz != nil {
			f.Size = int64(*sz)
			return f
		}
	}
	if sd.StreamLength != nil {
		f.Size = *sd.StreamLength
	}
	return f
}

// How deep forms nested in forms are followed: real files nest one or two.
const maxFormDepth = 8

func describePage(xt *model.XRefTable, n int, lim Limits) (Page, error) {
	p := Page{Number: n, Fonts: []string{}, Images: []Image{}}
	d, _, inh, err := xt.PageDict(n, false)
	if err != nil || d == nil {
		return p, failf(ErrMalformed, "page %d: %v", n, err)
	}
	if inh != nil && inh.MediaBox != nil {
		p.Width, p.Height = inh.MediaBox.Width(), inh.MediaBox.Height()
	}
	w := pageWalker{xt: xt, lim: lim, page: &p, seen: map[int]bool{}, fonts: map[string]bool{}}
	var res types.Dict
	if inh != nil {
		res = inh.Resources
	}
	if err := w.walk(d["Contents"], res, 0); err != nil {
		return p, err
	}
	sort.Strings(p.Fonts)
	bigImage := false
	for _, im := range p.Images {
		bigImage = bigImage || im.pageSized()
	}
	p.Text = w.showsText && len(p.Fonts) > 0
	switch {
	case p.Text && bigImage:
		p.Class = ClassMixed
	case p.Text:
		p.Class = ClassText
	case bigImage:
		p.Class = ClassScanned
	default:
		p.Class = ClassEmpty
	}
	return p, nil
}

type pageWalker struct {
	xt        *model.XRefTable
	lim       Limits
	page      *Page
	seen      map[int]bool // image and form objects already counted
	fonts     map[string]bool
	showsText bool
	decoded   int64 // content bytes decoded for this page so far
}

// walk reads one content (a page's, or a form's) and the resources it uses.
func (w *pageWalker) walk(contents types.Object, res types.Dict, depth int) error {
	if depth > maxFormDepth {
		return nil
	}
	if err := w.content(contents); err != nil {
		return err
	}
	if res == nil {
		return nil
	}
	if fd, err := w.xt.DereferenceDict(res["Font"]); err == nil {
		for _, o := range fd {
			f, err := w.xt.DereferenceDict(o)
			if err != nil || f == nil {
				continue
			}
			name := "unnamed"
			if b := f.NameEntry("BaseFont"); b != nil {
				name = *b
			}
			if !w.fonts[name] {
				w.fonts[name] = true
				w.page.Fonts = append(w.page.Fonts, name)
			}
		}
	}
	xd, err := w.xt.DereferenceDict(res["XObject"])
	if err != nil || xd == nil {
		return nil
	}
	keys := make([]string, 0, len(xd))
	for k := range xd {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := xd[k]
		nr := 0
		if ir, ok := o.(types.IndirectRef); ok {
			nr = ir.ObjectNumber.Value()
			if w.seen[nr] {
				continue
			}
			w.seen[nr] = true
		}
		sd, _, err := w.xt.DereferenceStreamDict(o)
		if err != nil || sd == nil {
			continue
		}
		switch st := sd.NameEntry("Subtype"); {
		case st != nil && *st == "Image":
			im := Image{Object: nr}
			if v := sd.IntEntry("Width"); v != nil {
				im.Width = *v
			}
			if v := sd.IntEntry("Height"); v != nil {
				im.Height = *v
			}
			if v := sd.IntEntry("BitsPerComponent"); v != nil {
				im.BitsPerComponent = *v
			}
			if len(sd.FilterPipeline) > 0 {
				im.Filter = sd.FilterPipeline[len(sd.FilterPipeline)-1].Name
			}
			w.page.Images = append(w.page.Images, im)
		case st != nil && *st == "Form":
			fres, _ := w.xt.DereferenceDict(sd.Dict["Resources"])
			if err := w.walk(o, fres, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// content decodes a content stream (or an array of them) within the
// page's budget and notes whether it shows text.
func (w *pageWalker) content(o types.Object) error {
	o, err := w.xt.Dereference(o)
	if err != nil || o == nil {
		return nil
	}
	if a, ok := o.(types.Array); ok {
		for _, c := range a {
			if err := w.content(c); err != nil {
				return err
			}
		}
		return nil
	}
	sd, ok := o.(types.StreamDict)
	if !ok {
		return nil
	}
	left := w.lim.MaxDecodedBytes - w.decoded
	over := failf(ErrTooBig, "page %d: its content decodes to more than %d bytes", w.page.Number, w.lim.MaxDecodedBytes)
	if r, ok := flateChain(sd); ok {
		// Streamed, never held: a compression bomb costs a bounded
		// amount of CPU and a 32 KB buffer.
		n, text, err := scanText(io.LimitReader(r, left+1))
		w.decoded += n
		w.showsText = w.showsText || text
		if n > left {
			return over
		}
		_ = err // a broken stream says nothing more about text
		return nil
	}
	if err := sd.DecodeWithLimit(left); err != nil {
		if overLimit(err) {
			return over
		}
		// A stream in a filter we do not decode says nothing about text.
		return nil
	}
	w.decoded += int64(len(sd.Content))
	if w.decoded > w.lim.MaxDecodedBytes {
		return over
	}
	w.showsText = w.showsText || showsText(sd.Content)
	sd.Content = nil
	return nil
}

// flateChain is a reader of sd's content when its filters are all plain
// FlateDecode (as content streams are), the usual case.
func flateChain(sd types.StreamDict) (io.Reader, bool) {
	var r io.Reader = bytes.NewReader(sd.Raw)
	for _, f := range sd.FilterPipeline {
		if f.Name != filter.Flate || len(f.DecodeParms) > 0 {
			return nil, false
		}
		zr, err := zlib.NewReader(r)
		if err != nil {
			return bytes.NewReader(nil), true
		}
		r = zr
	}
	return r, true
}

// scanText reads r to its end and reports how many bytes it gave and
// whether they show text (see showsText), holding one chunk at a time.
func scanText(r io.Reader) (int64, bool, error) {
	var n int64
	buf := make([]byte, 32<<10)
	var tail []byte
	inText, text := false, false
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if !text && k > 0 {
			chunk := append(tail, buf[:k]...)
			if !inText {
				if i := bytes.Index(chunk, []byte("BT")); i >= 0 {
					inText, chunk = true, chunk[i:]
				}
			}
			text = inText && showsText(chunk)
			tail = append([]byte(nil), chunk[max(0, len(chunk)-2):]...)
		}
		if err == io.EOF {
			return n, text, nil
		}
		if err != nil {
			return n, text, err
		}
	}
}

// showsText reports whether content has a text object with a text-showing
// operator (Tj, TJ, ' or ").
func showsText(c []byte) bool {
	i := bytes.Index(c, []byte("BT"))
	if i < 0 {
		return false
	}
	c = c[i:]
	for _, op := range [][]byte{[]byte("Tj"), []byte("TJ"), []byte("'"), []byte("\"")} {
		if bytes.Contains(c, op) {
			return true
		}
	}
	return false
}
