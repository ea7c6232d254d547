#!/usr/bin/env bash
# Builds strata-bench in release and runs it in quick mode (1k and 10k rows, the observation
# workloads at reduced sizes): a few seconds of measuring, to catch a benchmark that no longer
# builds or runs. The numbers of a quick run are not meant to be compared or published.
#
# Usage: Benchmarks/quick.sh [extra strata-bench options, e.g. --json out.json --svg out.svg]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path Benchmarks --product strata-bench
Benchmarks/.build/release/strata-bench --quick --filter sync
exec Benchmarks/.build/release/strata-bench --quick "$@"
