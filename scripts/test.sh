#!/usr/bin/env bash
# make test: installs what the tests need, starts a throwaway PostgreSQL
# cluster on a free port, runs every Go test against SQLite and PostgreSQL,
# runs short fuzz passes, and stops the cluster whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh postgres chromium || true

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
PGDIR=""
cleanup() {
  if [ -n "$PGDIR" ] && [ -d "$PGDIR/data" ]; then
    as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$PGDIR"
  fi
}
trap cleanup EXIT

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  local p
  for p in $(seq 55432 55532); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

if [ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ]; then
  PGDIR=$(mktemp -d /tmp/zhizhi-pg.XXXXXX)
  [ "$(id -u)" = 0 ] && chown postgres "$PGDIR"
  PORT=$(free_port)
  as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres >/dev/null
  as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w \
    -o "-p $PORT -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
  export ZHIZHI_TEST_PG_URL="postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
  echo "test: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT"
else
  echo "##########################################################################" >&2
  echo "# PostgreSQL is not installed and could not be installed:                #" >&2
  echo "# the PostgreSQL half of the store tests will be SKIPPED.                #" >&2
  echo "##########################################################################" >&2
  if [ "${CI:-}" = "true" ]; then
    echo "test: CI=true requires PostgreSQL; failing." >&2
    exit 1
  fi
fi

echo "test: go vet"
go vet ./...
echo "test: go test (SQLite and PostgreSQL)"
go test -count=1 -timeout 20m ./...

# Short fuzz passes over the parsers that read hostile input.
fuzz() {
  local pkg=$1 name=$2
  if go test -list "^$name\$" "$pkg" 2>/dev/null | grep -qx "$name"; then
    echo "test: fuzz $name (10s)"
    go test -run '^$' -fuzz "^$name\$" -fuzztime 10s "$pkg" >/dev/null
  fi
}
fuzz ./internal/fetch FuzzRobotsParse
fuzz ./internal/fetch FuzzCharsetSniff
echo "test: all passed"
