#!/usr/bin/env bash
# make demo: the main job on the embedded default. Installs Chromium when it
# is missing and we can (the city portal's cookie challenge needs a real
# browser), then runs `zhizhi demo --once`: the simulated government web,
# department import, config sync and a polite crawl of every target, with a
# summary against what the sites publish.
# Then it leaves `zhizhi demo --serve` running in the background — the
# simulated web and the crawler service with its admin console — and prints
# the console's address and the demo account; `make demo-stop` stops it.
# The demo keeps everything in its own directory, ZHIZHI_DEMO_DIR (default
# ./data/demo): its SQLite database, blobs, the simulated web's
# configuration and clock. ZHIZHI_DATA_DIR, ZHIZHI_DATABASE_URL and
# ZHIZHI_CONFIG_DIR are the operator's and the demo does not use them.
set -euo pipefail
cd "$(dirname "$0")/.."
Z=bin/zhizhi
DATA=${ZHIZHI_DEMO_DIR:-./data/demo}
export ZHIZHI_DEMO_DIR=$DATA
LISTEN=${ZHIZHI_LISTEN:-127.0.0.1:8080}

# The demo console left running by the last `make demo` holds the demo's
# database: it is stopped (and started again below). Nothing else is.
bash scripts/demo-stop.sh

bash scripts/ensure-deps.sh chromium cjkfont || true
if [ ! -x "${ZHIZHI_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "make demo: Chromium is not installed: the city portal (behind a cookie challenge) will be skipped." >&2
fi

echo "make demo: $($Z version)"
$Z demo --once

echo
echo "== starting the admin console in the background (zhizhi demo --serve; log: $DATA/demo-serve.log)"
mkdir -p "$DATA"
setsid nohup "$Z" demo --serve >"$DATA/demo-serve.log" 2>&1 </dev/null &
echo $! >"$DATA/demo-serve.pid"
for _ in $(seq 1 120); do
  if grep -q "serve: 已启动" "$DATA/demo-serve.log" 2>/dev/null; then break; fi
  if ! kill -0 "$(cat "$DATA/demo-serve.pid")" 2>/dev/null; then
    echo "make demo: the console did not start; its log ($DATA/demo-serve.log) says:" >&2
    tail -20 "$DATA/demo-serve.log" >&2
    exit 1
  fi
  sleep 0.5
done
if ! grep -q "serve: 已启动" "$DATA/demo-serve.log" 2>/dev/null; then
  echo "make demo: the console has not started within a minute; see $DATA/demo-serve.log" >&2
  exit 1
fi

cat <<EOF

公开门户 (public portal of summary cards): http://$LISTEN/
透明账本 (the two public ledgers, sealed daily): http://$LISTEN/ledger
管理后台 (admin console): http://$LISTEN/admin/
  用户名 (user):     demo
  密码 (password):   $(cat "$DATA/demo-password.txt")
It keeps running in the background (the simulated web and zhizhi serve); stop it with: make demo-stop

Other things to try:
  $Z demo --once                     crawl again: incremental
  ZHIZHI_DATA_DIR=$DATA $Z health                        the demo's health report
  ZHIZHI_DATA_DIR=$DATA $Z target list --site qingyuan   one site's targets, departments and schedules
  ZHIZHI_DATA_DIR=$DATA $Z export --limit 2              what RAG receives
  $Z init DIR                        a starting configuration for your own sites
  $Z --help                          every command and setting
EOF
