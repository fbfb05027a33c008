#!/usr/bin/env python3
"""Cross-node triage with a skewed clock.

Four "nodes" (faultline run, as in multinode_e2e.py) each supervise two real
Python worker ranks that log with Python's logging timestamps. Node 3's
clock is two minutes ahead, as on a node whose NTP is broken: its faultline
runs under libfaketime (FAKETIME=+120s) and its ranks print that clock
(libfaketime breaks CPython's sleeps, so the stand-in applies the same offset
to its logging timestamps). Rank 7 (node 3)
fails first (a real JSONDecodeError); rank 2 (node 1) fails seconds later
because rank 7 is gone (the real socket module refuses its connection).

By the printed timestamps rank 2 failed first (node 3's clock is ahead), so
the test first checks that the raw logs do mislead, then that
`faultline triage` over the four run directories anchors each node's clock
(here on each faultline run's start: the tasks of a step start together),
names rank 7 on node 3, and says which node's clock it corrected.
Exit 0 pass, 1 fail, 77 skip (no libfaketime).
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKEW_S = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, deadline, step=0.1):
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def error_time(log_text):
    """The timestamp of the first ERROR line, as printed (node clock)."""
    m = re.search(r"^\[rank\d+\]:(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ERROR", log_text, re.M)
    return time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%d %H:%M:%S")) + int(m.group(1)[20:]) / 1000 if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultline", required=True)
    args = ap.parse_args()
    faultline = os.path.abspath(args.faultline)
    libs = glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
    if not libs:
        print("SKIP: no faketime (Debian package faketime; scripts/bootstrap installs it)")
        return 77
    deadline = time.monotonic() + 50
    work = tempfile.mkdtemp(prefix="faultline-skew-")
    job = os.path.join(work, "job-4243")
    procs = []
    try:
        trigger = os.path.join(work, "fail-now")
        index = os.path.join(work, "model.safetensors.index.json")
        with open(index, "w") as f:
            f.write('{"metadata": {"total_size": 1000}, "weight_map": {"a": "model-0')  # cut short
        peer_port = free_port()
        nodes = []
        for n in range(4):
            node_dir = os.path.join(job, f"node{n}")
            os.makedirs(node_dir)
            env = dict(os.environ, SLURM_JOB_ID="4243", SLURM_NODEID=str(n), SLURM_PROCID=str(n))
            cmd = [faultline, "run", "--no-gpu", "--status-every", "0", "--grace", "2s",
                   "--runs-dir", os.path.join(node_dir, "runs"), "--",
                   sys.executable, "-u", os.path.join(HERE, "standin_launcher.py"), "--node", str(n),
                   "--fail-rank", "7", "--peer-rank", "2", "--peer-port", str(peer_port), "--log-times",
                   "--fail-when", trigger, "--checkpoint-index", index]
            if n == 3:  # the whole node's clock is ahead: faultline's (libfaketime) and its ranks' (logging)
                env.update(LD_PRELOAD=libs[0], FAKETIME=f"+{SKEW_S}s")
                # A sanitizer build's faultline must accept libfaketime ahead of its runtime.
                env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0"]))
            out = open(os.path.join(work, f"node{n}.out"), "w")
            p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
            procs.append(p)
            nodes.append(p)

        def logs():
            return sorted(glob.glob(os.path.join(job, "node*/runs/*/*.log")))

        def training():
            found = logs()
            return len(found) == 4 and all(open(p).read().count(" step ") >= 6 for p in found)
        wait_for("every node training", training, deadline)
        open(trigger, "w").close()
        assert nodes[3].wait(timeout=max(1, deadline - time.monotonic())) == 1, "node 3 should diagnose rank 7"
        assert nodes[1].wait(timeout=max(1, deadline - time.monotonic())) == 1, "node 1 should diagnose rank 2"
        for n in (0, 2):
            nodes[n].send_signal(signal.SIGINT)
            nodes[n].wait(timeout=max(1, deadline - time.monotonic()))

        # As printed, rank 2 (node 1) failed before rank 7 (node 3): the skew misleads.
        raw = {}
        for path in logs():
            node = re.search(r"/node(\d)/", path).group(1)
            raw[node] = error_time(open(path).read())
        assert raw["3"] is not None and raw["1"] is not None, raw
        assert raw["1"] < raw["3"], f"node 3's clock should print its error after node 1's: {raw}"

        triage = subprocess.run([faultline, "triage", "--json", job], capture_output=True, text=True,
                                timeout=max(1, deadline - time.monotonic()))
        assert triage.returncode == 1, (triage.returncode, triage.stderr)
        report = json.loads(triage.stdout)
        rc = report["root_cause"]
        assert "/node3/" in rc["file"] and rc["process"].get("rank") == 7, rc
        skew = [w for w in report.get("warnings", []) if w.startswith("clock skew")]
        assert len(skew) == 1 and "/node3/" in skew[0] and "ahead" in skew[0], report.get("warnings")
        text = subprocess.run([faultline, "triage", "--color", "never", job], capture_output=True, text=True,
                              timeout=max(1, deadline - time.monotonic())).stdout
        print(json.dumps({"printed_error_times_node1_minus_node3_s": round(raw["1"] - raw["3"], 2),
                          "root_cause": {"file": os.path.relpath(rc["file"], work), "line": rc["line"],
                                         "rank": rc["process"].get("rank"), "message": rc["message"]},
                          "skew_warning": skew[0].replace(work + "/", "")}, indent=2))
        print(text.replace(work + "/", ""))
        return 0
    except AssertionError as e:
        print(f"FAIL: {e}")
        for path in sorted(glob.glob(os.path.join(work, "*.out")) + glob.glob(os.path.join(job, "node*/runs/*/*.log"))):
            print(f"--- {path}")
            print(open(path, errors="replace").read()[-2500:])
        return 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
