#!/usr/bin/python3
"""Checks that two builds of dpsosp give the same reports, bit for bit.

    /usr/bin/python3 bench/same_bits.py --old OLD/dpsosp --new build/dpsosp

Runs a fixed set of `dpsosp run` command lines (every algorithm; logistic,
sigmoid, cauchy, phase retrieval, pca, softmax and the MLP; dense synthetic
records, a sparse LibSVM file, Fashion-MNIST when Debian's dataset-fashion-mnist
is installed) with the old binary on one thread and the new binary on one and
on two threads, and compares the JSON reports key by key (numbers as written,
17 significant digits, so equal text is equal bits), except the timings
`seconds` and `load_seconds` (under `diagnostics`; the rest of `diagnostics`,
the clipped counts among them, is compared). Speed work must not change a bit
(issue 7); this is how a change is checked against the code before it. Exit
status 1 when any report differs.

Every private run gets --noise-key-file (default tests/data/noise.key): the privacy
noise comes from that secret key, so a report is reproducible only for a
fixed (seed, key). Builds from before the secret key (59ba7f2 and earlier)
take no key and draw their noise from Philox keyed by the seed: their reports
differ from the present code's by construction, so the script refuses them;
compare builds of the present code only.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

FMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
TIMINGS = {"seconds", "load_seconds"}  # in "diagnostics"
NOISE_KEY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "data",
                                          "noise.key"))


def write_libsvm(path, n=3000, p=40, seed=5):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            label = rng.choice((-1, 1))
            cols = sorted(rng.sample(range(1, p + 1), 6))
            f.write("%d %s\n" % (label, " ".join("%d:%.6f" % (c, rng.gauss(0.3 * label, 1.0)) for c in cols)))


def command_lines(sparse_file):
    common = ["--epsilon", "2", "--delta", "1e-6", "--seed", "11"]
    runs = []
    pr = ["--synthetic", "phase-retrieval:n=200000,d=20,seed=2"]
    for algo in ("spider-tree-adaptive", "spider-gauss-fixed", "spider-tree-periodic", "dpsgd"):
        runs.append(pr + ["--algo", algo, "--G", "6", "--M", "20"] + common)
    for algo in ("spider", "sgd"):
        runs.append(pr + ["--algo", algo, "--G", "6", "--M", "20", "--epsilon", "inf", "--seed", "11"])
    gm = ["--synthetic", "gaussian-mixture:n=300000,d=100,seed=3"]
    runs.append(gm + ["--algo", "spider-tree-adaptive"] + common)
    runs.append(gm + ["--algo", "dpsgd", "--batch-size", "256"] + common)
    runs.append(gm + ["--algo", "dpsgd", "--batch-size", "256", "--epochs", "1"] + common)
    runs.append(gm + ["--model", "sigmoid", "--algo", "spider-tree-adaptive"] + common)
    runs.append(pr + ["--model", "cauchy", "--algo", "spider-tree-adaptive", "--G", "3", "--M", "3"] + common)
    runs.append(["--synthetic", "pca:n=100000,d=30,rank=2,seed=4", "--algo", "spider-tree-adaptive", "--G", "5",
                 "--M", "10"] + common)
    for algo in ("spider-tree-adaptive", "dpsgd"):
        runs.append(["--data", sparse_file, "--model", "logistic", "--algo", algo] + common)
    if os.path.exists(FMNIST):
        runs.append(["--data", FMNIST, "--model", "softmax", "--classes", "10", "--algo", "spider-tree-adaptive",
                     "--no-certificate"] + common)
        runs.append(["--data", FMNIST, "--model", "mlp", "--classes", "10", "--hidden", "16", "--algo", "dpsgd",
                     "--max-steps", "40", "--no-certificate"] + common)
    # Constants given: builds from before the private estimate (--G auto, the
    # default since a246d0e) would otherwise run other configurations.
    return [r if "--G" in r else r + ["--G", "1", "--M", "1"] for r in runs]


def private(args):
    """Whether the run draws privacy noise (the last --epsilon is not inf); a non-private run refuses a key."""
    eps = [args[i + 1] for i, x in enumerate(args[:-1]) if x == "--epsilon"]
    return not eps or eps[-1] not in ("inf", "infinity")


def report(binary, args, threads, out, key_file):
    key = ["--noise-key-file", key_file] if private(args) else []
    # The LibSVM file's feature count, declared (40): builds since the public-shape rule refuse a private run
    # without it; earlier ones take the largest index, 40 too.
    width = ["--features", "40"] if any(a.endswith(".libsvm") for a in args) and takes(binary, "--features") else []
    cmd = [binary, "run"] + args + width + ["--threads", str(threads), "--out", out] + key
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit("same_bits.py: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
    with open(out) as f:
        j = json.load(f)
    if "diagnostics" not in j:
        sys.exit("same_bits.py: %s wrote a report without diagnostics (a build from before 52089dd?)" % binary)
    j["diagnostics"] = {k: v for k, v in j["diagnostics"].items() if k not in TIMINGS}
    return j


def takes(binary, option):
    proc = subprocess.run([binary, "run", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return option in proc.stdout


def takes_noise_key(binary):
    return takes(binary, "--noise-key-file")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="dpsosp binary built from the code before the change")
    p.add_argument("--new", required=True, help="dpsosp binary built from the code after it")
    p.add_argument("--noise-key-file", default=NOISE_KEY, help="noise key of every run (default: tests/data/noise.key)")
    a = p.parse_args()
    for b in (a.old, a.new):
        if not takes_noise_key(b):
            sys.exit("same_bits.py: %s takes no --noise-key-file: a build from before the secret noise key (59ba7f2 "
                     "or earlier), whose privacy noise is Philox keyed by the seed, not AES under a key; its reports "
                     "differ from the present code's by construction. Compare builds of the present code." % b)
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        sparse = os.path.join(tmp, "sparse.libsvm")
        write_libsvm(sparse)
        runs = command_lines(sparse)
        for args in runs:
            want = report(a.old, args, 1, os.path.join(tmp, "old.json"), a.noise_key_file)
            for threads in (1, 2):
                got = report(a.new, args, threads, os.path.join(tmp, "new.json"), a.noise_key_file)
                same = got == want
                differ += not same
                keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
                print("%-9s threads %d  %s%s" % ("same" if same else "DIFFERENT", threads, " ".join(args),
                                                ("  (keys: %s)" % ", ".join(keys)) if keys else ""))
    print("%d of %d reports identical to the old build's (timings aside)" % (2 * len(runs) - differ, 2 * len(runs)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
