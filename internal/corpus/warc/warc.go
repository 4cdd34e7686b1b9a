// Package warc owns the archive formats of a corpus snapshot: the raw HTTP
// exchange written as WARC 1.1 records (one gzip member per record, built
// with nlnwa/gowarc and never through its file writer, whose default file
// namer opens a UDP socket), the verification of such files (block and
// payload digests recomputed, every failure naming the record), CDXJ lines
// and Wayback-CDX-server answers over them, and WACZ 1.1.1 packages that
// ReplayWeb.page and pywb open. It does no I/O of its own beyond the
// readers and writers it is handed: naming, storing and serving the files
// belong to the corpus intake, the release builder and the HTTP layer.
package warc

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// Exchange is one HTTP request and response as the crawler saw them.
type Exchange struct {
	// TargetURI is the absolute http(s) URL that was fetched. Bytes outside
	// ASCII are percent-encoded (UTF-8) on the way into the WARC, because
	// WARC-Target-URI must be a URI.
	TargetURI string
	// Method defaults to GET.
	Method        string
	RequestHeader http.Header
	// Status is the HTTP status code of the response (100–999).
	Status         int
	ResponseHeader http.Header
	// Body is the entity body after transfer and content decoding (what
	// Go's HTTP client hands over). Content-Encoding and Transfer-Encoding
	// are therefore dropped from the recorded header, Content-Length is set
	// to len(Body), and the metadata record says which headers were
	// dropped.
	Body      []byte
	FetchedAt time.Time
	// IP is the server address the response came from; empty when unknown.
	IP string
	// HeadersReconstructed says the crawler kept only some response
	// headers (status, content type, ETag …) and the recorded header is
	// rebuilt from them; the metadata record carries it as
	// "headers-reconstructed: true".
	HeadersReconstructed bool
	// Metadata goes into the metadata record as WARC fields, sorted by
	// name: provider, crawl-log-id, robots, access, rights, trust,
	// zhizhi-version … Names must be tokens (letters, digits, "-", "_",
	// "."); values must be one line.
	Metadata map[string]string
	// Software names the writer in the warcinfo record, for example
	// "zhizhi/0.9.0"; "zhizhi" when empty.
	Software string
}

// Record describes one written or verified WARC record, enough to index it.
type Record struct {
	Type string // warcinfo, response, request, metadata, resource, …
	ID   string // WARC-Record-ID, "<urn:uuid:…>"
	// Offset is where the record's gzip member starts, counted from the
	// first byte written by Write (add the file's earlier size when
	// appending) or from the first byte read by Verify.
	Offset int64
	// Length is the compressed length of the record's gzip member.
	Length        int64
	TargetURI     string
	Date          time.Time
	BlockDigest   string // "sha256:<hex>"
	PayloadDigest string // "sha256:<hex>"; empty where the record has no payload digest
	// Status is the HTTP status of a response record, 0 otherwise.
	Status int
	// MIME is the HTTP Content-Type without parameters for request and
	// response records, the WARC Content-Type for others.
	MIME string
}

// digestAlgorithm is sha256 written as lowercase hex: what warcio.js and
// gowarc write by default, what WACZ uses for its own hashes, and what the
// CDXJ "digest" field then carries after the "sha256:" prefix.
const digestAlgorithm = "sha256"

const warc11Spec = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"

// recordOptions makes gowarc compute Content-Length and both digests, and
// fail (not warn) on anything in the header that breaks the WARC 1.1 spec.
func recordOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(gowarc.V1_1),
		gowarc.WithStrictValidation(),
		gowarc.WithAddMissingContentLength(true),
		gowarc.WithAddMissingDigest(true),
		gowarc.WithDefaultDigestAlgorithm(digestAlgorithm),
		gowarc.WithDefaultDigestEncoding(gowarc.Base16),
		gowarc.WithAddMissingRecordId(false),
	}
}

// Write writes one exchange as a complete gzip-per-record WARC 1.1 file:
// warcinfo, response, request and metadata records, each its own gzip
// member, and returns them in that order. Record IDs are name-based UUIDs
// derived from the exchange, so the same exchange always yields the same
// bytes (a content address of the file stays stable).
func Write(w io.Writer, ex Exchange) ([]Record, error) {
	p, err := prepare(ex)
	if err != nil {
		return nil, err
	}
	seed := p.seed()
	ids := map[string]string{}
	for _, t := range []string{"warcinfo", "response", "request", "metadata"} {
		ids[t] = nameUUID(seed, t)
	}

	type spec struct {
		rt          gowarc.RecordType
		name        string
		contentType string
		block       []byte
		concurrent  bool
		target      bool
	}
	specs := []spec{
		{gowarc.Warcinfo, "warcinfo", gowarc.ApplicationWarcFields, p.warcinfo, false, false},
		{gowarc.Response, "response", gowarc.ApplicationHttp + ";msgtype=response", p.response, false, true},
		{gowarc.Request, "request", gowarc.ApplicationHttp + ";msgtype=request", p.request, true, true},
		{gowarc.Metadata, "metadata", gowarc.ApplicationWarcFields, p.metadata, true, true},
	}

	cw := &countingWriter{w: w}
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestCompression)
	var out []Record
	for _, s := range specs {
		// The block is in memory already; a buffer as large keeps gowarc
		// from spilling it to a temporary file.
		rb := gowarc.NewRecordBuilder(s.rt, append(recordOptions(), gowarc.WithBufferMaxMemBytes(int64(len(s.block))+1))...)
		rb.AddWarcHeader(gowarc.WarcRecordID, ids[s.name])
		rb.AddWarcHeaderTime(gowarc.WarcDate, p.date)
		if s.target {
			rb.AddWarcHeader(gowarc.WarcTargetURI, p.target)
		}
		if s.rt != gowarc.Warcinfo {
			rb.AddWarcHeader(gowarc.WarcWarcinfoID, ids["warcinfo"])
		}
		if s.concurrent {
			rb.AddWarcHeader(gowarc.WarcConcurrentTo, ids["response"])
		}
		if p.ip != "" && (s.rt == gowarc.Response || s.rt == gowarc.Request) {
			rb.AddWarcHeader(gowarc.WarcIPAddress, p.ip)
		}
		rb.AddWarcHeader(gowarc.ContentType, s.contentType)
		if _, err := rb.Write(s.block); err != nil {
			return nil, fmt.Errorf("warc: build %s record for %s: %w", s.name, p.target, err)
		}
		rec, _, err := rb.Build()
		if err != nil {
			return nil, fmt.Errorf("warc: build %s record for %s: %w", s.name, p.target, err)
		}

		start := cw.n
		zw.Reset(cw)
		if _, _, err := gowarc.NewMarshaler().Marshal(zw, rec, 0); err != nil {
			rec.Close()
			return nil, fmt.Errorf("warc: write %s record for %s: %w", s.name, p.target, err)
		}
		if err := zw.Close(); err != nil {
			rec.Close()
			return nil, fmt.Errorf("warc: write %s record for %s: %w", s.name, p.target, err)
		}
		h := rec.WarcHeader()
		r := Record{
			Type:          s.name,
			ID:            ids[s.name],
			Offset:        start,
			Length:        cw.n - start,
			Date:          p.date,
			BlockDigest:   h.Get(gowarc.WarcBlockDigest),
			PayloadDigest: h.Get(gowarc.WarcPayloadDigest),
			MIME:          s.contentType,
		}
		rec.Close()
		if s.target {
			r.TargetURI = p.target
		}
		switch s.rt {
		case gowarc.Response:
			r.Status = p.status
			r.MIME = p.mime
		case gowarc.Request:
			r.MIME = mediaType(p.reqHeader.Get("Content-Type"))
		}
		out = append(out, r)
	}
	return out, nil
}

// prepared is an exchange checked and turned into record blocks.
type prepared struct {
	target    string
	date      time.Time
	ip        string
	status    int
	mime      string
	reqHeader http.Header
	warcinfo  []byte
	response  []byte
	request   []byte
	metadata  []byte
}

// seed identifies the exchange for record IDs: what was fetched, when, and
// the exact bytes that came back.
func (p *prepared) seed() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", p.target, p.date.Format(time.RFC3339Nano))
	h.Write(p.response)
	h.Write(p.request)
	h.Write(p.metadata)
	h.Write(p.warcinfo)
	return h.Sum(nil)
}

func prepare(ex Exchange) (*prepared, error) {
	target, err := targetURI(ex.TargetURI)
	if err != nil {
		return nil, err
	}
	if ex.FetchedAt.IsZero() {
		return nil, fmt.Errorf("warc: exchange for %s has no FetchedAt; the fetch time dates every record", target)
	}
	if ex.Status < 100 || ex.Status > 999 {
		return nil, fmt.Errorf("warc: exchange for %s has HTTP status %d; want a three-digit status", target, ex.Status)
	}
	p := &prepared{target: target, date: ex.FetchedAt.UTC(), status: ex.Status}
	if ex.IP != "" {
		ip := net.ParseIP(ex.IP)
		if ip == nil {
			return nil, fmt.Errorf("warc: exchange for %s: IP %q is not an IP address", target, ex.IP)
		}
		p.ip = ip.String()
	}
	u, _ := url.Parse(target)

	method := ex.Method
	if method == "" {
		method = http.MethodGet
	}
	if !isToken(method) {
		return nil, fmt.Errorf("warc: exchange for %s: method %q is not an HTTP token", target, method)
	}

	// Response block: status line, headers as recorded minus the ones that
	// described the transfer encoding of bytes we no longer have, then the
	// decoded body.
	resp := ex.ResponseHeader.Clone()
	if resp == nil {
		resp = http.Header{}
	}
	var dropped []string
	for _, name := range []string{"Content-Encoding", "Transfer-Encoding"} {
		for _, v := range resp.Values(name) {
			dropped = append(dropped, name+": "+v)
		}
		resp.Del(name)
	}
	resp.Set("Content-Length", strconv.Itoa(len(ex.Body)))
	var rb bytes.Buffer
	text := http.StatusText(ex.Status)
	if text == "" {
		text = "Status " + strconv.Itoa(ex.Status)
	}
	fmt.Fprintf(&rb, "HTTP/1.1 %03d %s\r\n", ex.Status, text)
	if err := writeHeader(&rb, resp); err != nil {
		return nil, fmt.Errorf("warc: exchange for %s: response %w", target, err)
	}
	rb.WriteString("\r\n")
	rb.Write(ex.Body)
	p.response = rb.Bytes()
	p.mime = mediaType(resp.Get("Content-Type"))

	// Request block: request line with the origin-form target and a Host
	// header, as it went on the wire for HTTP/1.1.
	req := ex.RequestHeader.Clone()
	if req == nil {
		req = http.Header{}
	}
	if req.Get("Host") == "" {
		req.Set("Host", u.Host)
	}
	p.reqHeader = req
	var qb bytes.Buffer
	fmt.Fprintf(&qb, "%s %s HTTP/1.1\r\n", method, u.RequestURI())
	if err := writeHeader(&qb, req); err != nil {
		return nil, fmt.Errorf("warc: exchange for %s: request %w", target, err)
	}
	qb.WriteString("\r\n")
	p.request = qb.Bytes()

	// Metadata record: what this package knows about the fetch, then the
	// caller's declarations.
	fields := [][2]string{{"headers-reconstructed", strconv.FormatBool(ex.HeadersReconstructed)}}
	for _, d := range dropped {
		fields = append(fields, [2]string{"dropped-header", d})
	}
	reserved := map[string]bool{"headers-reconstructed": true, "dropped-header": true}
	keys := make([]string, 0, len(ex.Metadata))
	for k := range ex.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if reserved[strings.ToLower(k)] {
			return nil, fmt.Errorf("warc: exchange for %s: metadata field %q is written by this package; choose another name", target, k)
		}
		fields = append(fields, [2]string{k, ex.Metadata[k]})
	}
	if p.metadata, err = warcFields(fields); err != nil {
		return nil, fmt.Errorf("warc: exchange for %s: metadata %w", target, err)
	}

	software := ex.Software
	if software == "" {
		software = "zhizhi"
	}
	if p.warcinfo, err = warcFields([][2]string{
		{"software", software},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", warc11Spec},
	}); err != nil {
		return nil, fmt.Errorf("warc: exchange for %s: warcinfo %w", target, err)
	}
	return p, nil
}

// targetURI checks that raw is an absolute http(s) URL and percent-encodes
// every byte outside printable ASCII, so the result is a URI as WARC
// requires while staying the same resource.
func targetURI(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("warc: exchange has no TargetURI")
	}
	s := encodeNonASCII(raw)
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("warc: TargetURI %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("warc: TargetURI %q is not an absolute http or https URL", raw)
	}
	return s, nil
}

// writeHeader writes HTTP header fields sorted by name (http.Header is a
// map; sorting keeps the bytes reproducible), one "Name: value" line each,
// which is also the form independent readers re-serialise.
func writeHeader(b *bytes.Buffer, h http.Header) error {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !isToken(k) {
			return fmt.Errorf("header name %q is not an HTTP token", k)
		}
		for _, v := range h[k] {
			v = strings.TrimSpace(v)
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("header %s: value %q contains a line break or NUL", k, v)
			}
			fmt.Fprintf(b, "%s: %s\r\n", k, v)
		}
	}
	return nil
}

// warcFields renders an application/warc-fields block.
func warcFields(fields [][2]string) ([]byte, error) {
	var b bytes.Buffer
	for _, f := range fields {
		if !isToken(f[0]) {
			return nil, fmt.Errorf("field name %q is not a token (letters, digits, - _ .)", f[0])
		}
		v := strings.TrimSpace(f[1])
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("field %s: value contains a line break or NUL; write it on one line", f[0])
		}
		fmt.Fprintf(&b, "%s: %s\r\n", f[0], v)
	}
	return b.Bytes(), nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// mediaType is a Content-Type value without its parameters, lowercased.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// nameUUID is an RFC 9562 version 5 (name-based, SHA-1) UUID in the
// zhizhi WARC namespace, as a WARC-Record-ID.
func nameUUID(seed []byte, kind string) string {
	h := sha1.New()
	h.Write(recordNamespace[:])
	h.Write(seed)
	h.Write([]byte{0})
	h.Write([]byte(kind))
	s := h.Sum(nil)[:16]
	s[6] = s[6]&0x0f | 0x50
	s[8] = s[8]&0x3f | 0x80
	x := hex.EncodeToString(s)
	return "<urn:uuid:" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:] + ">"
}

// recordNamespace is a fixed random UUID that scopes zhizhi's record IDs.
var recordNamespace = [16]byte{0x6b, 0x1f, 0x3a, 0x52, 0x9e, 0x0d, 0x4c, 0x71, 0x8a, 0x25, 0xd3, 0x47, 0x10, 0xe8, 0x96, 0xbc}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
