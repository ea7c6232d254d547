#!/usr/bin/env bash
# Builds strata-bench and strata-cloud-bench and runs them in quick mode at 1k rows (the
# observation workloads at reduced sizes): to catch a benchmark that no longer builds or runs.
# strata-cloud-bench runs its engine phase on 1,000 rows: that phase needs no PostgreSQL server
# (the cloud phases need one and are left out).
#
# The numbers of this run mean nothing: it builds without the optimizer (`-Onone`, in its own
# build folder, Benchmarks/.build-quick, so a measuring build in Benchmarks/.build stays as it
# is). On this 2-core machine the optimized build took 676 s quiet and 1,187 s beside other
# work, and pushed CI's fresh-clone run past its 45-minute budget (3,160 s); unoptimized it
# builds in 382 s and then runs for about 30 s (at 10k rows too, GRDB unoptimized took 80 s more). Measure with the commands of
# Benchmarks/README.md, never with this.
#
# Usage: Benchmarks/quick.sh [extra strata-bench options, e.g. --json out.json --svg out.svg]
set -euo pipefail
cd "$(dirname "$0")/.."
build=Benchmarks/.build-quick
# Both products in one build: two calls (one a product) left a core idle at each call's tail,
# where one module's whole-module compile runs alone.
# The release configuration, with the optimizer off: a debug build of this package fails, as
# clang then meets sqlite-nio's bundled sqlite3.h and the system's (through Strata's CSQLite)
# in one module context and refuses their differing `struct sqlite3_module`. `-Xcc -O0` does
# the same for the C targets (sqlite-nio's SQLite amalgamation is most of their time).
swift build -c release --package-path Benchmarks --scratch-path "$build" -Xswiftc -Onone -Xcc -O0
"$build"/release/strata-cloud-bench --only engine --rows 1000
"$build"/release/strata-bench --quick --filter sync
exec "$build"/release/strata-bench --quick --sizes 1000 "$@"
