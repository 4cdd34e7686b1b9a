package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// VerifyError says which record of a WARC file failed verification and why.
type VerifyError struct {
	Offset int64  // where the record's gzip member starts
	ID     string // WARC-Record-ID when it could be read, else ""
	Type   string // WARC-Type when it could be read
	Reason string
}

func (e *VerifyError) Error() string {
	id := e.ID
	if id == "" {
		id = "(record ID unreadable)"
	}
	if e.Type != "" {
		return fmt.Sprintf("warc: record %s (%s) at offset %d: %s", id, e.Type, e.Offset, e.Reason)
	}
	return fmt.Sprintf("warc: record %s at offset %d: %s", id, e.Offset, e.Reason)
}

// Verify reads a gzip-per-record WARC to its end and checks every record:
// the gzip member is whole, the header is valid WARC 1.0/1.1 (parsed by
// gowarc), Content-Length matches the block, the record ends with its
// two CRLFs, and WARC-Block-Digest and WARC-Payload-Digest (sha1, sha256,
// sha512 or md5 in hex, base32 or base64) match the bytes. The first
// failure is returned as a *VerifyError naming the record; the records
// read before it are returned with it.
func Verify(r io.Reader) ([]Record, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	var zr *gzip.Reader
	var out []Record
	for {
		offset := cr.n - int64(br.Buffered())
		magic, err := br.Peek(2)
		if errors.Is(err, io.EOF) && len(magic) == 0 {
			return out, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("warc: read at offset %d: %w", offset, err)
		}
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			return out, &VerifyError{Offset: offset, Reason: "not the start of a gzip member; a zhizhi WARC holds one gzip member per record, and this file is damaged or not one"}
		}
		if zr == nil {
			zr, err = gzip.NewReader(br)
		} else {
			err = zr.Reset(br)
		}
		if err != nil {
			return out, &VerifyError{Offset: offset, Reason: "gzip header: " + err.Error()}
		}
		zr.Multistream(false)
		data, gzErr := io.ReadAll(zr)
		end := cr.n - int64(br.Buffered())
		rec, err := checkRecord(data, offset)
		if gzErr != nil {
			// A damaged or truncated member: name the record if its
			// header survived, and say what happened to the member.
			ve := &VerifyError{Offset: offset, Reason: "gzip member damaged or truncated: " + gzErr.Error()}
			if rec != nil {
				ve.ID, ve.Type = rec.ID, rec.Type
			} else if id, typ := headerHint(data); id != "" {
				ve.ID, ve.Type = id, typ
			}
			return out, ve
		}
		if err != nil {
			return out, err
		}
		rec.Length = end - offset
		out = append(out, *rec)
	}
}

// checkRecord parses one decompressed member. It returns the record (with
// what could be read) and an error when the member fails a check.
func checkRecord(data []byte, offset int64) (*Record, error) {
	fail := func(rec *Record, format string, args ...any) error {
		ve := &VerifyError{Offset: offset, Reason: fmt.Sprintf(format, args...)}
		if rec != nil {
			ve.ID, ve.Type = rec.ID, rec.Type
		}
		return ve
	}
	headerEnd := bytes.Index(data, []byte("\r\n\r\n"))
	if headerEnd < 0 {
		id, typ := headerHint(data)
		return nil, &VerifyError{Offset: offset, ID: id, Type: typ, Reason: "WARC header has no end (no empty line)"}
	}
	headerEnd += 4

	f := headerFields(data[:headerEnd])
	rec := &Record{
		Type:          f["warc-type"],
		ID:            f["warc-record-id"],
		Offset:        offset,
		TargetURI:     f["warc-target-uri"],
		BlockDigest:   f["warc-block-digest"],
		PayloadDigest: f["warc-payload-digest"],
		MIME:          f["content-type"],
	}
	if !bytes.HasPrefix(data, []byte("WARC/1.1\r\n")) && !bytes.HasPrefix(data, []byte("WARC/1.0\r\n")) {
		first, _, _ := bytes.Cut(data, []byte("\r\n"))
		return rec, fail(rec, "first line %q is not WARC/1.1 or WARC/1.0", clip(string(first)))
	}
	if d, err := time.Parse(time.RFC3339Nano, f["warc-date"]); err == nil {
		rec.Date = d.UTC()
	} else {
		return rec, fail(rec, "WARC-Date %q is not a W3C/ISO 8601 date", f["warc-date"])
	}
	cl, err := strconv.ParseInt(f["content-length"], 10, 64)
	if err != nil || cl < 0 {
		return rec, fail(rec, "Content-Length %q is not a byte count", f["content-length"])
	}
	rest := data[headerEnd:]
	if int64(len(rest)) < cl {
		return rec, fail(rec, "block is %d bytes, Content-Length says %d: the record is truncated", len(rest), cl)
	}
	block, tail := rest[:cl], rest[cl:]
	if !bytes.Equal(tail, []byte("\r\n\r\n")) {
		if len(tail) > 4 && bytes.HasPrefix(tail, []byte("\r\n\r\n")) {
			return rec, fail(rec, "%d bytes follow the record inside its gzip member; one member must hold one record", len(tail)-4)
		}
		return rec, fail(rec, "block does not end where Content-Length %d says (the record's closing CRLF CRLF is missing): the block was changed or the length is wrong", cl)
	}

	var payload []byte
	isHTTP := strings.HasPrefix(strings.ToLower(rec.MIME), "application/http")
	if isHTTP {
		i := bytes.Index(block, []byte("\r\n\r\n"))
		if i < 0 {
			return rec, fail(rec, "HTTP header in the block has no end (no empty line)")
		}
		head := block[:i]
		payload = block[i+4:]
		statusLine, _, _ := bytes.Cut(head, []byte("\r\n"))
		if rec.Type == "response" {
			rec.Status, rec.MIME = parseResponseHead(head)
			if rec.Status == 0 {
				return rec, fail(rec, "HTTP status line %q has no status code", statusLine)
			}
		} else {
			_, rec.MIME = parseResponseHead(head)
		}
	} else {
		payload = block
	}

	if rec.BlockDigest != "" {
		if err := checkDigest(rec.BlockDigest, block); err != nil {
			return rec, fail(rec, "WARC-Block-Digest: %v", err)
		}
	}
	if rec.PayloadDigest != "" && rec.Type != "revisit" {
		if err := checkDigest(rec.PayloadDigest, payload); err != nil {
			return rec, fail(rec, "WARC-Payload-Digest: %v", err)
		}
	}

	// The bytes are what was written; gowarc then checks the header
	// against the WARC specification (required fields, field syntax,
	// dates, URIs, IDs).
	u := gowarc.NewUnmarshaler(
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
		gowarc.WithSpecViolationPolicy(gowarc.ErrFail),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail),
		gowarc.WithSkipParseBlock(),
		// The member is in memory already; without this gowarc copies a
		// block over 1 MiB into a temporary file.
		gowarc.WithBufferMaxMemBytes(int64(len(data))+1),
	)
	wr, _, _, err := u.Unmarshal(bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		return rec, fail(rec, "WARC header breaks the specification: %v", err)
	}
	wr.Close()
	return rec, nil
}

// headerFields reads "Name: value" lines into a map keyed by lowercase
// name (the first occurrence wins).
func headerFields(head []byte) map[string]string {
	f := map[string]string{}
	for _, l := range strings.Split(string(head), "\r\n") {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k := strings.ToLower(strings.TrimSpace(name))
		if _, dup := f[k]; !dup {
			f[k] = strings.TrimSpace(value)
		}
	}
	return f
}

// parseResponseHead reads the status code and the media type of the
// Content-Type field from an HTTP message head.
func parseResponseHead(head []byte) (status int, mime string) {
	lines := strings.Split(string(head), "\r\n")
	if f := strings.Fields(lines[0]); len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") {
		if n, err := strconv.Atoi(f[1]); err == nil && n >= 100 && n <= 999 {
			status = n
		}
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Type") {
			mime = mediaType(strings.TrimSpace(value))
			break
		}
	}
	return status, mime
}

// headerHint pulls WARC-Record-ID and WARC-Type out of a header that may be
// damaged, so an error can still name the record.
func headerHint(data []byte) (id, typ string) {
	head := data
	if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
		head = data[:i]
	}
	f := headerFields(head)
	return f["warc-record-id"], f["warc-type"]
}

// checkDigest compares a "algorithm:value" digest field with the digest of b.
func checkDigest(field string, b []byte) error {
	algo, value, ok := strings.Cut(field, ":")
	if !ok || value == "" {
		return fmt.Errorf("%q is not algorithm:value", field)
	}
	var h hash.Hash
	switch strings.ToLower(strings.ReplaceAll(algo, "-", "")) {
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	case "md5":
		h = md5.New()
	default:
		return fmt.Errorf("algorithm %q is not one of sha1, sha256, sha512, md5", algo)
	}
	h.Write(b)
	sum := h.Sum(nil)
	want, err := decodeDigest(value, len(sum))
	if err != nil {
		return fmt.Errorf("%q: %v", field, err)
	}
	if !bytes.Equal(want, sum) {
		return fmt.Errorf("recorded %s, computed %s:%s over %d bytes: the content was changed after it was written", field, algo, formatLike(value, sum), len(b))
	}
	return nil
}

// decodeDigest accepts hex, base32 (padded or not) and base64 values, the
// encodings WARC writers use, told apart by length.
func decodeDigest(v string, size int) ([]byte, error) {
	if len(v) == hex.EncodedLen(size) {
		if b, err := hex.DecodeString(v); err == nil {
			return b, nil
		}
	}
	b32 := strings.ToUpper(strings.TrimRight(v, "="))
	if len(b32) == base32.StdEncoding.WithPadding(base32.NoPadding).EncodedLen(size) {
		if b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(b32); err == nil {
			return b, nil
		}
	}
	b64 := strings.TrimRight(v, "=")
	if len(b64) == base64.RawStdEncoding.EncodedLen(size) {
		if b, err := base64.RawStdEncoding.DecodeString(b64); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("value of %d characters is no hex, base32 or base64 digest of %d bytes", len(v), size)
}

// formatLike encodes sum the way the recorded value was encoded, so the
// two can be compared by eye.
func formatLike(recorded string, sum []byte) string {
	if len(recorded) == hex.EncodedLen(len(sum)) {
		return hex.EncodeToString(sum)
	}
	if strings.HasSuffix(recorded, "=") || len(recorded) == base32.StdEncoding.EncodedLen(len(sum)) {
		return base32.StdEncoding.EncodeToString(sum)
	}
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
