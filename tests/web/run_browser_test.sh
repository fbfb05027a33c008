#!/usr/bin/env bash
# ctest entry of the dashboard browser test: installs playwright-core (npm ci,
# pinned by package-lock.json) into tests/web/node_modules when missing, then
# runs dashboard_test.mjs with Debian's chromium. Exit 77 (skipped) only when
# node, chromium or the npm registry is unavailable; any check failing is 1.
# usage: run_browser_test.sh FAULTLINE_BINARY OUT_DIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
binary="$(realpath "$1")"
out="$(realpath -m "${2:-$PWD/dashboard-screenshots}")"
chromium="${CHROMIUM:-/usr/bin/chromium}"
if ! command -v node >/dev/null || [ ! -x "$chromium" ]; then
  echo "SKIPPED: needs node and $chromium (scripts/bootstrap installs them)" >&2
  exit 77
fi
if [ ! -d "$here/node_modules/playwright-core" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || { echo "SKIPPED: npm ci failed" >&2; exit 77; }
fi
cd "$here" && exec node dashboard_test.mjs "$binary" "$root" "$out"
