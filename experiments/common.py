"""Shared machinery of the dpsosp experiments: run the CLI, cache its reports.

Every run is one `dpsosp run ...` command.  Its JSON report (minus the bulky
fields) is appended, with the exact argument list, to a JSON-lines cache; a
run whose argument list is already in the cache is not run again.  The CLI is
bit-reproducible given --seed, so the cache is a pure function of the argument
lists and the report generation (report.py) is a pure function of the cache.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

# Fields of the report that are large and unused by the analysis.
_DROP = ("phase_lengths", "trajectory")


def find_binary(explicit=None):
    """The dpsosp CLI: --dpsosp, $DPSOSP_BIN, or a build directory of the repo."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get("DPSOSP_BIN"):
        return os.path.abspath(os.environ["DPSOSP_BIN"])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for sub in ("build-exp", "build"):
        p = os.path.join(root, sub, "dpsosp")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which("dpsosp")
    if found:
        return found
    sys.exit("run_all.py: no dpsosp binary found; build it or pass --dpsosp PATH")


def key_of(args):
    return " ".join(args)


def command_line(args):
    """The command as a user would type it (for captions and the page)."""
    return "dpsosp run " + " ".join(args)


class Cache:
    """JSON lines: {"key": ..., "args": [...], "rc": int, "report": {...} | null, "stderr": ...}."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.rows = {}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut short by an interrupted run
                    if row.get("rc") == 0:
                        self.rows[row["key"]] = row

    def get(self, args):
        return self.rows.get(key_of(args))

    def put(self, row):
        with self.lock:
            self.rows[row["key"]] = row
            with open(self.path, "a") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")


# The argument lists name files relative to the repository (experiments/noise.key).
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_one(binary, args, timeout):
    cmd = [binary, "run"] + list(args)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"key": key_of(args), "args": list(args), "rc": -1, "report": None,
                "stderr": "timeout after %ss" % timeout}
    report = None
    if p.returncode == 0:
        try:
            report = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            return {"key": key_of(args), "args": list(args), "rc": -2, "report": None,
                    "stderr": "bad JSON: %s" % e}
        for k in _DROP:
            report.pop(k, None)
    return {"key": key_of(args), "args": list(args), "rc": p.returncode, "report": report,
            "stderr": p.stderr[-2000:] if p.returncode != 0 else ""}


def run_all(binary, cache, arglists, jobs=2, timeout=3600, label=""):
    """Run every argument list not yet cached, `jobs` at a time. Returns the failures."""
    todo = []
    seen = set()
    for a in arglists:
        k = key_of(a)
        if k in seen or cache.get(a) is not None:
            continue
        seen.add(k)
        todo.append(a)
    failures = []
    if not todo:
        print("[%s] all %d runs cached" % (label, len(arglists)), flush=True)
        return failures
    print("[%s] %d runs (%d cached)" % (label, len(todo), len(arglists) - len(todo)), flush=True)
    done = [0]
    lock = threading.Lock()

    def work(a):
        row = run_one(binary, a, timeout)
        if row["rc"] == 0:
            cache.put(row)
        with lock:
            done[0] += 1
            if row["rc"] != 0:
                failures.append(row)
                print("  FAILED (rc %s): %s\n    %s" % (row["rc"], command_line(a),
                                                     row["stderr"].strip()[-500:]), flush=True)
            if done[0] % 50 == 0 or done[0] == len(todo):
                print("  [%s] %d/%d" % (label, done[0], len(todo)), flush=True)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(work, todo))
    return failures


def finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def sanity_problems(row):
    """Reasons a cached report is not sane (empty list = fine)."""
    r = row["report"]
    bad = []
    if r is None:
        return ["no report"]
    cert = r.get("certificate")
    if cert is None:
        if "--synthetic" in row["args"]:
            bad.append("no certificate")
    else:
        for k in ("grad_norm", "lambda_min", "sosp_gap"):
            if not finite(cert.get(k)):
                bad.append("certificate.%s = %r" % (k, cert.get(k)))
    if "x" in r and not all(finite(v) for v in r["x"]):
        bad.append("non-finite iterate")
    if r.get("private"):
        eps, tgt = r.get("epsilon"), r.get("target", {}).get("epsilon")
        if not finite(eps) or not finite(tgt) or eps > tgt * (1 + 1e-9):
            bad.append("epsilon %r exceeds target %r" % (eps, tgt))
        if r.get("delta") is not None and r.get("target", {}).get("delta") is not None:
            if r["delta"] > r["target"]["delta"] * (1 + 1e-9):
                bad.append("delta above target")
    if r.get("samples_used", 0) > r.get("n", 0) and "epochs" not in " ".join(row["args"]):
        bad.append("single-pass run used %s > n = %s records" % (r.get("samples_used"), r.get("n")))
    if r.get("interrupted"):
        bad.append("interrupted")
    ev = r.get("eval")
    if ev is not None:
        for k in ("loss", "accuracy"):
            if k in ev and not finite(ev[k]):
                bad.append("eval.%s = %r" % (k, ev[k]))
    return bad
