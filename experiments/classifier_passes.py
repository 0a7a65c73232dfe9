"""A classifier's default passes on a scaled table (classifier_passes, docs/parameters.md) against the three
passes of default_passes(n), paired: the same noise key and sample order for both fits.

scikit-learn's bundled classification tables and statsmodels' (experiments/other_tables.py), raw, through
DPClassifier(epsilon=eps) with nothing else set but the declared classes; the same fit with epochs=3 is the
rule before. 20 random 75/25 splits x 3 fits, each split's score the mean of its fits, the median over the
splits as a share of the way from the majority class to the non-private model (standardized logistic regression);
"splits below": the share of splits whose mean is under the majority class.

    /usr/bin/python3 experiments/classifier_passes.py [--keys 0] [--splits 20] [--fits 3] [--eps 1,3]
        [--model mlp] [--only breast_cancer,digits]

--keys K fixes every fit's noise key by (K, table, eps, split, fit): a test of the rule, never of the library's
keys (they are secret and fresh unless a caller gives one).
"""
import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))
from dpsosp import DPClassifier  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


def tables():
    """(name, X, y): the raw columns as scikit-learn and statsmodels ship them."""
    for name, load in [("breast_cancer", datasets.load_breast_cancer), ("wine", datasets.load_wine),
                       ("iris", datasets.load_iris), ("digits", datasets.load_digits)]:
        b = load()
        yield name, b.data.astype(float), b.target
    import statsmodels.datasets as sd
    fair = sd.fair.load_pandas().data
    yield "fair: affairs > 0", fair.drop(columns=["affairs"]).to_numpy(float), (fair["affairs"] > 0).astype(int).to_numpy()
    anes = sd.anes96.load_pandas().data
    yield "anes96: vote", anes.drop(columns=["vote"]).to_numpy(float), anes["vote"].astype(int).to_numpy()
    mode = sd.modechoice.load_pandas().data
    yield ("modechoice: choice", mode.drop(columns=["choice", "individual"]).to_numpy(float),
           mode["choice"].astype(int).to_numpy())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=0)
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--fits", type=int, default=3)
    ap.add_argument("--eps", default="1,3")
    ap.add_argument("--model", default="auto")
    ap.add_argument("--only", default="", help="comma-separated table names (the first word)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    start = time.time()
    print(f"`--keys {args.keys}`, model {args.model}\n")
    print("| table (n) | eps | passes | 3 passes: of the way | the rule: of the way | splits below the majority, "
          "3 / the rule |")
    print("|---|---|---|---|---|---|")
    only = [t for t in args.only.split(",") if t]
    for name, X, y in tables():
        if only and name.split(":")[0] not in only:
            continue
        classes = sorted(set(int(v) for v in y))
        for eps in [float(e) for e in args.eps.split(",")]:
            base, reference, three, rule, passes = [], [], [], [], set()
            for split in range(args.splits):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=100 + split)
                base.append(float(np.mean(yte == np.bincount(ytr).argmax())))
                model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
                reference.append(model.fit(Xtr, ytr).score(Xte, yte))
                a, b = [], []
                for fit in range(args.fits):
                    key = hashlib.sha256(repr((args.keys, name, eps, split, fit)).encode()).digest()[:16]
                    make = lambda **kw: DPClassifier(epsilon=eps, model=args.model, classes=classes,  # noqa: E731
                                                     noise_key=key, random_state=fit, **kw)
                    fitted = make().fit(Xtr, ytr)
                    passes.add(int(fitted.report_["params"]["epochs"]))
                    b.append(fitted.score(Xte, yte))
                    a.append(make(epochs=3).fit(Xtr, ytr).score(Xte, yte))
                three.append(float(np.mean(a)))
                rule.append(float(np.mean(b)))
            bm, rm = np.median(base), np.median(reference)
            way = lambda v: (np.median(v) - bm) / (rm - bm)  # noqa: E731
            below = lambda v: np.mean(np.array(v) < np.array(base))  # noqa: E731
            shown = "/".join(str(p) for p in sorted(passes))
            print(f"| {name} ({len(y)}) | {eps:g} | {shown} | {way(three):.0%} | {way(rule):.0%} | "
                  f"{below(three):.0%} / {below(rule):.0%} |", flush=True)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
