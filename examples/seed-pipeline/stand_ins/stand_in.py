#!/usr/bin/env python3
"""Stand-in for a GPU program (vLLM server, torchrun trainer) on a machine without GPUs.

It replays a real log (lines printed by real vLLM / PyTorch runs, kept in the
repository's fixtures) to stdout, then behaves like the failure or state under
test. Python standard library only.

  stand_in.py --replay LOG [--lines N] [--delay S] --then BEHAVIOUR [options]

BEHAVIOUR:
  exit         exit with --exit-code (0 by default)
  crash        exit with --exit-code (1 by default) right after the replay
  serve        answer GET /health with 200 on --port (a ready server), forever
  spin         --workers child processes loop at 100% CPU (the seed's stall)
  rendezvous   wait forever for peers: block in accept() on --port, other threads in futex
  read-weights read --weights FILE slowly (--rate bytes/s), then sleep holding it open
  ignore-term  ignore SIGTERM (a child too) and sleep: must be SIGKILLed after the grace period
  train        print --steps training steps (tqdm-like progress and loss lines), exit 0
"""
import argparse
import http.server
import os
import signal
import socket
import sys
import threading
import time


def replay(path, lines, delay):
    if not path:
        return
    out = sys.stdout.buffer  # bytes as they are in the log (CR LF, invalid UTF-8 and all)
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            if lines is not None and i >= lines:
                break
            out.write(line)
            out.flush()
            if delay:
                time.sleep(delay)


def serve(port):
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            code = 200 if self.path in ("/health", "/v1/models", "/") else 404
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, fmt, *args):  # uvicorn-style access line
            sys.stdout.write('(APIServer pid=%d) INFO:     127.0.0.1:%d - "%s" %s\n'
                             % (os.getpid(), self.client_address[1], self.requestline, args[1]))
            sys.stdout.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
    print("(APIServer pid=%d) INFO:     Started server process [%d]" % (os.getpid(), os.getpid()), flush=True)
    print("(APIServer pid=%d) INFO:     Waiting for application startup." % os.getpid(), flush=True)
    print("(APIServer pid=%d) INFO:     Application startup complete." % os.getpid(), flush=True)
    server.serve_forever()


def spin_forever():
    x = 0
    while True:
        x += 1


def spin(workers):
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            spin_forever()
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


def rendezvous(port):
    # Like a TCPStore server waiting for the other ranks: the main thread in
    # accept(), helper threads waiting on a lock (futex).
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)
    never = threading.Event()
    for _ in range(2):
        threading.Thread(target=never.wait, daemon=True).start()
    while True:
        conn, _ = srv.accept()
        conn.recv(1)  # a peer that connects but never speaks keeps us here


def write_weights(path, size):
    # Written before the log is replayed: on a machine busy writing, the
    # kernel can park this writer for seconds (dirty-page throttling), asleep
    # with no weight file read, after the log's last line, when the stall clock
    # runs; a stall test then saw a sleeper, not a slow reader.
    if path and not os.path.exists(path):
        with open(path, "wb") as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())


def read_weights(path, rate, size):
    write_weights(path, size)
    chunk = 64 * 1024
    with open(path, "rb") as f:
        while f.read(chunk):
            time.sleep(chunk / rate)
        time.sleep(3600)


def ignore_term():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    while True:
        time.sleep(1)


def train(steps, delay):
    for step in range(1, steps + 1):
        print("step %d/%d loss %.4f lr 0.0500" % (step, steps, 0.7 - step * 0.001), flush=True)
        time.sleep(delay)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--replay")
    p.add_argument("--lines", type=int)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--then", required=True,
                   choices=["exit", "crash", "serve", "spin", "rendezvous", "read-weights", "ignore-term", "train"])
    p.add_argument("--exit-code", type=int)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--weights")
    p.add_argument("--rate", type=float, default=128 * 1024)
    p.add_argument("--size", type=int, default=64 << 20)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--step-delay", type=float, default=0.05)
    p.add_argument("--startup-delay", type=float, default=0.0)
    args, _ = p.parse_known_args()  # a stand-in accepts the real program's flags too
    time.sleep(args.startup_delay)
    if args.then == "read-weights":
        write_weights(args.weights, args.size)
    replay(args.replay, args.lines, args.delay)
    if args.then in ("exit", "crash"):
        sys.exit(args.exit_code if args.exit_code is not None else (1 if args.then == "crash" else 0))
    if args.then == "serve":
        serve(args.port)
    elif args.then == "spin":
        spin(args.workers)
    elif args.then == "rendezvous":
        rendezvous(args.port)
    elif args.then == "read-weights":
        read_weights(args.weights, args.rate, args.size)
    elif args.then == "ignore-term":
        ignore_term()
    elif args.then == "train":
        train(args.steps, args.step_delay)


if __name__ == "__main__":
    main()
