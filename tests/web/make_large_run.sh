#!/usr/bin/env bash
# Makes a run directory whose vllm.log is about SIZE_MIB MiB (default 1024):
# the seed's real crash log repeated, then once more at the end so the
# diagnosis's root cause sits near the end. For measure.mjs.
# usage: make_large_run.sh DIR [SIZE_MIB]
set -euo pipefail
dir="$1"
size_mib="${2:-1024}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
seed="$root/examples/seed-vllm-dp-rank/vllm.log"
mkdir -p "$dir"
python3 - "$seed" "$dir/vllm.log" "$size_mib" <<'PY'
import sys
seed, out, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
block = open(seed, 'rb').read()
block = block * max(1, (8 << 20) // len(block))
with open(out, 'wb') as f:
    written = 0
    while written < (mib << 20):
        f.write(block)
        written += len(block)
PY
echo "step 1/20 loss 0.6990 lr 0.0500" > "$dir/trainer.log"
ls -la "$dir"
