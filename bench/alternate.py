#!/usr/bin/python3
"""Before/after timing of two builds of dpsosp, run alternately.

    /usr/bin/python3 bench/alternate.py --old OLD/dpsosp --new build/dpsosp [--rounds 8]

Runs `dpsosp run` on `gaussian-mixture:n=1000000,d=100` (logistic, epsilon 1,
delta 1e-6, seed 1, 2 threads, no certificate) with each binary in turn, a
fresh process each time, for spider-tree-adaptive and DP-SGD (batch 256), and
prints the medians (and ranges) of the reports' `seconds` and `load_seconds`
(under `diagnostics` since 52089dd; top-level before). The order alternates
from round to round, so that the host's load, which moves by up to 1.5x
between minutes on the development machine, hits both builds alike
(docs/performance.md).

Both builds get --noise-key-file (default tests/data/noise.key), so that
spider-tree-adaptive, whose batches depend on its noise, does the same work
in every run; the script checks that both builds did the same work (steps and
gradient evaluations). A build from before the secret noise key (59ba7f2 and
earlier: Philox noise keyed by the seed) cannot take a key: it runs without
one, its spider-tree-adaptive runs do slightly other work, and the script
says so and compares gradients per second as well as seconds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

NOISE_KEY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "data",
                                          "noise.key"))


def takes_noise_key(binary):
    proc = subprocess.run([binary, "run", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return "--noise-key-file" in proc.stdout


def timings(report):
    """(seconds, load_seconds, gradient_evaluations): under diagnostics since 52089dd, top-level before."""
    diag = report.get("diagnostics", {})
    seconds = diag["seconds"] if "seconds" in diag else report["seconds"]
    load = diag["load_seconds"] if "load_seconds" in diag else report["load_seconds"]
    grads = report["gradient_evaluations"] if "gradient_evaluations" in report else diag["gradient_evaluations"]
    return seconds, load, grads


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="the dpsosp binary before the change")
    p.add_argument("--new", required=True, help="the dpsosp binary after the change")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--synthetic", default="gaussian-mixture:n=1000000,d=100")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--noise-key-file", default=NOISE_KEY,
                   help="noise key of both builds' runs (default: tests/data/noise.key)")
    a = p.parse_args()
    for b in (a.old, a.new):
        if not os.access(b, os.X_OK):
            sys.exit("alternate.py: %s is not an executable" % b)
    key_args = {}
    for name, b in (("old", a.old), ("new", a.new)):
        key_args[name] = ["--noise-key-file", a.noise_key_file] if takes_noise_key(b) else []
        if not key_args[name]:
            print("alternate.py: the %s build (%s) takes no --noise-key-file (Philox noise keyed by the seed): its "
                  "runs use other noise, and spider-tree-adaptive does slightly other work" % (name, b))
    same_noise = all(key_args.values())
    common = ["--model", "logistic", "--synthetic", a.synthetic, "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
              "--G", "1", "--M", "1", "--threads", str(a.threads), "--no-certificate"]
    runs = [("dpsgd", ["--batch-size", "256"]), ("spider-tree-adaptive", [])]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        for r in range(a.rounds):
            builds = (("old", a.old), ("new", a.new)) if r % 2 == 0 else (("new", a.new), ("old", a.old))
            for algo, extra in runs:
                for name, binary in builds:
                    cmd = [binary, "run", "--algo", algo, "--out", out] + common + extra + key_args[name]
                    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    if proc.returncode != 0:
                        sys.exit("alternate.py: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
                    with open(out) as f:
                        j = json.load(f)
                    results.setdefault((algo, name), []).append(timings(j) + (j["steps"],))
    med = statistics.median
    for algo, _ in runs:
        old, new = results[(algo, "old")], results[(algo, "new")]
        if len({x[2:] for x in old}) != 1 or len({x[2:] for x in new}) != 1:
            sys.exit("alternate.py: %s: a build's runs did other work from run to run (gradients, steps): %s; %s"
                     % (algo, sorted({x[2:] for x in old}), sorted({x[2:] for x in new})))
        if old[0][2:] != new[0][2:]:
            if same_noise:
                sys.exit("alternate.py: %s: the builds did other work (gradients, steps): %s against %s"
                         % (algo, old[0][2:], new[0][2:]))
            print("%-22s other noise, other work: old %d gradients in %d steps, new %d in %d"
                  % ((algo,) + old[0][2:] + new[0][2:]))
        for name, v in (("old", old), ("new", new)):
            s = [x[0] * 1e3 for x in v]
            load = [x[1] for x in v]
            print("%-22s %s: seconds median %6.1f ms (%.1f - %.1f), load_seconds median %.3f s (%.3f - %.3f), "
                  "%.3g gradients/s" % (algo, name, med(s), min(s), max(s), med(load), min(load), max(load),
                                        v[0][2] / (med(s) / 1e3)))
        print("%-22s old/new: %.2fx (run), %.2fx (load + run); new/old gradients/s: %.2fx" % (
            algo, med([x[0] for x in old]) / med([x[0] for x in new]),
            med([x[0] + x[1] for x in old]) / med([x[0] + x[1] for x in new]),
            (new[0][2] / med([x[0] for x in new])) / (old[0][2] / med([x[0] for x in old]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
