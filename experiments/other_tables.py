"""Tables no one here tuned for: statsmodels' bundled data sets, raw, through the estimators' defaults
(docs/own-table.md, "Other tables").

DPClassifier(epsilon=eps) / DPRegressor(epsilon=eps) with nothing else set, random 75/25 splits, each split's
score the mean of --repeats fits with fresh noise; the median over the splits against the majority class (the
training mean for a regression) and the non-private model (standardized logistic / ridge regression). Needs
Debian's python3-statsmodels (scripts/install-deps.sh installs it).

    /usr/bin/python3 experiments/other_tables.py [--splits 10] [--repeats 3] [--eps 1,3] [--only NAME]
        [--options '{"y_bounds": [0, 1600]}']

--only: the tables whose name starts with NAME; --options: keywords given to the estimators (the defaults
otherwise), e.g. declared bounds. --quantile-bounds Q declares each split's own Q and 1 - Q points of every
training column (and of a regression's target) as bounds: it reads the records outside any guarantee, a reference
for a private box, never an option for a user.
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
from dpsosp import DPClassifier, DPRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


def tables():
    """(name, classification?, X, y): the raw columns as statsmodels ships them."""
    import statsmodels.datasets as sd
    fair = sd.fair.load_pandas().data
    features = fair.drop(columns=["affairs"]).to_numpy(float)
    yield "fair: affairs > 0", True, features, (fair["affairs"] > 0).astype(int).to_numpy()
    anes = sd.anes96.load_pandas().data
    yield "anes96: vote", True, anes.drop(columns=["vote"]).to_numpy(float), anes["vote"].astype(int).to_numpy()
    mode = sd.modechoice.load_pandas().data
    yield ("modechoice: choice", True, mode.drop(columns=["choice", "individual"]).to_numpy(float),
           mode["choice"].astype(int).to_numpy())
    yield "fair: affairs", False, features, fair["affairs"].to_numpy(float)
    rand = sd.randhie.load_pandas().data
    yield "randhie: mdvis", False, rand.drop(columns=["mdvis"]).to_numpy(float), rand["mdvis"].to_numpy(float)
    star = sd.star98.load_pandas().data
    share = star["NABOVE"] / (star["NABOVE"] + star["NBELOW"])
    yield "star98: share above", False, star.drop(columns=["NABOVE", "NBELOW"]).to_numpy(float), share.to_numpy()
    grunfeld = sd.grunfeld.load_pandas().data.drop(columns=["firm"])
    yield ("grunfeld: invest", False, grunfeld.drop(columns=["invest"]).to_numpy(float),
           grunfeld["invest"].to_numpy(float))
    engel = sd.engel.load_pandas().data
    yield "engel: foodexp", False, engel[["income"]].to_numpy(float), engel["foodexp"].to_numpy(float)
    cancer = sd.cancer.load_pandas().data
    yield "cancer: deaths", False, cancer[["population"]].to_numpy(float), cancer["cancer"].to_numpy(float)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--eps", default="1,3")
    ap.add_argument("--only", default="")
    ap.add_argument("--options", default="{}")
    ap.add_argument("--quantile-bounds", type=float, default=None, help="not private: see the module's docstring")
    args = ap.parse_args()
    options = json.loads(args.options)
    start = time.time()
    print("| table (n, features) | eps | majority / mean | non-private | dpsosp default (median) | worst split "
          "| of the way | fits below the baseline |")
    print("|---|---|---|---|---|---|---|---|")
    warnings.simplefilter("ignore")
    for name, classify, X, y in tables():
        if not name.startswith(args.only):
            continue
        for eps in [float(e) for e in args.eps.split(",")]:
            base, private, fits = [], [], []
            reference = []
            for split in range(args.splits):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=100 + split)
                kwargs = dict(options)
                if classify:
                    base.append(float(np.mean(yte == np.bincount(ytr).argmax())))
                    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
                else:
                    base.append(r2_score(yte, np.full(len(yte), ytr.mean())))
                    model = make_pipeline(StandardScaler(), Ridge())
                reference.append(model.fit(Xtr, ytr).score(Xte, yte))
                if args.quantile_bounds is not None:
                    q = args.quantile_bounds
                    box = lambda v: (float(np.quantile(v, q)), float(np.quantile(v, 1 - q)))  # noqa: E731
                    kwargs["bounds"] = [box(Xtr[:, j]) for j in range(Xtr.shape[1])]
                    if not classify:
                        kwargs["y_bounds"] = box(ytr)
                estimator = DPClassifier if classify else DPRegressor
                make = lambda: estimator(epsilon=eps, **kwargs)  # noqa: E731
                scores = [make().fit(Xtr, ytr).score(Xte, yte) for _ in range(args.repeats)]
                fits += [s < base[-1] for s in scores]
                private.append(float(np.mean(scores)))
            b, r, p = np.median(base), np.median(reference), np.median(private)
            print(f"| {name} ({len(y)}, {X.shape[1]}) | {eps:g} | {b:.3f} | {r:.3f} | {p:.3f} | {min(private):.3f} "
                  f"| {(p - b) / (r - b):.0%} | {np.mean(fits):.0%} |", flush=True)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
