#!/usr/bin/env bash
# make demo: the main job on the embedded default. Installs Chromium when it
# is missing and we can (the city portal's cookie challenge needs a real
# browser), checks the bundled configuration, then runs `zhizhi demo --once`:
# the simulated government web, department import, config sync and a polite
# crawl of every target, with a summary against what the sites publish.
# Then it leaves `zhizhi demo --serve` running in the background — the
# simulated web and the crawler service with its admin console — and prints
# the console's address and the demo account; `make demo-stop` stops it.
# Settings as for the binary: ZHIZHI_DATA_DIR (default ./data),
# ZHIZHI_DATABASE_URL (default an SQLite file in the data dir),
# ZHIZHI_CONFIG_DIR (default ./config).
set -euo pipefail
cd "$(dirname "$0")/.."
Z=bin/zhizhi
CONFIG=${ZHIZHI_CONFIG_DIR:-./config}
DATA=${ZHIZHI_DATA_DIR:-./data}
LISTEN=${ZHIZHI_LISTEN:-127.0.0.1:8080}

# A console left running by the last `make demo` holds the database: stop it.
bash scripts/demo-stop.sh >/dev/null

bash scripts/ensure-deps.sh chromium cjkfont || true
if [ ! -x "${ZHIZHI_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "make demo: Chromium is not installed: the city portal (behind a cookie challenge) will be skipped." >&2
fi

echo "make demo: $($Z version)"
echo "== lint the configuration ($CONFIG)"
$Z config lint
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
  $Z target list --site qingyuan     one site's targets, departments and schedules
  $Z export --limit 2                what RAG receives
  $Z --help                          every command and setting
EOF
