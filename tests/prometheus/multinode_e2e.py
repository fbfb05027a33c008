#!/usr/bin/env python3
"""End-to-end: a real Prometheus scraping four faultline instances that stand
for the four nodes of one Slurm job.

Each "node" is `faultline run --metrics 127.0.0.1:PORT` (with SLURM_JOB_ID,
SLURM_NODEID, SLURM_PROCID set as srun sets them) wrapping a stand-in
launcher that starts two real Python worker ranks. Prometheus (loopback,
random free ports, 1 s scrape and rule evaluation, deploy/prometheus's alert
rules) scrapes them. Once every target is up, rank 7 on node 3 fails (a real
json.JSONDecodeError traceback). The test asserts through Prometheus's HTTP
API that the failure shows (faultline_service_state{state=~"exited|died",
node_id="3"}) and that FaultlineRankDied fires for node 3 and no other node,
prints the timeline (failure -> series visible -> alert firing, seconds), then
runs `faultline triage` over the four nodes' run directories and asserts it
names node 3's rank 7.

Bounded: every stage has its own deadline (start-up, failure seen, alert
firing, shutdown, triage), so a slow start on a loaded machine does not eat the
time the failure is given; the whole test takes well under 30 s on an idle
machine. Every process it starts is stopped in `finally`.
Exit 0 pass, 1 fail, 77 skip (no prometheus binary).
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = 4
RANKS_PER_NODE = 2
FAIL_NODE = 3
FAIL_RANK = FAIL_NODE * RANKS_PER_NODE + 1  # 7


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=2) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def alerts(prom):
    with urllib.request.urlopen(f"http://127.0.0.1:{prom}/api/v1/alerts", timeout=2) as r:
        return json.load(r)["data"]["alerts"]


def wait_for(what, fn, deadline, step=0.1):
    last_error = None
    while time.monotonic() < deadline:
        try:
            v = fn()
            if v:
                return v
        except Exception as e:  # Prometheus not up yet
            last_error = e
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what} (last error: {last_error})")


def describe_tree(root):
    """What a failed attempt leaves to explain it: every process under node 3's
    faultline with its state and kernel wait channel, each faultline thread's
    wait channel, and (where gdb is installed) faultline's stacks."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            continue

    def show(pid, depth):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:160]
        except OSError as e:
            print(f"{'  ' * depth}{pid}: {e}")
            return
        state = stat[stat.rindex(")") + 2]
        print(f"{'  ' * depth}{pid} {state} wchan={wchan} {cmd}")
        for c in children.get(pid, []):
            show(c, depth + 1)
    print(f"--- processes under node {FAIL_NODE}'s faultline (pid {root})")
    show(root, 0)
    try:
        for tid in sorted(os.listdir(f"/proc/{root}/task")):
            with open(f"/proc/{root}/task/{tid}/wchan") as f:
                print(f"  thread {tid} wchan={f.read()}")
    except OSError as e:
        print(f"  threads: {e}")
    gdb = shutil.which("gdb")
    if gdb:
        r = subprocess.run([gdb, "-p", str(root), "-batch", "-ex", "thread apply all bt"], capture_output=True,
                           text=True, timeout=60)
        print(r.stdout[-6000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultline", required=True)
    ap.add_argument("--rules", required=True, help="deploy/prometheus/faultline-rules.yml")
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--keep", help="copy the job directory here (for inspection)")
    args = ap.parse_args()
    args.faultline = os.path.abspath(args.faultline)
    prometheus = shutil.which(args.prometheus)
    if not prometheus:
        print("SKIP: no prometheus binary (scripts/bootstrap installs Debian's prometheus)")
        return 77

    t0 = time.monotonic()

    def budget(seconds):  # one stage's deadline, counted from when the stage starts
        return time.monotonic() + seconds
    work = tempfile.mkdtemp(prefix="faultline-prom-e2e-")
    job = os.path.join(work, "job-4242")
    procs = []
    nodes = []
    try:
        ports = [free_port() for _ in range(NODES)]
        prom_port = free_port()
        trigger = os.path.join(work, "fail-now")
        index = os.path.join(work, "model.safetensors.index.json")
        with open(index, "w") as f:
            f.write('{"metadata": {"total_size": 1000}, "weight_map": {"a": "model-0')  # cut short

        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - {os.path.abspath(args.rules)}
scrape_configs:
  - job_name: faultline
    static_configs:
      - targets: [{", ".join(f"'127.0.0.1:{p}'" for p in ports)}]
""")
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        procs.append(subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{prom_port}", "--web.enable-lifecycle"],
            stdout=prom_log, stderr=subprocess.STDOUT))

        for n in range(NODES):
            node_dir = os.path.join(job, f"node{n}")
            os.makedirs(node_dir)
            env = dict(os.environ, SLURM_JOB_ID="4242", SLURM_NODEID=str(n), SLURM_PROCID=str(n),
                       SLURM_NTASKS=str(NODES))
            cmd = [args.faultline, "run", "--no-gpu", "--interval", "0.5s", "--status-every", "0",
                   "--stall-after", "5m", "--grace", "2s", "--runs-dir", os.path.join(node_dir, "runs"),
                   "--metrics", f"127.0.0.1:{ports[n]}", "--metrics-linger", "10s", "--",
                   sys.executable, "-u", os.path.join(HERE, "standin_launcher.py"), "--node", str(n),
                   "--ranks-per-node", str(RANKS_PER_NODE), "--fail-rank", str(FAIL_RANK),
                   "--fail-when", trigger, "--checkpoint-index", index]
            out = open(os.path.join(work, f"node{n}.faultline.out"), "w")  # outside the job directory triage reads
            p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=node_dir)
            procs.append(p)
            nodes.append(p)

        # Every node's faultline is scraped and its ranks are training.
        deadline = budget(90)  # four sanitizer builds and Prometheus starting on two loaded cores
        wait_for("4 faultline targets up", lambda: len([r for r in query(prom_port, 'up{job="faultline"} == 1')]) == NODES,
                 deadline)
        wait_for("every node running", lambda: len(query(
            prom_port, 'faultline_service_state{state="running",job_id="4242"} == 1')) == NODES, deadline)
        t_up = time.monotonic()

        # Rank 7 on node 3 fails now.
        open(trigger, "w").close()
        t_fail = time.monotonic()
        deadline = budget(30)
        failed = wait_for("node 3's failure in Prometheus", lambda: query(
            prom_port, 'faultline_service_state{state=~"exited|died",job_id="4242"} == 1'), deadline, 0.05)
        t_visible = time.monotonic()
        assert {r["metric"]["node_id"] for r in failed} == {str(FAIL_NODE)}, failed
        assert failed[0]["metric"]["rank"] == str(FAIL_NODE), failed

        def firing():
            return [a for a in alerts(prom_port) if a["labels"].get("alertname") == "FaultlineRankDied"
                    and a["state"] == "firing"]
        deadline = budget(30)
        fired = wait_for("FaultlineRankDied firing", firing, deadline, 0.05)
        t_firing = time.monotonic()
        assert len(fired) == 1 and fired[0]["labels"]["node_id"] == str(FAIL_NODE), fired
        assert fired[0]["labels"]["job_id"] == "4242" and fired[0]["labels"]["instance"] == f"127.0.0.1:{ports[FAIL_NODE]}"
        summary = fired[0]["annotations"]["summary"]

        # Every query of the Grafana dashboard parses and runs against the live series.
        with open(os.path.join(os.path.dirname(os.path.abspath(args.rules)), "grafana-faultline.json")) as f:
            dashboard = json.load(f)
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                query(prom_port, target["expr"].replace("$job_id", ".*").replace("$node_id", ".*"))

        # Node 3's faultline ends by itself (diagnosis, stop, one last scrape); the others run on.
        deadline = budget(60)
        rc3 = nodes[FAIL_NODE].wait(timeout=max(1, deadline - time.monotonic()))
        assert rc3 == 1, f"node 3's faultline exited {rc3}"
        for n, p in enumerate(nodes):
            if n != FAIL_NODE:
                assert p.poll() is None, f"node {n}'s faultline ended early ({p.returncode})"
        # The page stays up after node 3's series went stale.
        time.sleep(1.5)
        assert firing(), "the alert resolved when node 3's faultline stopped serving"
        for n, p in enumerate(nodes):
            if n != FAIL_NODE:
                p.send_signal(signal.SIGINT)  # the job is cancelled: scancel sends SIGINT/SIGTERM to srun's tasks
        for n, p in enumerate(nodes):
            p.wait(timeout=max(1, deadline - time.monotonic()))

        # One answer for the whole job: triage over the four nodes' run directories.
        deadline = budget(60)
        triage = subprocess.run([args.faultline, "triage", "--json", job], capture_output=True, text=True,
                                timeout=max(1, deadline - time.monotonic()))
        assert triage.returncode == 1, (triage.returncode, triage.stderr)
        report = json.loads(triage.stdout)
        rc = report["root_cause"]
        assert f"node{FAIL_NODE}/" in rc["file"], rc
        assert rc["process"].get("rank") == FAIL_RANK, rc
        assert "JSONDecodeError" in (rc.get("exception") or "") + rc["message"], rc
        t_end = time.monotonic()

        timeline = {
            "targets_up_s": round(t_up - t0, 2),
            "failure_to_series_visible_s": round(t_visible - t_fail, 2),
            "failure_to_alert_firing_s": round(t_firing - t_fail, 2),
            "total_s": round(t_end - t0, 2),
            "alert": summary,
            "triage_root_cause": {"file": os.path.relpath(rc["file"], work) if os.path.isabs(rc["file"]) else rc["file"],
                                  "line": rc["line"], "rank": rc["process"].get("rank"), "message": rc["message"]},
        }
        print(json.dumps(timeline, indent=2))
        if args.keep:
            shutil.copytree(job, args.keep, dirs_exist_ok=True)
        return 0
    except AssertionError as e:
        print(f"FAIL: {e}")
        if len(nodes) > FAIL_NODE:
            describe_tree(nodes[FAIL_NODE].pid)
        for root, _, files in os.walk(work):
            for name in files:
                if name.endswith((".out", ".log")) and "tsdb" not in root:
                    path = os.path.join(root, name)
                    print(f"--- {path}")
                    with open(path, errors="replace") as f:
                        print(f.read()[-3000:])
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


def main_with_one_retry():
    # On CI's loaded 2 cores node 3's death did not show within 30 s now and then: its faultline stopped
    # serving the moment the handler of the scrape after the end returned, and the stop now and then cut
    # that answer off (an empty reply: Prometheus recorded a failed scrape, then the series went stale).
    # MetricsOutput::Finish now waits until a scrape that began after the end was sent in full
    # (MetricsTest.FinishServesTheEndToOneMoreScrapeThenStops failed 3 runs of 5 before). The retry stays
    # for other load effects (Prometheus itself starved of CPU); a failed first attempt prints node 3's
    # process tree and the scenario runs once more from scratch; two failures fail the test.
    rc = main()
    if rc == 1:
        print("FLAKE? first attempt failed; running the scenario once more", flush=True)
        rc = main()
    return rc


if __name__ == "__main__":
    sys.exit(main_with_one_retry())
