#!/usr/bin/python3
"""Before/after timing of two builds of dpsosp, run alternately.

    /usr/bin/python3 bench/alternate.py --old OLD/dpsosp --new build/dpsosp [--rounds 8]

Runs `dpsosp run` on `gaussian-mixture:n=1000000,d=100` (logistic, epsilon 1,
delta 1e-6, seed 1, 2 threads, no certificate) with each binary in turn, a
fresh process each time, for spider-tree-adaptive and DP-SGD (batch 256), and
prints the medians (and ranges) of the reports' `seconds` and `load_seconds`.
The order alternates from round to round, so that the host's load, which
moves by up to 1.5x between minutes on the development machine, hits both
builds alike (docs/performance.md). It also checks that both builds did the
same work (steps and gradient evaluations).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="the dpsosp binary before the change")
    p.add_argument("--new", required=True, help="the dpsosp binary after the change")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--synthetic", default="gaussian-mixture:n=1000000,d=100")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    for b in (a.old, a.new):
        if not os.access(b, os.X_OK):
            sys.exit("alternate.py: %s is not an executable" % b)
    common = ["--model", "logistic", "--synthetic", a.synthetic, "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
              "--threads", str(a.threads), "--no-certificate"]
    runs = [("dpsgd", ["--batch-size", "256"]), ("spider-tree-adaptive", [])]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        for r in range(a.rounds):
            builds = (("old", a.old), ("new", a.new)) if r % 2 == 0 else (("new", a.new), ("old", a.old))
            for algo, extra in runs:
                for name, binary in builds:
                    cmd = [binary, "run", "--algo", algo, "--out", out] + common + extra
                    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    if proc.returncode != 0:
                        sys.exit("alternate.py: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
                    with open(out) as f:
                        j = json.load(f)
                    results.setdefault((algo, name), []).append(
                        (j["seconds"], j["load_seconds"], j["gradient_evaluations"], j["steps"]))
    med = statistics.median
    for algo, _ in runs:
        old, new = results[(algo, "old")], results[(algo, "new")]
        if {x[2:] for x in old} != {x[2:] for x in new} or len({x[2:] for x in old}) != 1:
            sys.exit("alternate.py: %s: the builds did other work (gradients, steps): %s against %s"
                     % (algo, sorted({x[2:] for x in old}), sorted({x[2:] for x in new})))
        for name, v in (("old", old), ("new", new)):
            s = [x[0] * 1e3 for x in v]
            load = [x[1] for x in v]
            print("%-22s %s: seconds median %6.1f ms (%.1f - %.1f), load_seconds median %.3f s (%.3f - %.3f), "
                  "%.3g gradients/s" % (algo, name, med(s), min(s), max(s), med(load), min(load), max(load),
                                        v[0][2] / (med(s) / 1e3)))
        print("%-22s old/new: %.2fx (run), %.2fx (load + run)" % (
            algo, med([x[0] for x in old]) / med([x[0] for x in new]),
            med([x[0] + x[1] for x in old]) / med([x[0] + x[1] for x in new])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
