#!/usr/bin/env bash
# make demo: the main job on the embedded default (SQLite under ./data).
set -euo pipefail
cd "$(dirname "$0")/.."
Z=bin/zhizhi

echo "== 1. database (SQLite, ${ZHIZHI_DATA_DIR:-./data})"
$Z migrate
echo "== 2. departments (config/departments.csv)"
$Z dept import config/departments.csv
echo "== 3. lint the bundled configuration"
$Z config lint
echo "== 4. sync sites, departments and targets into the database"
$Z config sync
echo "== 5. what would be crawled"
$Z target list
