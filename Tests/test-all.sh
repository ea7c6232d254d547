#!/usr/bin/env bash
# Runs every test of the package on a fresh machine: installs the system libraries the package
# links (when they are missing and apt is available), then `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${missing[@]}"
  else
    echo "Install these system libraries first: ${missing[*]}" >&2
    exit 1
  fi
fi

swift build --build-tests
swift test --skip-build --disable-xctest
