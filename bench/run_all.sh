#!/bin/sh
# run_all.sh BUILD_DIR: runs every bench/<name>/run.sh with the build
# directory as its argument (called by `make bench`). A failing bench marks
# the whole run as failed but the others still run.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for script in "$here"/*/run.sh; do
  [ -x "$script" ] || continue
  echo "== $(basename "$(dirname "$script")")"
  "$script" "$build" || status=1
done
exit $status
