#!/usr/bin/env bash
# Triage benchmark on every log shape (bench/triage/shapes.py): serving
# noise, NCCL INFO dumps, training logs (step lines, tqdm bars, [rankN]:
# prefixes), repeated vLLM start-up phases, warning spam, .gz and .zst,
# directories of 64 and 512 per-rank files, stdin. Prints one table: grep,
# rg -j1, rg and faultline times in the same run, the ratios, faultline's
# peak RSS and whether its root cause is the one the embedded failure has.
# usage: bench/triage/run.sh BUILD_DIR [SIZE_MB]   (default 256 MiB a shape;
# FAULTLINE_BENCH_RUNS=N runs per contender, FAULTLINE_BENCH_SHAPES=a,b,
# FAULTLINE_BENCH_BASELINE=OTHER_BINARY timed beside it)
set -euo pipefail
build=$(realpath "${1:-build}")
size_mb=${2:-${FAULTLINE_BENCH_MB:-256}}
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/shapes.py" "$build/faultline" --mb "$size_mb"
