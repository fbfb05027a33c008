#!/bin/bash
# On a GPU machine: four real PyTorch jobs that get stuck, each run under
# `faultline run`; the diagnosis must name the phase from the Python stacks
# that faultline captures (faulthandler, through its bootstrap sitecustomize)
# before it stops anything. Needs python3 with torch and a CUDA GPU.
#   tests/e2e/gpu_stacks_check.sh FAULTLINE OUTDIR
# Cases (expected phase from the stacks):
#   weights     torch.load from a slow reader (10 KiB/s)           -> weight-loading
#   rendezvous  gloo init_process_group, rank 1 never joins        -> distributed-init
#   collective  2 gloo ranks train, rank 1 stops calling all_reduce -> collective
#   compile     torch.compile of a 20000-op graph                   -> torch-compile
# Each case's run directory (diagnosis.txt/json, stacks/, the log) is copied
# to OUTDIR/<case>/ and a summary line printed.
set -u
bin=${1:-build-rel/faultline}
out=${2:-/tmp/gpu-stacks}
mkdir -p "$out"
work=$(mktemp -d)
cat > "$work/weights.py" <<'PY'
import io, os, sys, time, torch
path = os.path.join(sys.argv[1], "model.pt")
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
torch.save(model.state_dict(), path)
print("saved %d MiB of weights; loading them back" % (os.path.getsize(path) >> 20), flush=True)
class SlowReader(io.RawIOBase):
    """A network filesystem at 10 KiB/s."""
    def __init__(self, p): self.f = open(p, "rb")
    def readable(self): return True
    def seekable(self): return True
    def seek(self, o, w=0): return self.f.seek(o, w)
    def tell(self): return self.f.tell()
    def readinto(self, b):
        time.sleep(0.1)
        n = min(len(b), 1024)
        data = self.f.read(n); b[:len(data)] = data; return len(data)
def load_weights(p):
    return torch.load(io.BufferedReader(SlowReader(p), 1024), map_location="cuda")
state = load_weights(path)
print("loaded", len(state))
PY
cat > "$work/rendezvous.py" <<'PY'
import os, sys, time, subprocess, datetime
if len(sys.argv) > 1 and sys.argv[1] == "rank":
    import torch, torch.distributed as dist
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(0); x = torch.ones(1 << 20, device="cuda")
    print("rank %d: init_process_group(gloo, world_size=2)" % rank, flush=True)
    if rank == 1:
        time.sleep(3600)   # never joins
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=rank, world_size=2,
                            timeout=datetime.timedelta(minutes=30))
    print("never printed")
else:
    ps = [subprocess.Popen([sys.executable, __file__, "rank"], env=dict(os.environ, RANK=str(r))) for r in (0, 1)]
    [p.wait() for p in ps]
PY
cat > "$work/collective.py" <<'PY'
import os, sys, time, subprocess, datetime
if len(sys.argv) > 1 and sys.argv[1] == "rank":
    import torch, torch.distributed as dist
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29534", rank=rank, world_size=2,
                            timeout=datetime.timedelta(minutes=30))
    w = torch.randn(1024, 1024, device="cuda")
    def evaluate():
        time.sleep(3600)   # rank 1 wanders off and never reaches the next all_reduce
    for step in range(1, 100):
        g = (w @ w).sum(0).cpu()
        dist.all_reduce(g)
        print("rank %d step %d/100 loss %.4f" % (rank, step, float(g[0]) / 1e6), flush=True)
        if rank == 1 and step == 5:
            evaluate()
else:
    ps = [subprocess.Popen([sys.executable, __file__, "rank"], env=dict(os.environ, RANK=str(r))) for r in (0, 1)]
    [p.wait() for p in ps]
PY
cat > "$work/compile.py" <<'PY'
import torch
def big(x):
    for i in range(20000):
        x = torch.sin(x) * 1.0001 + (i % 7)
    return x
print("torch.compile of a 20000-op graph", flush=True)
f = torch.compile(big)
print(f(torch.randn(1024, device="cuda")).sum().item())
PY
run_case() {
  local name=$1 stall=$2; shift 2
  local runs="$work/runs-$name"
  local t0=$(date +%s.%N)
  TORCHINDUCTOR_CACHE_DIR="$work/inductor-$name" timeout 90 "$bin" run --stall-after "$stall" --grace 2s \
    --status-every 5s --runs-dir "$runs" -- python3 "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  local t1=$(date +%s.%N)
  local rd=$(ls -d "$runs"/* | head -1)
  mkdir -p "$out/$name"
  cp -r "$rd"/. "$out/$name/"
  rm -rf "$out/$name/.faultline-python"
  cp "$work/$name.out" "$out/$name/terminal.out"; cp "$work/$name.err" "$out/$name/terminal.err"
  python3 - "$out/$name/diagnosis.json" "$name" "$rc" "$t0" "$t1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])) if True else {}
st = d.get("stall") or {}
sk = st.get("stacks") or {}
ms = [p.get("capture_ms", 0) for p in sk.get("processes", [])]
print("%-10s exit %s in %.0f s: class %s, phase from stacks %s, %d processes, capture max %.1f ms" % (
    sys.argv[2], sys.argv[3], float(sys.argv[5]) - float(sys.argv[4]), st.get("class"), sk.get("phase"),
    len(ms), max(ms) if ms else -1))
for g in sk.get("groups", []): print("    ", g)
PY
}
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
run_case weights 12s "$work/weights.py" "$work"
run_case rendezvous 12s "$work/rendezvous.py"
run_case collective 12s "$work/collective.py"
run_case compile 10s "$work/compile.py"
rm -rf "$work"
