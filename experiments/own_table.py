"""A user's own table, untuned (issue 31's acceptance check; docs/own-table.md).

scikit-learn's bundled tables loaded raw, DPClassifier(epsilon=eps, classes=np.unique(y)) /
DPRegressor(epsilon=eps) with nothing else set, five random 75/25 splits, the median test score, against
the majority class (mean for regression) and the non-private model (standardized logistic / ridge regression).

    /usr/bin/python3 experiments/own_table.py [--out docs/own-table-results.md] [--splits 5] [--repeats 1]
        [--options '{"algo": "dpsgd", "epochs": 5}'] [--no-cli] [--trials T]

--repeats R: each split's score is the mean over R fits with fresh noise (steadier medians); --options: keywords
given to both estimators (the defaults otherwise); --no-cli: the estimators alone; --oracle-bounds: the
classifiers get the whole table's per-feature min and max as declared bounds. That reads the records outside any
guarantee (not private): a reference for what a perfect, free scale estimate would give, nothing a user may do.
--trials T: the check itself T times (--splits random splits, fresh noise, the estimators alone), and how often
its figures meet the issue's targets. --keys K: each fit's noise key and sample order fixed by (K, split, fit), so
that two builds draw the same noise and a change's effect is read paired (the keys are public: an experiment's
device, never for real data).
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))
import dpsosp  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

CLASSIFICATION = [("breast_cancer", datasets.load_breast_cancer), ("wine", datasets.load_wine),
                  ("iris", datasets.load_iris), ("digits", datasets.load_digits)]
REGRESSION = [("diabetes", lambda: datasets.load_diabetes(return_X_y=True, scaled=False))]
CLI_TABLES = [("breast_cancer", datasets.load_breast_cancer, "logistic"), ("wine", datasets.load_wine, "softmax"),
              ("diabetes", lambda: datasets.load_diabetes(return_X_y=True, scaled=False), "linear")]
CLI = os.path.join(HERE, "..", "build", "dpsosp")


def load(loader):
    d = loader()
    return d if isinstance(d, tuple) else (d.data, d.target)


OPTIONS = {}
REPEATS = 1
ORACLE = False
KEYS = None


def oracle_bounds(X):
    """The table's own per-feature [min, max] (not private: see --oracle-bounds), at least 1 wide."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    return [(float(a), float(b) if b > a else float(a) + 1.0) for a, b in zip(lo, hi)]


def fit_score(make, Xtr, ytr, score, split):
    """The mean over REPEATS fits with fresh noise (or --keys' fixed ones) of score(fitted estimator)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.mean([score(make(**fixed(split, r)).fit(Xtr, ytr)) for r in range(REPEATS)]))


def fixed(split, r):
    """--keys: the fit's noise key and sample order from (KEYS, split, fit); none otherwise (fresh, secret)."""
    if KEYS is None:
        return {}
    k = (KEYS * 1000 + split) * 100 + r
    return {"noise_key": k.to_bytes(16, "little"), "random_state": k}


def seeds(splits):
    return range(splits) if isinstance(splits, int) else splits


def trials(eps_list, splits, count):
    """The check itself, `count` times: each trial draws `splits` fresh split seeds (and fresh noise) and scores the
    estimators as the issue's check does (median per table); prints, per epsilon, the classification mean's spread
    and how often it and the regression median meet the issue's targets."""
    rng = np.random.default_rng(20261207)
    goal = {1.0: (0.67, 0.0), 3.0: (0.75, 0.6)}
    out = {eps: ([], []) for eps in eps_list}
    for _ in range(count):
        draw = [int(v) for v in rng.integers(0, 2**31 - 1, size=splits)]
        c = [r for name, ld in CLASSIFICATION for r in classification(name, ld, eps_list, draw)]
        g = [r for name, ld in REGRESSION for r in regression(name, ld, eps_list, draw)]
        for eps in eps_list:
            out[eps][0].append(np.mean([r[7] for r in c if r[2] == eps]))
            out[eps][1].append(min(r[5] if eps == 1.0 else r[7] for r in g if r[2] == eps))
    lines = ["| eps | classification mean: mean | sd | trials at the target | regression: trials at the target |",
             "|---|---|---|---|---|"]
    for eps, (cm, rg) in out.items():
        c_goal, r_goal = goal.get(eps, (None, None))
        hit = f"{np.mean(np.array(cm) >= c_goal):.2f} (>= {100 * c_goal:.0f}%)" if c_goal else ""
        r_hit = (f"{np.mean(np.array(rg) > r_goal if eps == 1.0 else np.array(rg) >= r_goal):.2f} "
                 f"({'R^2 > 0' if eps == 1.0 else f'>= {100 * r_goal:.0f}% of non-private'})") if c_goal else ""
        lines.append(f"| {eps:g} | {100 * np.mean(cm):.1f}% | {100 * np.std(cm):.1f} | {hit} | {r_hit} |")
    return lines


def classification(name, loader, eps_list, splits):
    """splits: a count (seeds 0 .. splits - 1) or the split seeds themselves."""
    X, y = load(loader)
    rows = []
    extra = {"bounds": oracle_bounds(X)} if ORACLE else {}
    for eps in eps_list:
        dp, maj, ref = [], [], []
        for s in seeds(splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s)
            vals, counts = np.unique(ytr, return_counts=True)
            maj.append(np.mean(yte == vals[np.argmax(counts)]))
            ref.append(make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(Xtr, ytr).score(Xte, yte))
            dp.append(fit_score(lambda **k: dpsosp.DPClassifier(epsilon=eps, classes=np.unique(y), **OPTIONS, **extra, **k),
                                Xtr, ytr, lambda m: m.score(Xte, yte), s))
        m, r, d = np.median(maj), np.median(ref), np.median(dp)
        rows.append((name, len(X), eps, m, r, d, min(dp), (d - m) / (r - m)))
    return rows


def regression(name, loader, eps_list, splits):
    X, y = load(loader)
    rows = []
    for eps in eps_list:
        dp, ref = [], []
        for s in seeds(splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s)
            ref.append(r2_score(yte, make_pipeline(StandardScaler(), Ridge()).fit(Xtr, ytr).predict(Xte)))
            dp.append(fit_score(lambda **k: dpsosp.DPRegressor(epsilon=eps, **OPTIONS, **k), Xtr, ytr,
                                lambda m: r2_score(yte, m.predict(Xte)), s))
        r, d = np.median(ref), np.median(dp)
        rows.append((name, len(X), eps, 0.0, r, d, min(dp), d / r))
    return rows


def cli(name, loader, model, eps_list, splits):
    """`dpsosp run` at its defaults on the same CSV (label first), scored on --eval."""
    import json
    import subprocess
    import tempfile
    X, y = load(loader)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for eps in eps_list:
            scores = []
            for s in range(splits):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s)
                train, test, out = (os.path.join(tmp, f) for f in ("train.csv", "test.csv", "r.json"))
                np.savetxt(train, np.column_stack([ytr, Xtr]), delimiter=",", fmt="%.10g")
                np.savetxt(test, np.column_stack([yte, Xte]), delimiter=",", fmt="%.10g")
                extra = ["--classes", str(len(np.unique(y)))] if model == "softmax" else []
                subprocess.run([CLI, "run", "--model", model, "--data", train, "--eval", test, "--epsilon", str(eps),
                                "--quiet", "--no-certificate", "--out", out, *extra], check=True)
                with open(out) as f:
                    ev = json.load(f)["diagnostics"]["eval"]
                scores.append(ev["r2"] if model == "linear" else ev["accuracy"])
            rows.append((name, model, eps, np.median(scores), min(scores)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--eps", default="1,3")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--options", default="{}")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--oracle-bounds", action="store_true", help="not private: see the module's docstring")
    ap.add_argument("--keys", type=int, default=None, help="fixed noise keys and sample orders (paired comparisons)")
    ap.add_argument("--trials", type=int, default=0,
                    help="repeat the check (--splits fresh random splits, one fit each) this many times and print "
                         "how often it meets the issue's targets")
    a = ap.parse_args()
    global REPEATS, ORACLE, KEYS
    REPEATS = a.repeats
    ORACLE = a.oracle_bounds
    KEYS = a.keys
    OPTIONS.update(json.loads(a.options))
    eps_list = [float(e) for e in a.eps.split(",")]
    t = time.time()
    if a.trials:
        text = "\n".join(trials(eps_list, a.splits, a.trials)) + \
            f"\n\n({a.trials} trials of {a.splits} random splits, {a.repeats} fits each, {time.time() - t:.0f} s)\n"
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
        return
    c = [r for name, ld in CLASSIFICATION for r in classification(name, ld, eps_list, a.splits)]
    g = [r for name, ld in REGRESSION for r in regression(name, ld, eps_list, a.splits)]
    lines = ["| table (n) | eps | majority | non-private | dpsosp default (median) | worst split | of the way |",
             "|---|---|---|---|---|---|---|"]
    for name, n, eps, m, r, d, w, f in c:
        lines.append(f"| {name} ({n}) | {eps:g} | {m:.3f} | {r:.3f} | {d:.3f} | {w:.3f} | {100 * f:.0f}% |")
    for eps in eps_list:
        fr = [f for *_, e, m, r, d, w, f in [(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]) for x in c] if e == eps]
        lines.append(f"| classification mean | {eps:g} | | | | | {100 * np.mean(fr):.0f}% |")
    lines += ["", "| table (n), R^2 | eps | mean | non-private | dpsosp default (median) | worst split | of non-private |",
              "|---|---|---|---|---|---|---|"]
    for name, n, eps, m, r, d, w, f in g:
        lines.append(f"| {name} ({n}) | {eps:g} | 0 | {r:.3f} | {d:.3f} | {w:.3f} | {100 * f:.0f}% |")
    lines += ["", "| `dpsosp run` on the same CSV | model | eps | median (accuracy or R^2) | worst split |", "|---|---|---|---|---|"]
    cli_rows = [] if a.no_cli else [r for name, ld, m in CLI_TABLES for r in cli(name, ld, m, eps_list, a.splits)]
    for name, model, eps, d, w in cli_rows:
        lines.append(f"| {name} | {model} | {eps:g} | {d:.3f} | {w:.3f} |")
    text = "\n".join(lines) + f"\n\n({a.splits} splits, {a.repeats} fits each, options {a.options}, " \
        f"{'' if KEYS is None else f'keys {KEYS}, '}" \
        f"{'oracle bounds (not private), ' if ORACLE else ''}" \
        f"{time.time() - t:.0f} s)\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
