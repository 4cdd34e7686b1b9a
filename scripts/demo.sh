#!/usr/bin/env bash
# make demo: set up the database from the bundled example configuration and
# show what zhizhi would crawl. Uses the same settings as the binary:
# ZHIZHI_DATA_DIR (default ./data), ZHIZHI_DATABASE_URL (default an SQLite
# file in the data dir), ZHIZHI_CONFIG_DIR (default ./config).
set -euo pipefail
cd "$(dirname "$0")/.."
Z=bin/zhizhi
CONFIG=${ZHIZHI_CONFIG_DIR:-./config}
DATA=${ZHIZHI_DATA_DIR:-./data}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
if [ ! -t 1 ]; then step() { printf '\n== %s\n' "$*"; }; fi

if [ -n "${ZHIZHI_DATABASE_URL:-}" ]; then
  db="${ZHIZHI_DATABASE_URL%%\?*}"   # hide the query string and user:password,
  case "$db" in *@*) db="${db%%://*}://…@${db##*@}" ;; esac   # they may hold secrets

else
  db="SQLite $DATA/zhizhi.db"
fi
echo "make demo: $($Z version)"
echo "config: $CONFIG    database: $db"

step "1/5 lint the configuration ($CONFIG)"
$Z config lint

step "2/5 create or upgrade the database schema"
$Z migrate

step "3/5 import the local departments ($CONFIG/departments.csv)"
$Z dept import "$CONFIG/departments.csv"

step "4/5 sync sites, site departments and targets into the database"
$Z config sync

step "5/5 what would be crawled"
$Z site list
echo
$Z target list

cat <<EOF

Done. Running make demo again changes nothing (sync is idempotent).
  $Z target list --site qingyuan     one site's targets
  $Z target list --json              the same as JSON
  $Z --help                          every command and setting
EOF
