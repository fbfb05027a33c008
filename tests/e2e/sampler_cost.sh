#!/bin/sh
# Measures what watching costs: the CPU time `faultline watch` uses while it
# samples a 16-process tree once a second (each process with 32 threads, 24
# open files and a weight file open, like vLLM workers), over SECONDS.
#   tests/e2e/sampler_cost.sh [FAULTLINE] [SECONDS]
# Prints faultline's CPU time (utime + stime from /proc) and its share of one core.
set -eu
bin=${1:-build/faultline}
secs=${2:-60}
dir=$(mktemp -d)
setsid python3 - "$dir" <<'PY' &
import os, sys, threading, time
d = sys.argv[1]
with open(os.path.join(d, "model-00001-of-00004.safetensors"), "wb") as f:
    f.write(b"\0" * (1 << 20))
def body():
    keep = [open("/dev/null") for _ in range(24)]
    w = open(os.path.join(d, "model-00001-of-00004.safetensors"), "rb")
    w.read(4096)
    ev = threading.Event()
    for _ in range(31):
        threading.Thread(target=ev.wait, daemon=True).start()
    while True:
        time.sleep(0.5)
for _ in range(15):
    if os.fork() == 0:
        body()
body()
PY
tree=$!
sleep 2
"$bin" watch --pid "$tree" --status-every 1h --interval 1s --stall-after 1h --no-gpu > /dev/null &
fl=$!
sleep "$secs"
# utime and stime are fields 14 and 15 of /proc/PID/stat, in clock ticks.
ticks=$(awk '{print $14 + $15}' "/proc/$fl/stat")
hz=$(getconf CLK_TCK)
procs=$(ps --no-headers --ppid "$tree" | wc -l)
kill -INT "$fl"; wait "$fl" || true
kill -- "-$tree" 2>/dev/null || true
rm -rf "$dir"
python3 -c "
t = $ticks / $hz
print('tree: %d processes (1 + %d children), 32 threads each; sampled at 1 Hz for %d s' % ($procs + 1, $procs, $secs))
print('faultline watch CPU time: %.2f s = %.2f%% of one core' % (t, 100 * t / $secs))
"
