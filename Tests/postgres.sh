#!/usr/bin/env bash
# A private, throwaway PostgreSQL cluster for the tests, on 127.0.0.1 only.
#
#   eval "$(bash Tests/postgres.sh start DIR)"   # prints `export STRATA_TEST_POSTGRES=...`
#   bash Tests/postgres.sh restart DIR            # `pg_ctl restart -m fast`: every connection drops
#   bash Tests/postgres.sh stop DIR
#
# Installs PostgreSQL from Debian's packages when initdb is missing. As root the server runs as
# the postgres user (it refuses to run as root); otherwise as the caller.
set -euo pipefail
command=${1:?start or stop}
dir=${2:?a directory for the cluster}

bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  echo "$found"
}

as_server() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
start)
  if [ -z "$(bin)" ] || [ ! -x "$(bin)/initdb" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >&2
  fi
  pg=$(bin)
  mkdir -p "$dir"
  [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$dir"
  # A free port: ask the kernel for one.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_server "$pg/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1
  # The whole suite, its services' pools and their fault tests in parallel, was measured at
  # 205 connections at its peak (2026-11-26): 200 refused some ("too many clients already",
  # a failed pg_dump or setup). 600 leaves room as the suite grows.
  as_server "$pg/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=600 -c fsync=off" -w start >&2
  echo "export STRATA_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/postgres"
  ;;
restart)
  pg=$(bin)
  as_server "$pg/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w restart >&2 </dev/null
  ;;
stop)
  pg=$(bin)
  if [ -d "$dir/data" ]; then as_server "$pg/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|restart|stop DIR" >&2
  exit 2
  ;;
esac
