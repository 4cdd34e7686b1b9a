#!/usr/bin/env bash
# make demo: the main job on the embedded default. Installs Chromium when it
# is missing and we can (the city portal's cookie challenge needs a real
# browser), checks the bundled configuration, then runs `zhizhi demo --once`:
# the simulated government web, department import, config sync and a polite
# crawl of every target, with a summary against what the sites publish.
# Settings as for the binary: ZHIZHI_DATA_DIR (default ./data),
# ZHIZHI_DATABASE_URL (default an SQLite file in the data dir),
# ZHIZHI_CONFIG_DIR (default ./config).
set -euo pipefail
cd "$(dirname "$0")/.."
Z=bin/zhizhi
CONFIG=${ZHIZHI_CONFIG_DIR:-./config}

bash scripts/ensure-deps.sh chromium cjkfont || true
if [ ! -x "${ZHIZHI_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "make demo: Chromium is not installed: the city portal (behind a cookie challenge) will be skipped." >&2
fi

echo "make demo: $($Z version)"
echo "== lint the configuration ($CONFIG)"
$Z config lint
$Z demo --once

cat <<EOF

Done. Other things to try:
  $Z demo                            the same, then keep the simulated web running to explore
  $Z target list --site qingyuan     one site's targets, departments and schedules
  $Z export --limit 2                what RAG receives
  $Z --help                          every command and setting
EOF
