#!/usr/bin/env bash
# Runs schemathesis (every check) against a real `strata-cloud serve` on loopback, over a
# database of its own on the PostgreSQL that STRATA_TEST_POSTGRES names, under a login role
# with only the request role's rights (as Documentation/Cloud.md recommends).
#
#   bash Tests/schemathesis.sh                 # the bounded run CI does: one fixed seed
#   STRATA_SCHEMATHESIS_SEEDS="1 2 3" STRATA_SCHEMATHESIS_EXAMPLES=200 bash Tests/schemathesis.sh
#
# Needs `swift build` done (it runs .build/debug/strata-cloud) and python3 with venv; installs
# schemathesis from PyPI into .build/schemathesis on first use. Every step is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${STRATA_TEST_POSTGRES:?start one first: eval \"\$(bash Tests/postgres.sh start DIR)\"}"
seeds=${STRATA_SCHEMATHESIS_SEEDS:-20261124}
examples=${STRATA_SCHEMATHESIS_EXAMPLES:-30}
version=4.32.5
venv=.build/schemathesis
binary=.build/debug/strata-cloud

[ -x "$binary" ] || { echo "schemathesis.sh: $binary is missing; run swift build first" >&2; exit 1; }
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  command -v python3 >/dev/null || { echo "schemathesis.sh: python3 is needed" >&2; exit 1; }
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian splits venv out of python3.
    if command -v apt-get >/dev/null 2>&1; then
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq
      $sudo apt-get install -y -qq python3-venv
      rm -rf "$venv"
      python3 -m venv "$venv"
    else
      echo "schemathesis.sh: python3 -m venv failed; install python3-venv" >&2
      exit 1
    fi
  fi
  timeout 600 "$venv/bin/pip" install -q "schemathesis==$version"
fi

work=$(mktemp -d /tmp/strata-schemathesis.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A database and a login role of this run's own.
suffix="st_$$_$RANDOM"
base=${STRATA_TEST_POSTGRES%/*}
psql_admin() { timeout 60 psql -v ON_ERROR_STOP=1 -q "$STRATA_TEST_POSTGRES" "$@"; }
psql_admin -c "CREATE DATABASE $suffix"
export STRATA_JWT_KEY
STRATA_JWT_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
timeout 120 "$binary" migrate --database-url "$base/$suffix" >/dev/null
timeout 60 psql -v ON_ERROR_STOP=1 -q "$base/$suffix" -c "CREATE ROLE $suffix LOGIN IN ROLE strata_request"
service_url="${base/\/\/postgres@/\/\/$suffix@}/$suffix"

"$binary" serve --database-url "$service_url" --port 0 >"$work/serve.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 150); do
  port=$(sed -n 's/^strata-cloud listening on port \([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$port" ]; then
  echo "schemathesis.sh: strata-cloud serve did not start:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi
token=$(timeout 30 "$binary" token --user schemathesis)

status=0
for seed in $seeds; do
  echo "schemathesis: seed $seed, $examples examples per operation, against port $port"
  if ! timeout 900 "$venv/bin/schemathesis" --no-color --config-file Tests/schemathesis.toml run \
    Documentation/cloud-api.openapi.yaml --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $token" --checks all --max-examples "$examples" --seed "$seed" \
    >"$work/run-$seed.log" 2>&1; then
    status=1
    cat "$work/run-$seed.log"
    echo "schemathesis: seed $seed FAILED (rerun: STRATA_SCHEMATHESIS_SEEDS=$seed bash Tests/schemathesis.sh)" >&2
  else
    tail -n 4 "$work/run-$seed.log"
  fi
done
kill -0 "$server_pid" 2>/dev/null || { echo "schemathesis.sh: the service died:" >&2; tail -50 "$work/serve.log" >&2; status=1; }
exit $status
