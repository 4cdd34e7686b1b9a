package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// member returns the decompressed bytes of the gzip member of rec.
func member(t testing.TB, file []byte, rec Record) []byte {
	t.Helper()
	z, err := gzip.NewReader(bytes.NewReader(file[rec.Offset : rec.Offset+rec.Length]))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replaceMember returns file with rec's gzip member replaced by a fresh
// gzip of data: a tampering that keeps the gzip layer valid, so only the
// WARC digests can catch it.
func replaceMember(t testing.TB, file []byte, rec Record, data []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	out := append([]byte{}, file[:rec.Offset]...)
	out = append(out, z.Bytes()...)
	return append(out, file[rec.Offset+rec.Length:]...)
}

func TestTamperedAndTruncatedWARCsAreReported(t *testing.T) {
	ex := exchanges(t)["gb18030"]
	var b bytes.Buffer
	recs, err := Write(&b, ex)
	if err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()
	resp := recs[1]
	dec := member(t, file, resp)

	// The body is the last thing before the record's closing CRLF CRLF;
	// flip one byte in its middle.
	bodyStart := len(dec) - 4 - len(ex.Body)
	if !bytes.Equal(dec[bodyStart:len(dec)-4], ex.Body) {
		t.Fatal("test setup: body not where expected in the response record")
	}
	flipped := append([]byte{}, dec...)
	flipped[bodyStart+len(ex.Body)/2] ^= 0x01

	// Half of the response record's gzip member, then nothing.
	truncated := file[:resp.Offset+resp.Length/2]

	// The file cut three bytes short: the last member loses its trailer.
	shortTail := file[:len(file)-3]
	meta := recs[3]

	// A byte changed inside the compressed stream itself.
	corrupt := append([]byte{}, file...)
	corrupt[resp.Offset+resp.Length/2] ^= 0xff

	tests := []struct {
		name     string
		file     []byte
		at       Record // the record the damage is in
		wantID   string
		wantWhat []string // Verify's error must say each of these
		warcio   []string // and warcio's report, these
	}{
		{
			name:     "one body byte flipped and recompressed",
			file:     replaceMember(t, file, resp, flipped),
			at:       resp,
			wantID:   resp.ID,
			wantWhat: []string{"WARC-Block-Digest", "changed"},
			warcio:   []string{resp.ID, "WARC-Block-Digest", "WARC-Payload-Digest"},
		},
		{
			name:     "truncated inside the response",
			file:     truncated,
			at:       resp,
			wantWhat: []string{"truncated"},
			// warcio cannot read the cut record's header, so it can only
			// say where the readable records end: at the response.
			warcio: []string{"offset " + strconv.FormatInt(resp.Offset, 10) + " is not a readable record"},
		},
		{
			name:     "last three bytes cut off",
			file:     shortTail,
			at:       meta,
			wantID:   meta.ID,
			wantWhat: []string{"truncated"},
			warcio:   []string{"offset " + strconv.FormatInt(meta.Offset, 10)},
		},
		{
			name:     "compressed byte flipped",
			file:     corrupt,
			at:       resp,
			wantWhat: []string{"gzip member damaged"},
		},
	}
	dir := t.TempDir()
	var paths []string
	var expect [][]string
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Verify(bytes.NewReader(tt.file))
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify error %v, want a *VerifyError", err)
			}
			t.Logf("Verify: %v", err)
			if ve.Offset != tt.at.Offset {
				t.Errorf("error at offset %d, the damaged %s record starts at %d", ve.Offset, tt.at.Type, tt.at.Offset)
			}
			if tt.wantID != "" && ve.ID != tt.wantID {
				t.Errorf("error names record %q, want the %s %q", ve.ID, tt.at.Type, tt.wantID)
			}
			for _, w := range tt.wantWhat {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, r := range got {
				if r.Offset >= tt.at.Offset {
					t.Errorf("Verify returned the %s record at %d as good, at or after the damage", r.Type, r.Offset)
				}
			}
			if tt.warcio == nil {
				return
			}
			path := filepath.Join(dir, "t"+strconv.Itoa(i)+".warc.gz")
			if err := os.WriteFile(path, tt.file, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
			expect = append(expect, tt.warcio)
		})
	}

	// warcio.js reads every damaged file (one node process for all).
	for i, c := range warcioRead(t, paths...) {
		t.Run(filepath.Base(paths[i])+" with warcio", func(t *testing.T) {
			report := c.Error + "\n" + strings.Join(c.Problems, "\n")
			t.Logf("warcio: %s", report)
			if c.Error == "" && len(c.Problems) == 0 {
				t.Fatal("warcio read the damaged file without a problem")
			}
			for _, w := range expect[i] {
				if !strings.Contains(report, w) {
					t.Errorf("warcio's report does not mention %q:\n%s", w, report)
				}
			}
		})
	}
}

func TestVerifyNamesDamagedMetadata(t *testing.T) {
	ex := exchanges(t)["utf8"]
	var b bytes.Buffer
	recs, err := Write(&b, ex)
	if err != nil {
		t.Fatal(err)
	}
	meta := recs[3]
	dec := member(t, b.Bytes(), meta)
	changed := bytes.Replace(dec, []byte("rights: "), []byte("rightz: "), 1)
	if bytes.Equal(changed, dec) {
		t.Fatal("test setup: no rights field in the metadata record")
	}
	_, err = Verify(bytes.NewReader(replaceMember(t, b.Bytes(), meta, changed)))
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.ID != meta.ID || ve.Type != "metadata" {
		t.Fatalf("Verify error %v, want one naming the metadata record %s", err, meta.ID)
	}
}

func TestVerifyRejectsWhatIsNotAGzipWARC(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain text", "hello, not a WARC\n", "not the start of a gzip member"},
		{"uncompressed WARC", "WARC/1.1\r\nWARC-Type: warcinfo\r\n\r\n", "not the start of a gzip member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Verify error %v, want %q", err, tt.want)
			}
		})
	}
	recs, err := Verify(strings.NewReader(""))
	if err != nil || len(recs) != 0 {
		t.Errorf("an empty file verified as %d records, %v; want none and no error", len(recs), err)
	}
}
