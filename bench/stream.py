#!/usr/bin/python3
"""Streamed runs past memory: records per second against `cat`, peak RSS
under a memory limit, and the bits of a loaded run on a prefix.

    /usr/bin/python3 bench/stream.py [--dpsosp build/dpsosp] [--gigabytes 4.2] [--limit-mb 1024]

Writes a record file of logistic records (d = 100 float64 features, labels
from a planted direction) of about --gigabytes, with this script's own writer
of the documented format (docs/data-formats.md, "Record files"), and, in the
same run:

  * reads it with `cat FILE > /dev/null` (the reading floor), then streams it
    (`dpsosp run --stream`) with dpsgd (batch 4096: little arithmetic a
    record, so reading sets the pace) and spider-tree-adaptive, each under
    `ulimit -v` of --limit-mb (the address space, which bounds the resident
    memory too); records per second of the run's pass (samples_used / the
    optimization's seconds) and of the whole command (start, the check of
    the records the run did not read, end), peak RSS (GNU time's %M);
  * checks the bits: the streamed run of the big file stopped after
    --steps steps against a loaded run (`--order file`) of a file of its
    first records only, which a loaded run can hold.

`cat` and each run take turns (--repeat times; the best of each counts), so
that both read the file alike: from the page cache where it holds the file,
from the disk otherwise (this VM reclaims idle page cache within seconds).
Prints a table; exit status 1 when the bits differ or a limit is broken.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HEADER = 128
BLOCK = 1297  # records per block: about 1 MiB of d = 100 float64 records


def write_records(path, n, d, seed=1, chunk_blocks=154):
    """n labeled dense float64 records in blocks of BLOCK (labels, then rows).
    Chunk k of the records comes from its own generator, so a shorter file
    holds the first records of a longer one."""
    w = np.random.default_rng(seed).standard_normal(d) / np.sqrt(d)
    chunk = chunk_blocks * BLOCK
    with open(path, "wb") as f:
        f.write(b"\0" * HEADER)
        for k, c0 in enumerate(range(0, n, chunk)):
            m = min(chunk, n - c0)
            rng = np.random.default_rng([seed, k])
            x = rng.standard_normal((chunk, d))[:m]
            y = (x @ w + 0.5 * rng.standard_normal(chunk)[:m] > 0).astype(np.float64)
            for b0 in range(0, m, BLOCK):
                b1 = min(m, b0 + BLOCK)
                f.write(y[b0:b1].tobytes())
                f.write(np.ascontiguousarray(x[b0:b1]).tobytes())
        payload = n * (8 + 8 * d)
        header = (b"DPSOSPRF" + struct.pack("<IIQQQII", 1, 2, n, d, 0, 1, BLOCK) + struct.pack("<Qdd", 0, 0.0, 1.0) +
                  struct.pack("<Q", payload))
        f.seek(0)
        f.write(header.ljust(HEADER, b"\0"))


def timed(cmd, limit_mb=None):
    """(seconds, peak RSS in MiB, completed process) of cmd under an address-space limit."""
    shell = "ulimit -v %d; " % (limit_mb * 1024) if limit_mb else ""
    shell += "exec /usr/bin/time -f 'PEAK_RSS_KB %M' " + " ".join(cmd)
    start = time.monotonic()
    r = subprocess.run(["bash", "-c", shell], capture_output=True, text=True)
    seconds = time.monotonic() - start
    rss = [int(l.split()[1]) for l in r.stderr.splitlines() if l.startswith("PEAK_RSS_KB")]
    return seconds, (rss[0] / 1024 if rss else float("nan")), r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpsosp", default="build/dpsosp")
    ap.add_argument("--gigabytes", type=float, default=4.2)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--limit-mb", type=int, default=1024, help="ulimit -v of each run, MiB")
    ap.add_argument("--rss-goal-mb", type=int, default=512)
    ap.add_argument("--steps", type=int, default=200, help="steps of the same-bits check")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    ap.add_argument("--repeat", type=int, default=2, help="turns of cat and of each run")
    ap.add_argument("--threads", type=int, default=1, help="the runs' --threads")
    a = ap.parse_args()
    d = a.features
    n = int(a.gigabytes * 1e9 / (8 + 8 * d))
    work = tempfile.TemporaryDirectory(dir=a.dir)
    big, prefix = os.path.join(work.name, "big.dpsr"), os.path.join(work.name, "prefix.dpsr")
    start = time.monotonic()
    write_records(big, n, d)
    write_records(prefix, 400_000, d)  # the same generator: the big file's first records
    size = os.path.getsize(big)
    print("wrote %d records of %d features, %.2f GB, in %.0f s" % (n, d, size / 1e9, time.monotonic() - start))
    ok = True
    rows = []
    # One compute thread: the reader thread has the other core of a 2-core machine.
    # G and M given: the private estimate (--G auto) takes a number of records
    # that depends on n, which the prefix's bits would not share.
    common = ["--model", "logistic", "--seed", "1", "--epsilon", "2", "--threads", str(a.threads), "--G", "1",
              "--M", "1"]
    for algo, extra in (("dpsgd", ["--batch-size", "4096"]), ("spider-tree-adaptive", [])):
        # cat and the run take turns, --repeat times each; the best of each
        # (the machine is shared: the others' load comes and goes).
        best = None
        for _ in range(a.repeat):
            cat_s, _, _ = timed(["cat", big, ">", "/dev/null"])
            out = os.path.join(work.name, algo + ".json")
            wall, rss, r = timed([a.dpsosp, "run", "--data", big, "--stream", "--algo", algo, *common, *extra,
                                  "--out", out], a.limit_mb)
            if r.returncode != 0:
                print(r.stderr)
                return 1
            with open(out) as f:
                rep = json.load(f)
            run_s = rep["diagnostics"]["seconds"]  # the optimization alone: the run's pass
            used = rep["samples_used"]
            got = (n / cat_s, used / run_s, used / wall, rss)
            best = got if best is None else (max(best[0], got[0]), max(best[1], got[1]), max(best[2], got[2]),
                                             max(best[3], got[3]))
        rows.append((algo, *best))
        ok &= best[3] <= a.rss_goal_mb
    print("\n| algorithm | cat, records/s | run pass, records/s (x cat) | whole command, records/s (x cat) | "
          "peak RSS, MiB (ulimit -v %d MiB) |" % a.limit_mb)
    print("|---|---|---|---|---|")
    for algo, cat_r, run_r, all_r, rss in rows:
        print("| %s | %.3g | %.3g (%.2f) | %.3g (%.2f) | %.0f |" % (algo, cat_r, run_r, run_r / cat_r, all_r,
                                                                  all_r / cat_r, rss))
    # The same bits as a loaded run of the first records.
    # alpha pinned: the theory's alpha depends on n, and the prefix has fewer records.
    for algo, extra in (("dpsgd", ["--batch-size", "1000"]), ("spider-tree-adaptive", ["--set", "alpha=0.1"])):
        outs = []
        for data, how in ((big, ["--stream"]), (prefix, ["--order", "file"])):
            out = os.path.join(work.name, "bits.json")
            _, rss, r = timed([a.dpsosp, "run", "--data", data, *how, "--algo", algo, *common, *extra,
                               "--max-steps", str(a.steps), "--noise-key-file",
                               os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                                            "noise.key"), "--out", out], a.limit_mb)
            if r.returncode != 0:
                print(r.stderr)
                return 1
            with open(out) as f:
                outs.append(json.load(f))
        same = outs[0]["x"] == outs[1]["x"] and outs[0]["steps"] == outs[1]["steps"] == a.steps
        fits = outs[0]["samples_used"] <= 400_000
        print("same bits, %s, %d steps (%d records) streamed from %.2f GB vs loaded from the first 400000: %s" %
              (algo, a.steps, outs[0]["samples_used"], size / 1e9, "yes" if same and fits else "NO"))
        ok &= same and fits
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
