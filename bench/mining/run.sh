#!/bin/sh
# bench/mining/run.sh BUILD_DIR
# 1. Accuracy: feeds the Content column of the 16 loghub-2k data sets to
#    `faultline templates --messages --per-line --csv --profile <S>` (one
#    profile per data set in rules/mining.yaml) and scores grouping and
#    parsing accuracy on the original and the corrected labels.
# 2. Throughput: the 32k Content lines (and the 32k raw log lines, header
#    stripped) repeated to >= 1M lines, mined on one core (taskset when
#    present), against `grep -c .` and `rg -j1 -c .` on the same file.
# DATA (default ../shared/data/loghub-2k next to the repo) overrides the data.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$build/faultline"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
data=${DATA:-$root/../shared/data/loghub-2k}
out="$build/bench-mining"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
if [ ! -x "$bin" ]; then echo "mining bench: $bin not built" >&2; exit 1; fi
if [ ! -d "$data" ]; then echo "mining bench: no data at $data (set DATA=)" >&2; exit 1; fi
mkdir -p "$out"

echo "-- accuracy (loghub-2k, Content column, per-data-set profiles)"
sh "$here/predict.sh" "$bin" "$data" "$out/pred"
for labels in original corrected; do
  python3 "$here/score.py" batch "$data" "$out/pred" --labels $labels | tee "$out/score-$labels.txt"
  python3 "$here/score.py" batch "$data" "$out/pred" --labels $labels --json > "$out/score-$labels.json"
done

echo "-- throughput (one core)"
pin=""
if command -v taskset >/dev/null 2>&1; then pin="taskset -c 0"; fi
: > "$out/content-32k.txt"
: > "$out/raw-32k.log"
for dir in "$data"/*/; do
  name=$(basename "$dir")
  [ -f "$dir/${name}_2k.log_structured.csv" ] || continue
  cat "$out/pred/$name.content" >> "$out/content-32k.txt"
  tr -d '\r' < "$dir/${name}_2k.log" >> "$out/raw-32k.log"
  echo >> "$out/raw-32k.log"
done
: > "$out/content-1M.txt"
: > "$out/raw-1M.log"
i=0
while [ $i -lt 32 ]; do
  cat "$out/content-32k.txt" >> "$out/content-1M.txt"
  cat "$out/raw-32k.log" >> "$out/raw-1M.log"
  i=$((i + 1))
done

# seconds CMD...: "wall cpu" seconds, best of 3 (timeit.py)
seconds() { python3 "$here/timeit.py" "$out/timing.out" "$@"; }
report() {  # report LABEL FILE FLAGS
  file=$2
  lines=$(wc -l < "$file")
  bytes=$(wc -c < "$file")
  t_grep=$(seconds $pin grep -c . "$file")
  t_rg=$(seconds $pin rg -j1 -c . "$file")
  t_mine=$(seconds $pin "$bin" templates $3 "$file")
  t_nocache=$(seconds $pin "$bin" templates $3 --profiles "$here/nocache.yaml" "$file")
  python3 - "$1" "$lines" "$bytes" "$t_grep" "$t_rg" "$t_mine" "$t_nocache" <<'PY'
import sys
label, lines, nbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
g, r, m, n = [tuple(map(float, a.split())) for a in sys.argv[4:8]]
print(f"{label}: {lines} lines, {nbytes/1e6:.1f} MB")
print(f"  {'':<22} {'wall s':>8} {'cpu s':>7} {'M lines/s wall':>15} {'M lines/s cpu':>14} {'MB/s wall':>10}")
for name, (w, c) in (("grep -c .", g), ("rg -j1 -c .", r), ("faultline templates", m), ("  same, cache off", n)):
    print(f"  {name:<22} {w:8.3f} {c:7.3f} {lines/w/1e6:15.2f} {lines/max(c,1e-3)/1e6:14.2f} {nbytes/w/1e6:10.1f}")
print(f"  faultline templates takes {m[0]/g[0]:.1f}x grep's and {m[0]/r[0]:.1f}x rg's wall time "
      f"({m[1]/max(g[1],1e-3):.1f}x / {m[1]/max(r[1],1e-3):.1f}x in CPU time)")
print(f"  cache off: {n[0]/g[0]:.1f}x grep, {n[0]/r[0]:.1f}x rg (wall)")
PY
}
report "content x32 (--messages)" "$out/content-1M.txt" "--messages" | tee "$out/throughput.txt"
report "raw log lines x32 (header stripped)" "$out/raw-1M.log" "" | tee -a "$out/throughput.txt"
