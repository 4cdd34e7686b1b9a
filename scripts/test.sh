#!/usr/bin/env bash
# make test: installs what the tests need (PostgreSQL, Chromium, poppler,
# qpdf, tesseract with chi_sim) when it is
# missing and we are root, starts a throwaway PostgreSQL cluster on a free
# loopback port, runs go vet and every Go test against SQLite and
# PostgreSQL, runs short fuzz passes, and stops the cluster however the
# script ends.
#
# Environment:
#   CI=true             a missing PostgreSQL is a failure, not a skip
#   ZHIZHI_TEST_PG_URL  use this (loopback) server instead of starting one
#   FUZZTIME            inputs per fuzz target (default 20000x; a duration such
#                       as 10s works too; 0 skips fuzzing)
#   GOTESTFLAGS         extra flags for go test, split on spaces (e.g. -v -run Store)
set -uo pipefail
cd "$(dirname "$0")/.."

say() { printf "test: [%4ds] %s\n" "$SECONDS" "$*"; }
loud() {
  echo "##########################################################################" >&2
  for l in "$@"; do printf '# %-70s #\n' "$l" >&2; done
  echo "##########################################################################" >&2
}

# --- PostgreSQL ------------------------------------------------------------

PGDIR=""
PGBIN=""
as_pg() {
  # The server refuses to run as root, so root runs it as postgres.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
stop_pg() {
  if [ -n "$PGDIR" ]; then
    if [ -f "$PGDIR/data/postmaster.pid" ]; then
      as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$PGDIR"
    PGDIR=""
  fi
}
trap stop_pg EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_pg() {
  PGDIR=$(mktemp -d /tmp/zhizhi-pg.XXXXXX) || return 1
  if [ "$(id -u)" = 0 ]; then chown postgres "$PGDIR" || return 1; fi
  if ! as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --locale=C >"$PGDIR/initdb.log" 2>&1; then
    echo "test: initdb failed:" >&2; cat "$PGDIR/initdb.log" >&2; return 1
  fi
  # A port can be taken between the check and the start: try a few.
  local port tries=0
  for port in $(shuf -i 55432-59999 -n 20); do
    port_free "$port" || continue
    tries=$((tries + 1))
    if as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -t 60 \
      -o "-p $port -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500" \
      start >/dev/null 2>&1; then
      export ZHIZHI_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
      say "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (throwaway cluster in $PGDIR)"
      return 0
    fi
    [ "$tries" -ge 3 ] && break
  done
  echo "test: PostgreSQL would not start; its log:" >&2
  cat "$PGDIR/log" >&2 2>/dev/null
  return 1
}

scripts/ensure-deps.sh postgres chromium poppler strace cjkfont qpdf ocr || say "ensure-deps failed; going on with what is installed"

if [ -n "${ZHIZHI_TEST_PG_URL:-}" ]; then
  say "PostgreSQL from ZHIZHI_TEST_PG_URL"
else
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ] || ! start_pg; then
    stop_pg
    unset ZHIZHI_TEST_PG_URL
    if [ "${CI:-}" = "true" ]; then
      loud "PostgreSQL is not available (not installed, could not be installed," \
        "or would not start), and CI=true requires the PostgreSQL tests." \
        "FAILING. Install it: apt-get install -y postgresql"
      exit 1
    fi
    loud "PostgreSQL is not available (not installed, could not be installed," \
      "or would not start): the PostgreSQL half of the store tests will be" \
      "SKIPPED. Install it (apt-get install -y postgresql) or run as root."
  fi
fi
if [ ! -x "${ZHIZHI_CHROMIUM:-/usr/bin/chromium}" ] && ! command -v chromium >/dev/null 2>&1; then
  loud "Chromium is not installed: the browser-tier tests will be SKIPPED." \
    "Install it: apt-get install -y chromium"
fi

# --- vet and tests -----------------------------------------------------------

failed=()
say "go vet ./..."
go vet ./... || failed+=("go vet")

if [ -n "${ZHIZHI_TEST_PG_URL:-}" ]; then
  say "go test ./... (SQLite and PostgreSQL)"
else
  say "go test ./... (SQLite only)"
fi
# The console's end-to-end tests write their screenshots here.
export ZHIZHI_TEST_ARTIFACTS=${ZHIZHI_TEST_ARTIFACTS:-$PWD/artifacts}
mkdir -p "$ZHIZHI_TEST_ARTIFACTS"
say "test artifacts (console screenshots) go to $ZHIZHI_TEST_ARTIFACTS"
start=$SECONDS
# -parallel 16: the tests that call t.Parallel (internal/cli's end-to-end
# tests that mostly wait, on the simulated web's polite pace and on the
# processes they start and kill, and their per-dialect subtests) run 16 at
# a time, so their waits overlap instead of adding up; every other test
# runs one after another as before. More slots were slower on two cores: 32
# left internal/cli no faster and made the package running beside it
# (internal/crawl) take twice as long.
# Packages: go test's default, one per core at a time. Four at a time was
# slower on two cores: the long packages start serve processes, Chromium and
# CPU-busy loops of their own, and every package waited for the processor.
# -timeout is per package binary, a safety net far above the slowest package.
# shellcheck disable=SC2086 # GOTESTFLAGS is a list of flags
go test -count=1 -parallel 16 -timeout 60m ${GOTESTFLAGS:-} ./... || failed+=("go test")
say "go test took $((SECONDS - start))s"

# --- short fuzz passes over the code that reads hostile input -----------------

# A count, not a duration: Go 1.26's fuzzing can fail a target with "context
# deadline exceeded" when a duration ends while a worker is busy (a race in
# the fuzzing engine itself, not a failing input; Go 1.27 fixes it).
fuzztime=${FUZZTIME:-20000x}
if [ ${#failed[@]} -eq 0 ] && [ "$fuzztime" != 0 ]; then
  # Every Fuzz function of every package, read from the test files (go test
  # -list would build and link every test binary again: over a minute).
  targets=$(grep -rH --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' internal cmd 2>/dev/null |
    sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|./\1 \2|' | sort -u)
  while read -r pkg name; do
    [ -n "$pkg" ] || continue
    say "fuzz $name in $pkg ($fuzztime)"
    if ! out=$(go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
      echo "$out"
      failed+=("fuzz $name")
    fi
  done <<<"$targets"
fi

if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')"
  exit 1
fi
if [ -n "${ZHIZHI_TEST_PG_URL:-}" ]; then
  say "all passed (SQLite and PostgreSQL)"
else
  say "all passed (SQLite only: PostgreSQL tests were SKIPPED)"
fi
