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

	cmd := exec.CommandContext(ctx, bin, "sim", "--seed", "1")
	// ZHIZHI_LISTEN would pin the ports; the test wants free ones.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ZHIZHI_LISTEN=") })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start zhizhi sim: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var resolve, control string
	var printed []string
	for resolve == "" || control == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("zhizhi sim closed stdout before printing the resolve map and control URL:\n%s\nstderr:\n%s",
					strings.Join(printed, "\n"), stderr.String())
			}
			printed = append(printed, line)
			if v, ok := strings.CutPrefix(line, "export ZHIZHI_RESOLVE="); ok {
				resolve = v
			}
			if v, ok := strings.CutPrefix(line, "control: "); ok {
				control, _, _ = strings.Cut(v, "/__sim/")
			}
		case <-ctx.Done():
			t.Fatalf("no resolve map and control URL printed:\n%s", strings.Join(printed, "\n"))
		}
	}
	go func() {
		for range lines { // keep the pipe drained so the child never blocks
		}
	}()

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

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("send SIGINT: %v", err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Errorf("zhizhi sim exited with %v after SIGINT; stderr:\n%s", ee, stderr.String())
			} else {
				t.Errorf("wait for zhizhi sim: %v", err)
			}
		}
	case <-ctx.Done():
		t.Fatalf("zhizhi sim still running after SIGINT; stderr:\n%s", stderr.String())
	}
	// Stopped means stopped: the control port no longer answers.
	if resp, err := client.Get(control + "/__sim/resolve"); err == nil {
		resp.Body.Close()
		t.Errorf("control URL still answers after exit: %s", resp.Status)
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
