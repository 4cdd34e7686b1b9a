#!/usr/bin/env bash
# make demo-stop: stops the admin console `make demo` left running
# (`zhizhi demo --serve`, its process id in the demo's directory,
# ZHIZHI_DEMO_DIR, default ./data/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
PIDFILE=${ZHIZHI_DEMO_DIR:-./data/demo}/demo-serve.pid
[ -f "$PIDFILE" ] || { echo "make demo-stop: no demo console is running"; exit 0; }
pid=$(cat "$PIDFILE")
if kill -0 "$pid" 2>/dev/null && grep -qa "demo" "/proc/$pid/cmdline" 2>/dev/null; then
  kill -TERM "$pid"
  # serve stops within about 15 s (work in flight finishes or stays queued)
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  echo "make demo-stop: the demo console ($pid) is stopped"
else
  echo "make demo-stop: no demo console is running"
fi
rm -f "$PIDFILE"
