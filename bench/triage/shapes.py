#!/usr/bin/env python3
"""Triage benchmark on every log shape: one table, all contenders in one run.

Each shape is a generated input built from real lines (copied from the logs
in tests/golden/ and examples/, with their counters varied) with one real
failure log (a golden test's log, verbatim) placed near the end. The root
cause faultline reports is checked against that golden test's expected
root cause.

For every shape the same input is given to `grep -icE PATTERN`, `rg -j1 -ic
PATTERN`, `rg -ic PATTERN` (default threads) and `faultline triage --json`;
each is run RUNS times and the median wall time is shown, with faultline's
peak RSS (its own, from wait4). Output of every contender goes to a pipe
(GNU grep stops at the first match when its output is /dev/null).

usage: shapes.py FAULTLINE_BINARY [--mb N] [--runs N] [--only a,b] [--work DIR]
                 [--baseline OTHER_FAULTLINE_BINARY]
"""
import argparse
import functools
import gzip
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(ROOT, "tests", "golden")
PATTERN = "error|OOM|memory|CUDA|torch.*cuda|out of|Cannot"


def golden_log(name):
    d = os.path.join(GOLDEN, name)
    logs = [f for f in sorted(os.listdir(d)) if f.endswith(".log")]
    with open(os.path.join(d, logs[0]), encoding="utf-8", newline="") as f:
        return f.read()


def golden_root(name):
    with open(os.path.join(GOLDEN, name, "expected.json"), encoding="utf-8") as f:
        return json.load(f)["root_cause"]["message"]


# A process prefix keeps its digits (a pid, a rank): varying it would make
# every line a new process.
PREFIX = re.compile(r"^(\((\w+) pid=\d+\) |[\w.-]+:\d+:\d+ \[\d+\] |\[rank\d+\]:|\[default\d+\]:)")
# Counters: a number after a space, '=', '(', ',' or ':' that is not part of
# a word; timestamps are kept as they are (they order events).
DIGITS = re.compile(r"(?<=[ =(,:])\d+(?![\w-])")
TIMES = re.compile(r"\d{2,4}-\d\d(-\d\d)?[ T]\d\d:\d\d:\d\d(\.\d+)?|[WIEF]\d{4} \d\d:\d\d:\d\d\.\d+|\d\d:\d\d:\d\d")


class Varied:
    """A real line whose digit runs (outside the process prefix) get random
    values of the same width on every use."""

    def __init__(self, line):
        m = PREFIX.match(line)
        head = m.group(0) if m else ""
        rest = line[len(head):]
        self.head = head
        self.parts = []
        self.widths = []
        pos = 0
        kept = [(t.start(), t.end()) for t in TIMES.finditer(rest)]
        for d in DIGITS.finditer(rest):
            if any(a <= d.start() < b for a, b in kept):
                continue
            self.parts.append(rest[pos:d.start()])
            self.widths.append(len(d.group(0)))
            pos = d.end()
        self.tail = rest[pos:]

    def render(self, rng):
        out = [self.head]
        for part, w in zip(self.parts, self.widths):
            out.append(part)
            out.append(str(rng.randrange(10 ** w)).zfill(w))
        out.append(self.tail)
        return "".join(out)


def pool_of(lines):
    return [Varied(l) for l in lines if l.strip()]


def write_with_failure(path, size, next_line, failure, rng, fail_frac=0.97):
    """Writes lines from next_line() until size bytes, the failure text at
    fail_frac of the way (at the end when fail_frac is 1)."""
    written = 0
    fail_at = int(size * fail_frac)
    failed = False
    with open(path, "w", encoding="utf-8", newline="") as f:
        buf = []
        while written < size:
            if not failed and written >= fail_at:
                buf.append(failure if failure.endswith("\n") else failure + "\n")
                failed = True
            line = next_line()
            buf.append(line)
            written += len(line)
            if len(buf) >= 8192:
                f.write("".join(buf))
                buf.clear()
        if not failed:
            buf.append(failure)
        f.write("".join(buf))


def step_line(rng, n, total):
    # train_ddp.py's print in tests/golden/torch-*: "step 2/20 loss 0.6900 lr 0.0500"
    return f"step {n}/{total} loss {rng.uniform(0.2, 0.8):.4f} lr 0.0500\n"


def gen_serving(path, size, rng):
    # the existing serving-noise generator (vLLM serving traffic + the seed failure)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_log.py"), path, str(size >> 20),
                    os.path.join(ROOT, "examples", "seed-vllm-dp-rank", "vllm.log")], check=True)


def gen_nccl(path, size, rng):
    text = golden_log("nccl-healthy-1gpu") + golden_log("nccl-duplicate-gpu")
    pool = pool_of([l for l in text.splitlines() if " NCCL INFO " in l])
    # NCCL_DEBUG=INFO from 8 ranks: host:pid:tid [dev]
    prefixes = [f"gpu-node-{i // 8}:{4100 + i}:{4100 + i} [{i % 8}] " for i in range(8)]
    pool_rest = [p.render for p in pool]

    def line():
        s = rng.choice(pool_rest)(rng)
        return rng.choice(prefixes) + s.split("] ", 1)[1] + "\n"

    write_with_failure(path, size, line, golden_log("nccl-duplicate-gpu"), rng)


def gen_steps(path, size, rng):
    state = {"n": 0}

    def line():
        state["n"] += 1
        return step_line(rng, state["n"], 1000000)

    write_with_failure(path, size, line, golden_log("torch-segfault"), rng, fail_frac=1.0)


def gen_tqdm(path, size, rng):
    # tqdm bar redrawn with \r, a print after it (tests/golden/torch-healthy-training)
    bars = " ▏▎▍▌▋▊▉█"
    state = {"n": 0}
    total = 1000000

    def line():
        parts = []
        for _ in range(rng.randrange(1, 6)):
            state["n"] += 1
            n = state["n"]
            pct = n * 100 // total
            bar = ("█" * (pct // 10) + bars[rng.randrange(9)]).ljust(10)[:10]
            parts.append(f"\rtrain: {pct:3d}%|{bar}| {n}/{total} [{rng.randrange(60):02d}:{rng.randrange(60):02d}"
                         f"<{rng.randrange(60):02d}:{rng.randrange(60):02d}, {rng.uniform(1, 9):5.2f}it/s]")
        return "".join(parts) + step_line(rng, state["n"] + 1, total)

    write_with_failure(path, size, line, golden_log("cuda-device-side-assert"), rng, fail_frac=1.0)


def gen_rank_steps(path, size, rng):
    # torchrun --log-line-prefix-template '[rank${rank}]:' over 8 ranks
    state = {"n": 0}

    def line():
        state["n"] += 1
        return f"[rank{state['n'] % 8}]:" + step_line(rng, state["n"] // 8 + 1, 1000000)

    write_with_failure(path, size, line, golden_log("torchrun-rank-raises"), rng, fail_frac=1.0)


def gen_vllm_phases(path, size, rng):
    pool = pool_of(golden_log("vllm-healthy-startup").replace("\r", "\n").splitlines())
    state = {"i": 0}

    def line():  # the start-up sequence over and over (a restarting server)
        v = pool[state["i"] % len(pool)]
        state["i"] += 1
        return v.render(rng) + "\n"

    write_with_failure(path, size, line, golden_log("vllm-kv-cache-too-small"), rng)


def gen_warn_spam(path, size, rng):
    healthy = golden_log("torch-healthy-training").splitlines()
    warns = []  # "file:line: UserWarning: ..." and the source line Python prints under it
    for i, l in enumerate(healthy):
        if "Warning: " in l and i + 1 < len(healthy) and healthy[i + 1].startswith("  "):
            warns.append(l + "\n" + healthy[i + 1] + "\n")
    state = {"n": 0}

    def line():
        state["n"] += 1
        if state["n"] % 50 == 0:
            return rng.choice(warns)
        return step_line(rng, state["n"], 1000000)

    write_with_failure(path, size, line, golden_log("torch-cuda-oom"), rng, fail_frac=1.0)


def gen_dir(path, size, rng, nfiles):
    os.makedirs(path, exist_ok=True)
    per = max(size // nfiles, 4096)
    bad = nfiles * 5 // 8
    nccl = pool_of([l for l in golden_log("nccl-healthy-1gpu").splitlines() if " NCCL INFO " in l])
    for r in range(nfiles):
        state = {"n": 0}
        prefix = f"gpu-node-{r // 8}:{5000 + r}:{5000 + r} [{r % 8}] "

        def line():
            state["n"] += 1
            if state["n"] % 20 == 0:
                return prefix + rng.choice(nccl).render(rng).split("] ", 1)[1] + "\n"
            return step_line(rng, state["n"], 1000000)

        failure = golden_log("torchrun-rank-raises") if r == bad else ""
        write_with_failure(os.path.join(path, f"rank{r:03d}.log"), per, line, failure, rng)


def compress(src, dst, tool):
    with open(dst, "wb") as out:
        subprocess.run([tool, "-c", "-1" if tool == "gzip" else "-3", "-q", src], stdout=out, check=True)


SEED = golden_root("vllm-seed-dp-rank") if os.path.isdir(os.path.join(GOLDEN, "vllm-seed-dp-rank")) else None
# name -> (generator or source shape, expected root cause, how the input is given)
SHAPES = [
    ("serving", gen_serving, SEED, "file"),
    ("nccl-info", gen_nccl, golden_root("nccl-duplicate-gpu"), "file"),
    ("train-steps", gen_steps, golden_root("torch-segfault"), "file"),
    ("tqdm", gen_tqdm, golden_root("cuda-device-side-assert"), "file"),
    ("rank-steps", gen_rank_steps, golden_root("torchrun-rank-raises"), "file"),
    ("vllm-phases", gen_vllm_phases, golden_root("vllm-kv-cache-too-small"), "file"),
    ("warn-spam", gen_warn_spam, golden_root("torch-cuda-oom"), "file"),
    ("serving.gz", "serving", SEED, "gz"),
    ("serving.zst", "serving", SEED, "zst"),
    ("dir-64", functools.partial(gen_dir, nfiles=64), golden_root("torchrun-rank-raises"), "dir"),
    ("dir-512", functools.partial(gen_dir, nfiles=512), golden_root("torchrun-rank-raises"), "dir"),
    ("stdin", "serving", SEED, "stdin"),
]


# Generated inputs are cached under the work folder; bump this when a
# generator changes, or the shape's revision when only its generator does.
GEN_VERSION = "v1"
# A process that failed prints no further step lines (a step line from the
# same process after its error means the error was recovered): the failure
# ends these shapes.
SHAPE_REV = {"train-steps": 2, "tqdm": 2, "rank-steps": 2, "warn-spam": 2}


def ensure_input(work, name, gen, kind, size):
    base = os.path.join(work, name if not isinstance(gen, str) else gen)
    if name in SHAPE_REV:
        base += f".r{SHAPE_REV[name]}"
    if not isinstance(gen, str):
        target = base if kind == "dir" else base + ".log"
        if not os.path.exists(target + ".done"):
            if os.path.isdir(target):
                shutil.rmtree(target)
            print(f"generating {target} ({size >> 20} MiB)...", file=sys.stderr, flush=True)
            gen(target, size, random.Random(42))
            open(target + ".done", "w").close()
        return target
    src = ensure_input(work, gen, dict((n, g) for n, g, _, _ in SHAPES)[gen], "file", size)
    if kind in ("gz", "zst"):
        dst = src + "." + kind
        if not os.path.exists(dst + ".done"):
            compress(src, dst, "gzip" if kind == "gz" else "zstd")
            open(dst + ".done", "w").close()
        return dst
    return src


def run_once(argv, feed=None):
    """Runs argv (stdin from the process `feed` when given); returns wall
    seconds, peak RSS in KiB of argv's own process, exit status, stdout."""
    t0 = time.perf_counter()
    pre = None
    if feed:
        pre = subprocess.Popen(feed, stdout=subprocess.PIPE)
    p = subprocess.Popen(argv, stdin=pre.stdout if pre else subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    if pre:
        pre.stdout.close()
    out = p.stdout.read()
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if pre:
        pre.wait()
    return time.perf_counter() - t0, ru.ru_maxrss, p.returncode, out


def contenders(fl, path, kind, baseline=None):
    found = contenders_of(fl, path, kind)
    if baseline:  # the same command with another faultline binary (before/after a change, in one run)
        argv, feed = found["faultline"]
        found["fl-base"] = ([baseline] + argv[1:], feed)
    return found


def contenders_of(fl, path, kind):
    pat = PATTERN
    if kind == "dir":
        return {"grep": (["grep", "-ricE", pat, path], None), "rg -j1": (["rg", "-j1", "-ic", pat, path], None),
                "rg": (["rg", "-ic", pat, path], None), "faultline": ([fl, "triage", "--json", path], None)}
    if kind in ("gz", "zst"):
        dec = ["gzip", "-dc", path] if kind == "gz" else ["zstd", "-dcq", path]
        return {"grep": (["grep", "-icE", pat], dec), "rg -j1": (["rg", "-z", "-j1", "-ic", pat, path], None),
                "rg": (["rg", "-z", "-ic", pat, path], None), "faultline": ([fl, "triage", "--json", path], None)}
    if kind == "stdin":
        cat = ["cat", path]
        return {"grep": (["grep", "-icE", pat], cat), "rg -j1": (["rg", "-j1", "-ic", pat], cat),
                "rg": (["rg", "-ic", pat], cat), "faultline": ([fl, "triage", "--json", "-"], cat)}
    return {"grep": (["grep", "-icE", pat, path], None), "rg -j1": (["rg", "-j1", "-ic", pat, path], None),
            "rg": (["rg", "-ic", pat, path], None), "faultline": ([fl, "triage", "--json", path], None)}


def input_bytes(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def warm(path):
    files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs] if os.path.isdir(path) else [path]
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 22):
                pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("faultline")
    ap.add_argument("--mb", type=int, default=int(os.environ.get("FAULTLINE_BENCH_MB", "256")))
    ap.add_argument("--runs", type=int, default=int(os.environ.get("FAULTLINE_BENCH_RUNS", "3")))
    ap.add_argument("--only", default=os.environ.get("FAULTLINE_BENCH_SHAPES", ""))
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "faultline-bench"))
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--jobs", type=int, default=1, help="generate this many inputs at once")
    ap.add_argument("--baseline", default=os.environ.get("FAULTLINE_BENCH_BASELINE"), help="another faultline binary timed beside the first (column base s, fl/base)")
    args = ap.parse_args()
    fl = os.path.abspath(args.faultline)
    have_rg = shutil.which("rg") is not None
    work = os.path.join(args.work, f"shapes-{args.mb}m-{GEN_VERSION}")
    os.makedirs(work, exist_ok=True)
    only = set(s for s in args.only.split(",") if s)
    size = args.mb << 20

    if args.jobs > 1:  # generate the inputs first, several at once
        import multiprocessing
        base = [(work, n, g, k, size) for n, g, _, k in SHAPES if not isinstance(g, str) and (not only or n in only or
                any(g2 == n and n2 in only for n2, g2, _, _ in SHAPES))]
        with multiprocessing.Pool(args.jobs) as pool:
            pool.starmap(ensure_input, base)
    rows = []
    hdr = (f"{'shape':<12} {'MiB':>5} {'grep s':>7} {'rg-j1 s':>7} {'rg s':>7} {'fl s':>7} {'fl/rg':>6} "
           f"{'fl/rg1':>6} {'fl/grep':>7} {'RSS MiB':>7}  root cause")
    if args.baseline:
        hdr = hdr.replace(" fl/rg ", f" {'base s':>7} {'fl/base':>7} fl/rg ", 1)
    baseline = os.path.abspath(args.baseline) if args.baseline else None
    print(f"cores {os.cpu_count()}, {args.runs} runs each (median), pattern '{PATTERN}'", flush=True)
    print(hdr, flush=True)
    ok = True
    for name, gen, expected, kind in SHAPES:
        if only and name not in only:
            continue
        path = ensure_input(work, name, gen, kind, size)
        warm(path)
        times = {}
        rss = 0
        root = None
        for who, (argv, feed) in contenders(fl, path, kind, baseline).items():
            if who.startswith("rg") and not have_rg:
                continue
            ts = []
            for _ in range(args.runs):
                t, r, rc, out = run_once(argv, feed)
                ts.append(t)
                if who == "faultline":
                    rss = max(rss, r)
                    try:
                        rc_obj = json.loads(out).get("root_cause")
                        root = rc_obj["message"] if rc_obj else None
                    except ValueError:
                        root = f"(no JSON, exit {rc})"
            times[who] = statistics.median(ts)
        right = root == expected
        ok = ok and right and rss < 200 * 1024
        ratio = lambda a, b: f"{times[a] / times[b]:.2f}" if a in times and b in times and times[b] > 0 else "-"
        fmt_t = lambda w: f"{times[w]:.3f}" if w in times else "-"
        base = f"{fmt_t('fl-base'):>7} {ratio('faultline', 'fl-base'):>7} " if baseline else ""
        print(f"{name:<12} {input_bytes(path) >> 20:>5} {fmt_t('grep'):>7} {fmt_t('rg -j1'):>7} {fmt_t('rg'):>7} "
              f"{fmt_t('faultline'):>7} {base}{ratio('faultline', 'rg'):>6} {ratio('faultline', 'rg -j1'):>6} "
              f"{ratio('faultline', 'grep'):>7} {rss / 1024:>7.1f}  {'yes' if right else 'NO: ' + str(root)[:60]}",
              flush=True)
        rows.append({"shape": name, "bytes": input_bytes(path), "times": times, "rss_kib": rss, "root_ok": right})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not ok:
        print("FAIL: a wrong root cause or peak RSS over 200 MiB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
