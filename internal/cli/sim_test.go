package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"zhizhi/internal/sim"
)

// TestSimCommand runs the real binary as an operator does: `zhizhi sim`
// prints where the simulated web listens, serves the control endpoints, and
// stops cleanly on Ctrl-C (SIGINT).
func TestSimCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// The shared build, outside the safety net below: on a busy machine a
	// build can take minutes.
	bin := zhizhiBinary(t)
	// The timeout is only a safety net so a hung child can't hang the
	// test run; nothing here measures time.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p := startSim(ctx, t, bin, nil, "sim", "--seed", "1", "--fixed-clock")
	resolve, control := p.resolve, p.control

	cu, err := url.Parse(control)
	if err != nil || cu.Scheme != "http" {
		t.Fatalf("control URL %q", control)
	}
	if ip := net.ParseIP(cu.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("control URL %q is not on loopback", control)
	}
	hosts := map[string]string{}
	for _, pair := range strings.Split(resolve, ",") {
		host, addr, ok := strings.Cut(pair, "=")
		if !ok {
			t.Fatalf("resolve map entry %q is not host=addr", pair)
		}
		hosts[host] = addr
	}
	for _, h := range []string{sim.ControlHost, "www.qingyuan.gov.test", "www.lianzhou.gov.test", "www.gd.gov.test", "www.gov.test"} {
		if hosts[h] == "" {
			t.Errorf("resolve map lacks %s: %s", h, resolve)
		}
	}
	if hosts[sim.ControlHost] != cu.Host {
		t.Errorf("control host maps to %s, control URL is %s", hosts[sim.ControlHost], control)
	}

	client := &http.Client{Timeout: 30 * time.Second}
	var res struct {
		Hosts   map[string]string `json:"hosts"`
		Resolve string            `json:"resolve"`
	}
	getJSON(ctx, t, client, control+"/__sim/resolve", &res)
	if res.Resolve != resolve {
		t.Errorf("/__sim/resolve says %q, stdout said %q", res.Resolve, resolve)
	}
	if len(res.Hosts) != len(hosts) {
		t.Errorf("/__sim/resolve lists %d hosts, stdout %d", len(res.Hosts), len(hosts))
	}

	var truth []sim.TruthArticle
	getJSON(ctx, t, client, control+"/__sim/truth", &truth)
	// --seed reaches the world: the child serves the same articles as an
	// in-process world of seed 1.
	w, err := sim.Start(ctx, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := w.Truth()
	w.Close()
	if len(truth) != len(want) {
		t.Fatalf("/__sim/truth has %d articles, seed 1 has %d", len(truth), len(want))
	}
	for i := range want {
		if truth[i].URL != want[i].URL || truth[i].Title != want[i].Title {
			t.Errorf("article %d = %s %q, seed 1 has %s %q", i, truth[i].URL, truth[i].Title, want[i].URL, want[i].Title)
			break
		}
	}

	if err := p.interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	// Stopped means stopped: the control port no longer answers.
	if resp, err := client.Get(control + "/__sim/resolve"); err == nil {
		resp.Body.Close()
		t.Errorf("control URL still answers after exit: %s", resp.Status)
	}
}

// simProcess is a `zhizhi sim` child that has printed where it listens.
type simProcess struct {
	cmd     *exec.Cmd
	exited  chan error
	stderr  *strings.Builder
	stopped bool
	// printed is stdout up to and including the control line.
	printed []string
	resolve string // the ZHIZHI_RESOLVE value it printed
	control string // its control URL, without /__sim/…
}

// startSim starts bin with args (its environment without any ZHIZHI_
// setting but env: ZHIZHI_LISTEN would pin the ports) and waits until it
// has printed the resolve map and the control URL. The child is killed
// when the test ends unless interrupt stopped it.
func startSim(ctx context.Context, t testing.TB, bin string, env []string, args ...string) *simProcess {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_") }), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &simProcess{cmd: cmd, exited: make(chan error, 1), stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start zhizhi %v: %v", args, err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if !p.stopped {
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20) // the resolve line of 200 counties
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for p.resolve == "" || p.control == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("zhizhi %v closed stdout before printing the resolve map and control URL:\n%s\nstderr:\n%s",
					args, strings.Join(p.printed, "\n"), p.stderr.String())
			}
			p.printed = append(p.printed, line)
			if v, ok := strings.CutPrefix(line, "export ZHIZHI_RESOLVE="); ok {
				p.resolve = v
			}
			if v, ok := strings.CutPrefix(line, "control: "); ok {
				p.control, _, _ = strings.Cut(v, "/__sim/")
			}
		case <-ctx.Done():
			t.Fatalf("no resolve map and control URL printed:\n%s", strings.Join(p.printed, "\n"))
		}
	}
	go func() {
		for range lines { // keep the pipe drained so the child never blocks
		}
	}()
	return p
}

// interrupt stops the child with SIGINT, as Ctrl-C does, and says what
// was wrong if it did not exit 0.
func (p *simProcess) interrupt(ctx context.Context) error {
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		return fmt.Errorf("send SIGINT: %w", err)
	}
	select {
	case err := <-p.exited:
		p.stopped = true
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("zhizhi sim exited with %v after SIGINT; stderr:\n%s", ee, p.stderr.String())
		}
		if err != nil {
			return fmt.Errorf("wait for zhizhi sim: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("zhizhi sim still running after SIGINT; stderr:\n%s", p.stderr.String())
	}
}

func getJSON(ctx context.Context, t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", u, fmt.Errorf("decode json: %w", err))
	}
}
