#!/usr/bin/env bash
# Builds the DocC documentation of every public module, with warnings as errors: a broken
# symbol link (``Name``), a missing article or a doc comment naming a parameter that does not
# exist fails the run. Each module's catalog is Sources/MODULE/MODULE.docc; its guides are the
# files of Documentation/, linked into it.
#
#   bash Tests/docc.sh                 # every module (CI), after `swift build`
#   bash Tests/docc.sh StrataSync      # one
#   STRATA_DOCC_OUTPUT=/tmp/docs bash Tests/docc.sh   # keep the .doccarchive folders
#
# Uses the toolchain's `docc` and SwiftPM's `dump-symbol-graph`; nothing to install.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  modules=(StrataSQLite StrataQueries StrataObservation StrataAssets StrataCloud StrataSync Strata
    StrataCloudStore StrataCloudWire StrataCloudService StrataCloudClient)
fi

docc=$(command -v docc || true)
if [ -z "$docc" ]; then
  docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
fi
[ -x "$docc" ] || { echo "docc.sh: no docc in the toolchain" >&2; exit 1; }

work=$(mktemp -d /tmp/strata-docc.XXXXXX)
trap 'rm -rf "$work"' EXIT
output=${STRATA_DOCC_OUTPUT:-$work/out}
mkdir -p "$output"

timeout 1200 swift package dump-symbol-graph --minimum-access-level public >"$work/dump.log" 2>&1 \
  || { cat "$work/dump.log" >&2; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -1)
[ -d "$graphs" ] || { echo "docc.sh: no symbol graphs found" >&2; cat "$work/dump.log" >&2; exit 1; }

status=0
for module in "${modules[@]}"; do
  catalog="Sources/$module/$module.docc"
  [ -d "$catalog" ] || { echo "docc.sh: $catalog is missing" >&2; status=1; continue; }
  mkdir -p "$work/graphs/$module"
  cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
  cp "$graphs/$module"@*.symbols.json "$work/graphs/$module/" 2>/dev/null || true
  if timeout 300 "$docc" convert "$catalog" --additional-symbol-graph-dir "$work/graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "dev.strata.$module" \
    --output-path "$output/$module.doccarchive" --warnings-as-errors >"$work/$module.log" 2>&1; then
    echo "docc: $module ok"
  else
    status=1
    echo "docc: $module FAILED:" >&2
    grep -iE "warning|error" "$work/$module.log" | sort -u >&2 || cat "$work/$module.log" >&2
  fi
done
exit $status
