#!/usr/bin/env python3
"""A stand-in for torchrun on one node: starts --ranks-per-node worker
processes (real Python processes), prefixes each one's output with
"[rank<N>]:" as torchrun's --tee does, and, like torchelastic, stops the
others and exits 1 when one worker fails.

A worker prints a training-style progress line every 0.3 s. The worker whose
global rank is --fail-rank, once the file --fail-when exists, reads the
checkpoint index it was given (a truncated JSON file the test wrote): the real
json module raises, and Python prints the real traceback.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time


def worker(args):
    step = 0
    while True:
        if args.rank == args.fail_rank and args.fail_when and os.path.exists(args.fail_when):
            with open(args.checkpoint_index) as f:
                index = json.load(f)  # raises json.decoder.JSONDecodeError on the truncated file
            print("loaded", len(index), flush=True)
        print(f"step {step}/100000 loss={1.0 / (step + 1):.4f}", flush=True)
        step += 1
        time.sleep(0.3)


def launcher(args):
    procs = []
    for local in range(args.ranks_per_node):
        rank = args.node * args.ranks_per_node + local
        cmd = [sys.executable, "-u", __file__, "--rank", str(rank), "--fail-rank", str(args.fail_rank),
               "--fail-when", args.fail_when, "--checkpoint-index", args.checkpoint_index]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append((rank, p))

    def tee(rank, p):
        for line in p.stdout:
            sys.stdout.write(f"[rank{rank}]:{line}")
            sys.stdout.flush()

    threads = [threading.Thread(target=tee, args=rp, daemon=True) for rp in procs]
    for t in threads:
        t.start()
    while True:
        for rank, p in procs:
            rc = p.poll()
            if rc is not None and rc != 0:
                for t in threads:
                    t.join(timeout=2)
                for _, other in procs:
                    if other.poll() is None:
                        other.terminate()
                print(f"worker rank {rank} failed with exit code {rc}", file=sys.stderr, flush=True)
                sys.exit(1)
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", type=int, default=0)
    ap.add_argument("--ranks-per-node", type=int, default=2)
    ap.add_argument("--rank", type=int, default=-1)
    ap.add_argument("--fail-rank", type=int, default=-1)
    ap.add_argument("--fail-when", default="")
    ap.add_argument("--checkpoint-index", default="")
    args = ap.parse_args()
    if args.rank >= 0:
        worker(args)
    else:
        launcher(args)


if __name__ == "__main__":
    main()
