package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ToolLimits bound one run of an external tool (pdftotext, pdfimages,
// pdftoppm, tesseract). The zero value of a field means its default.
type ToolLimits struct {
	Timeout     time.Duration // wall time of one run
	MemoryBytes int64         // address space (prlimit --as)
	OutputBytes int64         // what it writes to stdout, and each file it writes (prlimit --fsize)
}

// DefaultToolLimits: a page of OCR takes a few seconds and about 200 MB;
// pdftotext of a long notice well under a second.
var DefaultToolLimits = ToolLimits{
	Timeout:     2 * time.Minute,
	MemoryBytes: 1 << 30,
	OutputBytes: 64 << 20,
}

func (l ToolLimits) withDefaults() ToolLimits {
	d := DefaultToolLimits
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.MemoryBytes > 0 {
		d.MemoryBytes = l.MemoryBytes
	}
	if l.OutputBytes > 0 {
		d.OutputBytes = l.OutputBytes
	}
	return d
}

// ToolRun is the evidence of one tool run, for a caller's execution record
// and the benchmark.
type ToolRun struct {
	Tool     string        `json:"tool"`
	Page     int           `json:"page,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	PeakRSS  int64         `json:"peak_rss_bytes"`
}

// limitedBuffer keeps at most max bytes. With onOver set, more is an
// error (and onOver stops the tool); without, the rest is dropped.
type limitedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	max    int64
	over   bool
	onOver func()
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(b.buf.Len()+len(p)) > b.max {
		if b.onOver == nil {
			// Diagnostics past the cap are dropped, not refused: a tool
			// must not die of a closed stderr.
			b.buf.Write(p[:max(0, int(b.max)-b.buf.Len())])
			return len(p), nil
		}
		if !b.over {
			b.over = true
			b.onOver()
		}
		return 0, errors.New("output over limit")
	}
	return b.buf.Write(p)
}

// runTool runs name with args under lim: prlimit caps its address space,
// file size and CPU time, a context its wall time, and a buffer its
// stdout. The process and anything it started are killed on any limit.
func runTool(ctx context.Context, lim ToolLimits, page int, env []string, name string, args ...string) ([]byte, ToolRun, error) {
	run := ToolRun{Tool: name, Page: page}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, run, failf(ErrToolMissing, "%s is not installed (scripts/ensure-deps.sh poppler ocr installs it)", name)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, run, failf(ErrToolMissing, "prlimit (util-linux) is not installed")
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cpu := int64(lim.Timeout/time.Second) + 1
	full := append([]string{
		fmt.Sprintf("--as=%d", lim.MemoryBytes),
		fmt.Sprintf("--fsize=%d", lim.OutputBytes),
		fmt.Sprintf("--cpu=%d", cpu),
		"--", path}, args...)
	cmd := exec.CommandContext(ctx, prlimit, full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + os.TempDir()}, env...)
	stdout := &limitedBuffer{max: lim.OutputBytes, onOver: cancel}
	stderr := &limitedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	if err = cmd.Start(); err != nil {
		return nil, run, fmt.Errorf("%s: %w", name, err)
	}
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() { peak <- watchPeak(cmd.Process.Pid, done) }()
	err = cmd.Wait()
	close(done)
	run.Duration = time.Since(start)
	run.PeakRSS = <-peak
	if err == nil {
		return stdout.buf.Bytes(), run, nil
	}
	msg := strings.TrimSpace(stderr.buf.String())
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	switch {
	case stdout.over:
		return nil, run, failf(ErrTooBig, "%s wrote more than %d bytes", name, lim.OutputBytes)
	case parent.Err() != nil:
		return nil, run, parent.Err()
	case ctx.Err() != nil:
		return nil, run, failf(ErrTooBig, "%s ran over %s", name, lim.Timeout)
	}
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// SIGKILL/SIGXCPU from the CPU limit, SIGXFSZ from the file
			// size limit, SIGSEGV/SIGABRT when an allocation failed
			// under the address-space limit.
			return nil, run, failf(ErrTooBig, "%s was stopped by %s (limits: %d bytes of memory, %d bytes per file, %d s of CPU)",
				name, ws.Signal(), lim.MemoryBytes, lim.OutputBytes, cpu)
		}
	}
	// Under the address-space limit a tool fails to map its libraries or
	// its allocations fail, and says so in one of these ways.
	if strings.Contains(msg, "alloc") || strings.Contains(msg, "memory") || strings.Contains(msg, "failed to map segment") {
		return nil, run, failf(ErrTooBig, "%s ran out of its %d bytes of memory: %s", name, lim.MemoryBytes, msg)
	}
	return nil, run, fmt.Errorf("%s: %w: %s", name, err, msg)
}

// watchPeak samples the process's peak resident memory (VmHWM, which only
// grows) until done. The rusage of a waited child would be simpler but
// is wrong here: Linux carries the parent's peak across fork and exec into
// the child's, so every tool would look as large as the Go process.
func watchPeak(pid int, done <-chan struct{}) int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var peak int64
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				var kb int64
				if _, err := fmt.Sscan(string(b[i+len("VmHWM:"):]), &kb); err == nil {
					peak = max(peak, kb*1024)
				}
			}
		}
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}
