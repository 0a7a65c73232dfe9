#!/usr/bin/python3
"""End-to-end cost of --noise secure against the default float noise, one build.

    /usr/bin/python3 bench/secure_cost.py [--dpsosp build/dpsosp] [--rounds 6]

Runs `dpsosp run` on `gaussian-mixture:n=1000000,d=100` (logistic, epsilon 1,
delta 1e-6, G = M = 1, seed 1, 2 threads, no certificate, --noise-key-file
tests/data/noise.key) for DP-SGD (batch 256, single pass), spider-mf-adaptive,
spider-tree-adaptive and spider-gauss-fixed, with --noise float and --noise secure in turn (the
order alternating from round to round, as bench/alternate.py does, so that
the host's load hits both alike), a fresh process each time, and prints the
medians of the reports' diagnostics.seconds and the ratio secure / float, of
seconds and of seconds per gradient (secure noise is other noise, so
spider-tree-adaptive's batches, and with them its work, differ a little).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dpsosp", default=os.path.join(ROOT, "build", "dpsosp"))
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--synthetic", default="gaussian-mixture:n=1000000,d=100")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    if not os.access(a.dpsosp, os.X_OK):
        sys.exit("secure_cost.py: %s is not an executable" % a.dpsosp)
    common = ["--model", "logistic", "--synthetic", a.synthetic, "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
              "--G", "1", "--M", "1",
              "--threads", str(a.threads), "--no-certificate", "--noise-key-file",
              os.path.join(ROOT, "tests", "data", "noise.key")]
    runs = [("dpsgd", ["--batch-size", "256"]), ("spider-mf-adaptive", []), ("spider-tree-adaptive", []),
            ("spider-gauss-fixed", [])]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        for r in range(a.rounds):
            modes = ("float", "secure") if r % 2 == 0 else ("secure", "float")
            for algo, extra in runs:
                for mode in modes:
                    cmd = [a.dpsosp, "run", "--algo", algo, "--noise", mode, "--out", out] + common + extra
                    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    if proc.returncode != 0:
                        sys.exit("secure_cost.py: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
                    with open(out) as f:
                        j = json.load(f)
                    if j["noise"] != mode:
                        sys.exit("secure_cost.py: asked for %s noise, the report says %s" % (mode, j["noise"]))
                    d = j["diagnostics"]
                    results.setdefault((algo, mode), []).append((d["seconds"], d["gradient_evaluations"], j["steps"]))
    med = statistics.median
    print("secure_cost.py: %s, %d rounds, %d threads" % (a.synthetic, a.rounds, a.threads))
    for algo, _ in runs:
        f, s = results[(algo, "float")], results[(algo, "secure")]
        fs, ss = med([x[0] for x in f]), med([x[0] for x in s])
        fg, sg = med([x[1] for x in f]), med([x[1] for x in s])
        print("%-22s float %7.1f ms (%d steps), secure %7.1f ms (%d steps): secure/float %.2fx (run), "
              "%.2fx (per gradient)" % (algo, fs * 1e3, f[0][2], ss * 1e3, s[0][2], ss / fs, (ss / sg) / (fs / fg)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
