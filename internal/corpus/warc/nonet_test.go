package warc

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// childEnv makes the test binary, run again under strace, do the work of
// this package instead of its tests.
const childEnv = "ZHIZHI_WARC_NONET_CHILD"

// TestNoNetwork runs Write, Verify, the CDX functions and WriteWACZ in a
// child process under `strace -f -e trace=network` and fails if any of
// them opens a socket (gowarc's default file namer dials UDP to a public
// resolver; this package must never reach that code). A control child
// that dials UDP the same way proves the trace would see it.
func TestNoNetwork(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "work":
		archiveEverything(t)
		return
	case "dial":
		// What gowarc's outbound-IP lookup does: a UDP "connection" sends
		// nothing, but it is a socket and a connect call.
		c, err := net.Dial("udp", "192.0.2.1:53")
		if err == nil {
			c.Close()
		}
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed; the no-network check needs it")
	}
	trace := func(mode string) string {
		out := filepath.Join(t.TempDir(), "trace")
		cmd := exec.CommandContext(t.Context(), strace, "-f", "-qq", "-e", "trace=network", "-e", "signal=none", "-o", out,
			os.Args[0], "-test.run=^TestNoNetwork$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+mode)
		msg, err := cmd.CombinedOutput()
		if err != nil {
			if bytes.Contains(msg, []byte("ptrace")) {
				t.Skipf("strace cannot trace here: %s", msg)
			}
			t.Fatalf("child (%s) under strace: %v\n%s", mode, err, msg)
		}
		if !bytes.Contains(msg, []byte("--- PASS: TestNoNetwork")) {
			t.Fatalf("child (%s) did not run the work:\n%s", mode, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if tr := trace("dial"); !strings.Contains(tr, "socket(") || !strings.Contains(tr, "connect(") {
		t.Fatalf("control: strace did not see the UDP dial; the check would prove nothing. Trace:\n%s", tr)
	}
	if calls := networkCalls(trace("work")); len(calls) > 0 {
		t.Errorf("writing, verifying, indexing and packaging made network system calls:\n%s", strings.Join(calls, "\n"))
	}
}

// networkCalls are the lines of an strace trace that record a system
// call. strace also writes lines of its own about the threads it follows
// (a thread it lost track of on a loaded machine shows as
// "<pid> ???( <detached ...>"): those are no calls.
func networkCalls(trace string) []string {
	var out []string
	for _, l := range strings.Split(trace, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		name, _, ok := strings.Cut(f[1], "(")
		if !ok || name == "???" || name == "" {
			continue
		}
		out = append(out, l)
	}
	return out
}

// archiveEverything exercises every entry point of the package.
func archiveEverything(t *testing.T) {
	dir := t.TempDir()
	in, _ := waczInput(t, dir)
	var entries []CDXEntry
	for _, w := range in.WARCs {
		rc, err := w.Open()
		if err != nil {
			t.Fatal(err)
		}
		recs, err := Verify(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Type == "response" {
				entries = append(entries, NewCDXEntry(r, w.Name))
			}
		}
	}
	got, err := Query(entries, CDXQuery{URL: "*.gov.cn"})
	if err != nil || len(got) != len(in.WARCs) {
		t.Fatalf("Query: %d entries, %v", len(got), err)
	}
	if err := WriteCDXServer(io.Discard, got, "json"); err != nil {
		t.Fatal(err)
	}
	if err := WriteWACZ(io.Discard, in); err != nil {
		t.Fatal(err)
	}
}

// TestNoGowarcFileWriter keeps gowarc's file writer, whose default namer
// dials UDP, out of the package even where strace is missing.
func TestNoGowarcFileWriter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"NewWarcFileWriter", "PatternNameGenerator", "WithFileNameGenerator"} {
			if bytes.Contains(b, []byte(banned)) {
				t.Errorf("%s uses gowarc's %s; write records with the Marshaler to an io.Writer instead", f, banned)
			}
		}
	}
}
