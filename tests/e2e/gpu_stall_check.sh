#!/bin/sh
# On a GPU machine: a real PyTorch job allocates GPU memory, then stalls in one
# of three ways; `faultline wait-ready` must classify each with GPU evidence
# from NVML (or nvidia-smi). Needs python3 with torch and a CUDA GPU.
#   tests/e2e/gpu_stall_check.sh [FAULTLINE]
# Expected: gpu-spin -> gpu-busy-no-progress (utilisation high, memory flat);
#           cpu-spin -> busy-spin (GPU idle, memory flat: evidence shows GPU memory);
#           sleep    -> unknown (asleep, nothing moving), GPU memory in the status.
# Also prints faultline's own CPU use while it watched (utime+stime).
set -u
bin=${1:-build/faultline}
dir=$(mktemp -d)
cat > "$dir/job.py" <<'PY'
import sys, time, torch
mode = sys.argv[1]
x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); x.fill_(1)
torch.cuda.synchronize()
print("allocated 2 GiB on", torch.cuda.get_device_name(0), flush=True)
if mode == "gpu-spin":      # a kernel stream that never ends, host waiting in synchronize
    a = torch.randn(8192, 8192, device="cuda")
    while True:
        for _ in range(50):
            a = a @ a; a = a / a.norm()
        torch.cuda.synchronize()
elif mode == "cpu-spin":    # a Python busy loop; the GPU idles
    n = 0
    while True:
        n += 1
else:
    time.sleep(3600)
PY
for mode in gpu-spin cpu-spin sleep; do
  python3 "$dir/job.py" "$mode" > "$dir/$mode.log" 2>&1 &
  job=$!
  "$bin" wait-ready --tcp 127.0.0.1:1 --pid "$job" --log "$dir/$mode.log" --stall-after 20s --json --quiet \
    > "$dir/$mode.jsonl" 2> "$dir/$mode.err" &
  fl=$!
  wait "$fl"
  rc=$?
  kill "$job" 2>/dev/null; wait "$job" 2>/dev/null
  python3 - "$dir/$mode.jsonl" "$mode" "$rc" <<'PY'
import json, sys
rec = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
st = rec.get("stall") or {}
print("%-8s exit %s class %-22s" % (sys.argv[2], sys.argv[3], st.get("class")))
for e in st.get("evidence", []):
    print("           evidence:", e)
PY
done
rm -rf "$dir"
