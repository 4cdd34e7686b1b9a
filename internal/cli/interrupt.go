package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// drainGrace is how long in-flight requests may go on after the first
// SIGINT/SIGTERM before they are abandoned.
const drainGrace = 10 * time.Second

// exitInterrupted is the status of a run stopped by SIGINT or SIGTERM, the
// shell's own number for a Ctrl-C.
const exitInterrupted = 130

// interrupt turns SIGINT and SIGTERM into a graceful stop: the first closes
// Drain (no new work) and cancels the context drainGrace later (in-flight
// requests abandoned); a second cancels at once, and a third kills the
// process. Otherwise the process ends on its own, after its summary and
// after Chromium is stopped.
type interrupt struct {
	Drain chan struct{}
	ctx   context.Context

	cancel  context.CancelFunc
	sigs    chan os.Signal
	stopped chan struct{}
	once    sync.Once

	mu    sync.Mutex
	fired bool
}

func watchInterrupt(parent context.Context, errw io.Writer) *interrupt {
	ctx, cancel := context.WithCancel(parent)
	in := &interrupt{
		Drain: make(chan struct{}), ctx: ctx, cancel: cancel,
		sigs: make(chan os.Signal, 2), stopped: make(chan struct{}),
	}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go in.watch(errw)
	return in
}

func (in *interrupt) watch(errw io.Writer) {
	var sig os.Signal
	select {
	case sig = <-in.sigs:
	case <-in.stopped:
		return
	}
	in.mu.Lock()
	in.fired = true
	in.mu.Unlock()
	close(in.Drain)
	// The progress line may be mid-draw: start a line of our own.
	fmt.Fprintf(errw, "\n收到 %s (interrupted)：不再开始新的工作，进行中的请求最多再等 %d 秒；再按一次 Ctrl-C 立即停止\n",
		signalName(sig), int(drainGrace/time.Second))
	grace := time.AfterFunc(drainGrace, in.cancel)
	defer grace.Stop()
	select {
	case <-in.sigs:
		fmt.Fprintln(errw, "再次收到中断信号：放弃进行中的请求，立即停止 (a third one kills zhizhi outright)")
		in.cancel()
		// Should stopping hang, the next signal takes its default
		// action; the next start removes what is left of Chromium.
		signal.Stop(in.sigs)
	case <-in.stopped:
	}
}

// Interrupted reports whether a signal arrived.
func (in *interrupt) Interrupted() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired
}

// Stop gives SIGINT and SIGTERM back their default action.
func (in *interrupt) Stop() {
	in.once.Do(func() {
		signal.Stop(in.sigs)
		close(in.stopped)
		in.cancel()
	})
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
