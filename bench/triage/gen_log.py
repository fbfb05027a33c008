#!/usr/bin/env python3
"""Writes a large multi-process vLLM-style log for the triage benchmark.

The noise is the INFO/WARNING traffic of a serving job (API servers, engine
cores, workers, NCCL lines) with a few harmless warnings; near the end one
worker fails with the seed incident's traceback and the engine/front-end
cascade follows. Deterministic for a given size.

usage: gen_log.py OUT SIZE_MB
"""
import random
import sys

out_path, size_mb = sys.argv[1], int(sys.argv[2])
target = size_mb * 1024 * 1024
rng = random.Random(42)

procs = ["(APIServer pid=6689) ", "(EngineCore_DP0 pid=6687) ", "(Worker_TP0 pid=7497) ",
         "(Worker_TP1 pid=7498) ", ""]
templates = [
    "INFO 05-09 15:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: {a:.1f} tokens/s, Avg generation throughput: {b:.1f} tokens/s, Running: {r} reqs, Waiting: 0 reqs, GPU KV cache usage: {c:.1f}%, Prefix cache hit rate: {d:.1f}%",
    "INFO 05-09 15:{m:02d}:{s:02d} [metrics.py:86] Avg prompt throughput: {a:.1f} tokens/s, Running: {r} reqs",
    "INFO:     127.0.0.1:{p} - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "INFO 05-09 15:{m:02d}:{s:02d} [async_llm.py:261] Added request cmpl-{h:032x}-0.",
    "DEBUG 05-09 15:{m:02d}:{s:02d} [core.py:412] EngineCore loop active, {r} requests scheduled",
    "gpu-node-1:7497:7611 [0] NCCL INFO Channel {r:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
    "WARNING 05-09 15:{m:02d}:{s:02d} [scheduler.py:239] Sequence group cmpl-{h:032x} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
]
weights = [30, 10, 30, 20, 5, 3, 2]

failure = open(sys.argv[3] if len(sys.argv) > 3 else
               __file__.replace("bench/triage/gen_log.py", "examples/seed-vllm-dp-rank/vllm.log"),
               encoding="utf-8").read().splitlines()[25:]  # the seed's failure and its cascade

written = 0
with open(out_path, "w", encoding="utf-8") as f:
    buf = []
    fail_at = target - 64 * 1024
    failed = False
    while written < target:
        if not failed and written >= fail_at:
            for line in failure:
                buf.append(line + "\n")
            failed = True
        t = rng.choices(templates, weights)[0]
        line = rng.choice(procs) + t.format(m=rng.randrange(60), s=rng.randrange(60), a=rng.random() * 900,
                                            b=rng.random() * 90, r=rng.randrange(64), c=rng.random() * 100,
                                            d=rng.random() * 100, p=rng.randrange(30000, 60000),
                                            h=rng.getrandbits(128)) + "\n"
        buf.append(line)
        written += len(line)
        if len(buf) >= 4096:
            f.write("".join(buf))
            buf.clear()
    f.write("".join(buf))
