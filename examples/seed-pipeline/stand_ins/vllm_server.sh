#!/bin/sh
# Stand-in for `vllm serve` in the seed pipeline. SEED_MODE picks what happens:
#   ready (default)  replays a real vLLM 0.11 startup log, then answers /health
#   crash            replays the seed's crash (TP=2 x DP=2 on 2 visible GPUs) and exits 1
#   stall            replays the seed's second attempt (stops after distributed init),
#                    then two workers spin at 100% CPU like the seed's
here=$(dirname "$0")
root=$(cd "$here/../../.." && pwd)
port=${PORT:-8000}
case "${SEED_MODE:-ready}" in
  crash) exec python3 "$here/stand_in.py" --replay "$root/examples/seed-vllm-dp-rank/vllm.log" --delay 0.005 --then crash "$@" ;;
  stall) exec python3 "$here/stand_in.py" --replay "$root/tests/golden/vllm-stalled-startup/vllm.log" --delay 0.01 --then spin --workers 2 "$@" ;;
  *)     exec python3 "$here/stand_in.py" --replay "$here/vllm-0.11-startup.log" --delay 0.02 --then serve --port "$port" "$@" ;;
esac
