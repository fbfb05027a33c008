#!/bin/sh
# Stand-in for the DFlash trainer of the seed pipeline: checks that the server
# answers, then prints training steps and exits 0.
here=$(dirname "$0")
port=${PORT:-8000}
python3 - "$port" <<'PY'
import sys, urllib.request
with urllib.request.urlopen("http://127.0.0.1:%s/health" % sys.argv[1], timeout=5) as r:
    print("hidden-state server answered /health with %d" % r.status, flush=True)
PY
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES}"
exec python3 "$here/stand_in.py" --then train --steps "${STEPS:-20}" --step-delay 0.05
