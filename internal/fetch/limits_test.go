package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// bombMember is one gzip member holding 1 MiB of zeros (about 1 KiB
// compressed). gzip readers read concatenated members as one stream, so
// repeating it 1024 times makes a 1 GiB bomb from 1 MiB of wire bytes,
// without the server compressing anything per request.
func bombMember(tb testing.TB) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// repeatReader yields b n times without allocating the whole.
type repeatReader struct {
	b   []byte
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.b[r.off:])
	r.off += k
	if r.off == len(r.b) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

// limitsServer serves the fault cases over loopback, reached through the
// resolve map like any simulated host.
func limitsServer(t testing.TB) (*Guard, *atomic.Int32) {
	t.Helper()
	member := bombMember(t)
	release := make(chan struct{})
	var loopHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		for i := 0; i < 1024; i++ { // 1 GiB once inflated
			if _, err := w.Write(member); err != nil {
				return // the client stopped reading, as it should
			}
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("length") != "" {
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
		}
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for i := 0; i < (50<<20)/len(chunk); i++ { // 50 MB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		loopHits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/hang-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/encoded", func(w http.ResponseWriter, r *http.Request) {
		body := []byte(strings.Repeat("政务公开 ", 1000))
		var buf bytes.Buffer
		enc := r.URL.Query().Get("ce")
		var zw io.WriteCloser
		switch enc {
		case "gzip":
			zw = gzip.NewWriter(&buf)
		case "deflate":
			zw = zlib.NewWriter(&buf)
		case "rawdeflate":
			zw, _ = flate.NewWriter(&buf, flate.DefaultCompression)
			enc = "deflate"
		case "br":
			zw = brotli.NewWriter(&buf)
		case "br,gzip":
			g := gzip.NewWriter(&buf)
			b := brotli.NewWriter(g)
			b.Write(body)
			b.Close()
			g.Close()
			enc = "br, gzip" // brotli applied first, then gzip
		default:
			enc = ""
		}
		if zw != nil {
			zw.Write(body)
			zw.Close()
		} else if enc == "" {
			buf.Write(body)
		}
		if enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		w.Write(buf.Bytes())
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 1000))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return &Guard{
		Resolve:  ResolveMap{"www.a.gov.test": srv.Listener.Addr().String()},
		LookupIP: fakeDNS(t, nil),
		Dial:     loopbackOnlyDial(t, nil),
	}, &loopHits
}

func get(t testing.TB, g *Guard, ctx context.Context, path string, l Limits) (*Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://www.a.gov.test"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g.Do(ctx, g.NewClient(l), req, l)
}

func TestLimitsBreaches(t *testing.T) {
	g, loopHits := limitsServer(t)
	l := Limits{MaxRawBytes: 10 << 20, MaxDecompressedBytes: 8 << 20, RequestTimeout: 5 * time.Second}

	t.Run("gzip bomb stops at the decompressed limit", func(t *testing.T) {
		resp, err := get(t, g, context.Background(), "/bomb", l)
		var tl *ErrTooLarge
		if !errors.As(err, &tl) || tl.Kind != "decompressed" || tl.Limit != 8<<20 {
			t.Fatalf("err = %v (%+v), want ErrTooLarge decompressed 8 MiB", err, resp)
		}
	})
	t.Run("50 MB body stops at the raw limit", func(t *testing.T) {
		_, err := get(t, g, context.Background(), "/huge", Limits{MaxRawBytes: 10 << 20, MaxDecompressedBytes: 100 << 20})
		var tl *ErrTooLarge
		if !errors.As(err, &tl) || tl.Kind != "raw" || tl.Limit != 10<<20 {
			t.Fatalf("err = %v, want ErrTooLarge raw 10 MiB", err)
		}
	})
	t.Run("declared 50 MB body is refused before reading", func(t *testing.T) {
		_, err := get(t, g, context.Background(), "/huge?length=1", l)
		var tl *ErrTooLarge
		if !errors.As(err, &tl) || tl.Kind != "raw" {
			t.Fatalf("err = %v, want ErrTooLarge raw", err)
		}
	})
	t.Run("redirect loop stops after 5", func(t *testing.T) {
		loopHits.Store(0)
		_, err := get(t, g, context.Background(), "/loop", Limits{MaxRedirects: 50})
		if !errors.Is(err, ErrTooManyRedirects) {
			t.Fatalf("err = %v, want ErrTooManyRedirects", err)
		}
		// The first request and 5 redirects followed; a configured 50 is
		// clamped to 5.
		if n := loopHits.Load(); n != 6 {
			t.Errorf("server saw %d requests, want 6", n)
		}
	})
	t.Run("hanging server ends at the request timeout", func(t *testing.T) {
		_, err := get(t, g, context.Background(), "/hang", Limits{RequestTimeout: 100 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	})
	t.Run("body that stops flowing ends at the request timeout", func(t *testing.T) {
		_, err := get(t, g, context.Background(), "/hang-body", Limits{RequestTimeout: 100 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	})
	t.Run("overall deadline from the context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := get(t, g, ctx, "/hang", Limits{RequestTimeout: time.Hour})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	})
	t.Run("body exactly at the limit passes", func(t *testing.T) {
		resp, err := get(t, g, context.Background(), "/exact", Limits{MaxRawBytes: 1000, MaxDecompressedBytes: 1000})
		if err != nil || len(resp.Body) != 1000 || resp.WireBytes != 1000 {
			t.Fatalf("err = %v, resp = %+v", err, resp)
		}
		_, err = get(t, g, context.Background(), "/exact", Limits{MaxRawBytes: 999})
		var tl *ErrTooLarge
		if !errors.As(err, &tl) || tl.Kind != "raw" {
			t.Fatalf("one byte over: err = %v", err)
		}
	})
	t.Run("head read truncates quietly", func(t *testing.T) {
		resp, err := get(t, g, context.Background(), "/huge", Limits{MaxRawBytes: 10 << 20, TruncateAt: 64 << 10})
		if err != nil || !resp.Truncated || len(resp.Body) != 64<<10 {
			t.Fatalf("err = %v, truncated %v, len %d", err, resp != nil && resp.Truncated, len(resp.Body))
		}
	})
}

func TestContentEncodings(t *testing.T) {
	g, _ := limitsServer(t)
	want := strings.Repeat("政务公开 ", 1000)
	for _, ce := range []string{"", "gzip", "deflate", "rawdeflate", "br", "br,gzip"} {
		t.Run("ce="+ce, func(t *testing.T) {
			resp, err := get(t, g, context.Background(), "/encoded?ce="+ce, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != want {
				t.Errorf("decoded body differs (%d bytes)", len(resp.Body))
			}
			if ce != "" && resp.WireBytes >= int64(len(want)) {
				t.Errorf("WireBytes = %d, want the compressed size", resp.WireBytes)
			}
		})
	}
	resp := &http.Response{Header: http.Header{"Content-Encoding": {"compress"}}, Body: io.NopCloser(strings.NewReader("x"))}
	if _, err := DecodeBody(resp, DefaultLimits); err == nil {
		t.Error("unsupported content-encoding accepted")
	}
}

func BenchmarkGzipBomb(b *testing.B) {
	member := bombMember(b)
	l := Limits{MaxRawBytes: 20 << 20, MaxDecompressedBytes: 8 << 20}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		resp := &http.Response{
			ContentLength: -1,
			Header:        http.Header{"Content-Encoding": {"gzip"}},
			Body:          io.NopCloser(&repeatReader{b: member, n: 1024}), // 1 GiB inflated
		}
		body, err := DecodeBody(resp, l)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.ReadAll(body)
		var tl *ErrTooLarge
		if !errors.As(err, &tl) {
			b.Fatalf("err = %v", err)
		}
		body.Close()
	}
}
