package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"zhizhi/internal/store"
)

// freeLoopbackPort returns a loopback port nothing listens on.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOpenErrors: each bad setting is one readable message that names the
// setting and what to do, and never the password.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	addr := freeLoopbackPort(t)
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dsn     string
		dataDir string
		want    []string
	}{
		{"unreachable PostgreSQL", "postgres://zhizhi:s3cret-pw@" + addr + "/zhizhi?sslmode=disable", t.TempDir(),
			[]string{"open database: cannot reach PostgreSQL at " + addr, "ZHIZHI_DATABASE_URL", "connection refused", "start the server"}},
		{"malformed PostgreSQL URL", "postgres://zhizhi:s3cret-pw@127.0.0.1:notaport/db", t.TempDir(),
			[]string{"ZHIZHI_DATABASE_URL is not a valid PostgreSQL URL"}},
		{"unknown scheme", "mysql://root@127.0.0.1/zhizhi", t.TempDir(),
			[]string{"ZHIZHI_DATABASE_URL", `unsupported scheme "mysql"`}},
		{"data dir under a file", "sqlite://" + filepath.Join(t.TempDir(), "z.db"), filepath.Join(notADir, "data"),
			[]string{"cannot create data directory", "ZHIZHI_DATA_DIR"}},
		{"sqlite file under a file", "sqlite://" + filepath.Join(notADir, "z.db"), t.TempDir(),
			[]string{"SQLite", "ZHIZHI_DATABASE_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := store.Open(ctx, tt.dsn, tt.dataDir)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cret-pw") {
				t.Errorf("message %q shows the password", msg)
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("message spans lines: %q", msg)
			}
		})
	}
}

// TestOpenReadOnlyDataDir: a data directory we may not write to is refused
// at start. Root writes anywhere, so the test needs an ordinary user.
func TestOpenReadOnlyDataDir(t *testing.T) {
	if os.Geteuid() == 0 {
		// Permissions do not stop root, and make test runs as root: run
		// this test again as the unprivileged user nobody.
		rerunAsNobody(t, "TestOpenReadOnlyDataDir")
		return
	}
	base := os.Getenv("ZHIZHI_RO_BASE")
	if base == "" {
		base = t.TempDir()
	}
	dir := filepath.Join(base, "ro")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.Mkdir(dir, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	_, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "z.db"), dir)
	if err == nil || !strings.Contains(err.Error(), "data directory "+dir+" is not writable") || !strings.Contains(err.Error(), "ZHIZHI_DATA_DIR") {
		t.Fatalf("err = %v", err)
	}
}

// TestOpenSQLiteForms: the DSN forms the CLI produces all open, create the
// missing directories and report the dialect.
func TestOpenSQLiteForms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{
		"sqlite://" + filepath.Join(dir, "abs", "z.db"), // sqlite:///abs/…
		"sqlite://rel/z.db",
		filepath.Join(dir, "bare", "z.db"),
	} {
		s, err := store.Open(ctx, dsn, filepath.Join(dir, "data"))
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if s.Dialect() != store.DialectSQLite {
			t.Errorf("%s: dialect %s", dsn, s.Dialect())
		}
		var fk, timeout int
		var mode string
		db := s.DB()
		db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
		db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout)
		db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
		if fk != 1 || timeout != 5000 || mode != "wal" {
			t.Errorf("%s: foreign_keys=%d busy_timeout=%d journal_mode=%s", dsn, fk, timeout, mode)
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v < 1 {
			t.Errorf("%s: schema version %d, %v", dsn, v, err)
		}
		s.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "z.db")); err != nil {
		t.Errorf("relative sqlite path not under the working directory: %v", err)
	}
}

// TestBlobsWriteOnce: the same bytes give the same path and are stored
// once; a stored blob is never rewritten (only its time is refreshed); paths outside blobs/ are refused.
func TestBlobsWriteOnce(t *testing.T) {
	ctx := context.Background()
	b := store.Blobs{Dir: t.TempDir()}
	data := []byte("<html>通知</html>")
	p1, sum, err := b.Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	want := "blobs/" + sum[:2] + "/" + sum[2:4] + "/" + sum
	if p1 != want || sum != store.URLHash(string(data)) {
		t.Fatalf("Put = %s %s, want %s", p1, sum, want)
	}
	full := filepath.Join(b.Dir, filepath.FromSlash(p1))
	before, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := b.Put(ctx, data)
	if err != nil || p2 != p1 {
		t.Fatalf("second Put = %s, %v", p2, err)
	}
	after, _ := os.Stat(full)
	// The same file (a rewrite would rename a new one into place), its
	// modification time refreshed: gc spares a blob stored again lately.
	if !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Fatalf("second Put rewrote the blob")
	}
	if after.ModTime().Before(before.ModTime()) {
		t.Fatalf("second Put moved the blob's time back")
	}
	entries, _ := os.ReadDir(filepath.Dir(full))
	if len(entries) != 1 {
		t.Fatalf("%d files in the blob directory, want 1 (no temp files left)", len(entries))
	}
	r, err := b.Open(ctx, p1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("Open read %q", got)
	}
	for _, bad := range []string{"../etc/passwd", "blobs/../../x", "/etc/passwd"} {
		if _, err := b.Open(ctx, bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	if _, err := b.Open(ctx, "blobs/00/00/0000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing blob: err = %v", err)
	}
}

// rerunAsNobody runs one test of this binary again as the user nobody, in a
// directory root prepared: base/ro is read-only to nobody. The child's
// failure is this test's failure.
func rerunAsNobody(t *testing.T, name string) {
	t.Helper()
	base, err := os.MkdirTemp("", "zhizhi-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	// The test binary may sit in a directory nobody cannot enter.
	bin := filepath.Join(base, "store.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), "ZHIZHI_RO_BASE="+base, "TMPDIR="+tmp, "HOME="+tmp)
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody did not pass:\n%s", name, out)
	}
}

// TestBlobsGC: gc removes what no row refers to once it is older than the
// grace period, and the leftovers of interrupted writes; it keeps what a
// row refers to and what is younger (a running crawl's fresh files).
func TestBlobsGC(t *testing.T) {
	ctx := context.Background()
	b := store.Blobs{Dir: t.TempDir()}
	put := func(s string) string {
		p, _, err := b.Put(ctx, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	used, old, young := put("referenced"), put("orphan, old"), put("orphan, fresh")
	hour := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{used, old} {
		if err := os.Chtimes(filepath.Join(b.Dir, filepath.FromSlash(p)), hour, hour); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(b.Dir, filepath.FromSlash(path.Dir(old)), ".tmp-deadbeef-1")
	if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, hour, hour); err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{used: true}
	cutoff := time.Now().Add(-time.Hour)

	dry, err := b.GC(ctx, refs, cutoff, true)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Removed != 1 || dry.Temporary != 1 || dry.Kept != 1 || dry.Young != 1 {
		t.Fatalf("dry run: %+v, want 1 removed, 1 temporary, 1 kept, 1 young", dry)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, filepath.FromSlash(old))); err != nil {
		t.Fatalf("dry run removed a file: %v", err)
	}
	res, err := b.GC(ctx, refs, cutoff, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 1 || len(res.RemovedPaths) != 1 || res.RemovedPaths[0] != old {
		t.Fatalf("gc: %+v, want %s removed", res, old)
	}
	for p, want := range map[string]bool{used: true, young: true, old: false, tmp: false} {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(b.Dir, filepath.FromSlash(p))
		}
		_, err := os.Stat(full)
		if (err == nil) != want {
			t.Errorf("%s: present %v, want %v", p, err == nil, want)
		}
	}
	// Storing an old orphan again makes it fresh: gc spares it for the row
	// about to refer to it.
	again := put("orphan, old")
	if res, err := b.GC(ctx, refs, cutoff, false); err != nil || res.Removed != 0 {
		t.Fatalf("gc after the blob was stored again: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, filepath.FromSlash(again))); err != nil {
		t.Fatal(err)
	}
}
