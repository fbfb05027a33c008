#!/usr/bin/env python3
"""A stand-in for torchrun on one node: starts --ranks-per-node worker
processes (real Python processes), prefixes each one's output with
"[rank<N>]:" as torchrun's --tee does, and, like torchelastic, stops the
others and exits 1 when one worker fails.

A worker prints a training-style progress line every 0.3 s. The worker whose
global rank is --fail-rank, once the file --fail-when exists, reads the
checkpoint index it was given (a truncated JSON file the test wrote): the real
json module raises, and Python prints the real traceback.

With --peer-port, the failing rank listens on that port while it lives and
--peer-rank connects to it every step: once the failing rank is gone, the
real socket module refuses the connection, and after a few refusals that
rank fails too (a consequence, seconds later, on another node).
"""
import argparse
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time


def worker(args):
    # --log-times: Python's logging with its real timestamps (the node's clock, skewed or not).
    logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s" if args.log_times else "%(message)s")
    if args.clock_offset:  # this node's clock, as libfaketime gives it to faultline here
        logging.Formatter.converter = staticmethod(lambda t: time.localtime(t + args.clock_offset))
    log = logging.getLogger("worker")
    listener = None
    if args.rank == args.fail_rank and args.peer_port:
        listener = socket.create_server(("127.0.0.1", args.peer_port))  # its peers connect while it lives

        def serve():
            while True:
                listener.accept()[0].close()
        threading.Thread(target=serve, daemon=True).start()
    refused = 0
    connected = False
    step = 0
    while True:
        if args.rank == args.fail_rank and args.fail_when and os.path.exists(args.fail_when):
            try:
                with open(args.checkpoint_index) as f:
                    index = json.load(f)  # raises json.decoder.JSONDecodeError on the truncated file
            except Exception:
                log.exception("rank %d: reading the checkpoint index failed", args.rank)
                sys.exit(1)
            log.info("loaded %d", len(index))
        if args.peer_of >= 0 and args.peer_port:
            try:
                socket.create_connection(("127.0.0.1", args.peer_port), timeout=1).close()
                connected, refused = True, 0
            except ConnectionRefusedError:
                refused += 1
                if connected and refused >= 8:  # the peer is gone for good: give up as a collective would
                    log.exception("rank %d: lost rank %d", args.rank, args.peer_of)
                    sys.exit(1)
        log.info(f"step {step}/100000 loss={1.0 / (step + 1):.4f}")
        step += 1
        time.sleep(0.3)


def launcher(args):
    procs = []
    for local in range(args.ranks_per_node):
        rank = args.node * args.ranks_per_node + local
        cmd = [sys.executable, "-u", __file__, "--rank", str(rank), "--fail-rank", str(args.fail_rank),
               "--fail-when", args.fail_when, "--checkpoint-index", args.checkpoint_index,
               "--peer-port", str(args.peer_port), "--clock-offset", str(args.clock_offset)]
        if args.log_times:
            cmd.append("--log-times")
        if rank == args.peer_rank:
            cmd += ["--peer-of", str(args.fail_rank)]
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
    ap.add_argument("--log-times", action="store_true", help="timestamped lines (Python logging)")
    ap.add_argument("--peer-port", type=int, default=0, help="--fail-rank listens here while it lives")
    ap.add_argument("--peer-rank", type=int, default=-1, help="this rank connects to --fail-rank's port")
    ap.add_argument("--peer-of", type=int, default=-1)
    ap.add_argument("--clock-offset", type=float, default=0.0)
    args = ap.parse_args()
    # Under libfaketime (FAKETIME="+120s": a node whose clock is ahead), CPython's
    # sleeps fail (clock_nanosleep EINVAL): run un-preloaded, and print the node's
    # skewed time through logging instead.
    fake = os.environ.get("FAKETIME", "")
    if fake and args.rank < 0 and not args.clock_offset:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC")}
        offset = float(fake.rstrip("s"))
        os.execve(sys.executable, [sys.executable, "-u", os.path.abspath(__file__)] + sys.argv[1:] +
                  ["--clock-offset", str(offset)], env)
    if args.rank >= 0:
        worker(args)
    else:
        launcher(args)


if __name__ == "__main__":
    main()
