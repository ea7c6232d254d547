#!/usr/bin/env bash
# Builds strata-bench in release and runs it in quick mode (1k and 10k rows, the observation
# workloads at reduced sizes): a few seconds of measuring, to catch a benchmark that no longer
# builds or runs. The numbers of a quick run are not meant to be compared or published.
# strata-cloud-bench is built too, and runs its engine phase on 1,000 rows: that phase needs
# no PostgreSQL server (the cloud phases need one and are left out).
#
# Usage: Benchmarks/quick.sh [extra strata-bench options, e.g. --json out.json --svg out.svg]
set -euo pipefail
cd "$(dirname "$0")/.."
# Both products in one build: two calls (one a product) left a core idle at each call's tail,
# where one module's whole-module compile runs alone.
# Release only: a debug build of this package fails, as clang then meets sqlite-nio's bundled
# sqlite3.h and the system's (through Strata's CSQLite) in one module context and refuses
# their differing `struct sqlite3_module`.
swift build -c release --package-path Benchmarks
Benchmarks/.build/release/strata-cloud-bench --only engine --rows 1000
Benchmarks/.build/release/strata-bench --quick --filter sync
exec Benchmarks/.build/release/strata-bench --quick "$@"
