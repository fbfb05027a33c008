#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan+UBSan) in BUILD_DIR and runs each
# for SECONDS on a corpus seeded from the tests and rules, at low priority.
# usage: fuzz/run.sh [SECONDS] [NAME...]   (default 600 s each, every harness)
# Findings (crash-*, leak-*, timeout-*) land in BUILD_DIR/findings/NAME; the
# script exits 1 when any harness found one. One summary line per harness.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-600}"
shift || true
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
all=(line_parser triage rule_file pipeline_spec launch_command model_config run_dir metrics redact)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${all[@]}")
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DFAULTLINE_FUZZ=ON -DFAULTLINE_STAGES="util;input;parse;events;rules;mining;diagnosis;report;probe;preflight;supervise;web" \
    >/dev/null || exit 2
fi
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
if [ -z "${FUZZ_NO_BUILD:-}" ]; then  # FUZZ_NO_BUILD=1: the harnesses are built already
  nice -n 15 cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]}" || exit 2
fi

put() {  # put DIR FILE...: copies each file under a name made of its path (logs share names)
  local dir="$1"
  shift
  for f in "$@"; do cp "$f" "$dir/$(echo "${f#"$root"/}" | tr '/' '_')"; done
}

seed() {  # seed NAME: copies the tests' inputs for NAME into the corpus dir
  local dir="$build/corpus/$1"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return
  case "$1" in
    line_parser|triage|redact)
      put "$dir" $(find "$root/tests/golden" "$root/examples" -name '*.log' -size -64k | head -60)
      put "$dir" $(find "$root/tests" "$root/bench" \( -name '*.gz' -o -name '*.zst' \) -size -64k | head -5) ;;
    rule_file) cp "$root"/rules/*.yaml "$dir" ;;
    pipeline_spec) put "$dir" $(find "$root/examples" "$root/tests" -name 'pipeline*.yaml') ;;
    launch_command) cp "$root"/fuzz/seeds/launch_command/* "$dir" ;;
    model_config) put "$dir" $(find "$root/tests/fixtures/models" -name '*.json' | head -40) ;;
    run_dir|metrics) cp "$root"/fuzz/seeds/run_dir/* "$dir" ;;
  esac
}

one() {  # one NAME: seeds and runs one harness; prints its summary line; returns 1 on a finding
  local n="$1"
  seed "$n"
  mkdir -p "$build/findings/$n"
  local log="$build/findings/$n/fuzz.log" max_len=4096 rc execs cov artifacts
  [ "$n" = triage ] && max_len=65536
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 nice -n 15 "$build/fuzz/fuzz_$n" "$build/corpus/$n" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$n/" >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]*' | head -1)
  artifacts=$(ls "$build/findings/$n" | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-' || true)
  echo "fuzz_$n: ${seconds}s, ${execs:-?} execs, ${cov:-cov: ?}, corpus $(ls "$build/corpus/$n" | wc -l), exit $rc, findings $artifacts"
  if [ "$rc" -ne 0 ] || [ "$artifacts" -ne 0 ]; then
    grep -m3 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|Test unit written' "$log" | sed "s/^/  fuzz_$n: /"
    return 1
  fi
  return 0
}

# FUZZ_PARALLEL=N: N harnesses at a time (CI: one per core); the default is one.
parallel="${FUZZ_PARALLEL:-1}"
found=0
for n in "${names[@]}"; do
  if [ "$parallel" -le 1 ]; then
    one "$n" || found=1
    continue
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do sleep 1; done
  rm -f "$build/findings/$n.status"
  (
    one "$n"
    echo $? >"$build/findings/$n.status"
  ) &
done
wait
if [ "$parallel" -gt 1 ]; then
  for n in "${names[@]}"; do [ "$(cat "$build/findings/$n.status" 2>/dev/null)" = 0 ] || found=1; done
fi
exit $found
