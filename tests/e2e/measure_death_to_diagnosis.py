#!/usr/bin/env python3
"""Measures wait-ready's time from a process's death to its diagnosis (5 runs).

  tests/e2e/measure_death_to_diagnosis.py FAULTLINE

The stand-in replays the seed's crash log and exits 1; the death time is taken
with waitid(WNOWAIT) in this process (its parent), the diagnosis times when
wait-ready prints its first line and when it exits after the full triage.
"""
import subprocess, sys, time, os, socket, threading
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
fl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "faultline")
standin = os.path.join(root, "examples/seed-pipeline/stand_ins/stand_in.py")
log_fixture = os.path.join(root, "examples/seed-vllm-dp-rank/vllm.log")
res = []
for i in range(5):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    log = "/tmp/faultline-death-%d.log" % os.getpid()
    p = subprocess.Popen(["python3", standin, "--replay", log_fixture, "--startup-delay", "1.0", "--then", "crash"], stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    died = {}
    def waiter():
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT); died["t"] = time.monotonic()
    th = threading.Thread(target=waiter); th.start()
    w = subprocess.Popen([fl, "wait-ready", "--url", "http://127.0.0.1:%d/health" % port, "--pid", str(p.pid), "--log", log, "--no-gpu", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = None
    for line in w.stdout:
        if first is None: first = time.monotonic()
    w.wait(); end = time.monotonic(); th.join(); p.wait()
    res.append((first - died["t"], end - died["t"], w.returncode))
for r in res: print("death->first line %.3f s, death->exit (full diagnosis) %.3f s, exit %d" % r)
