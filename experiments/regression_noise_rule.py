"""The regression noise rule (docs/own-table.md, "Noise warning"; scaling.hpp kNoiseSwampsRegression).

Real tables as regressions, raw, DPRegressor(epsilon=eps) defaults (delta 1e-6): diabetes (its target), and columns of
scikit-learn's wine, breast_cancer and iris tables predicted from the others. For each table and epsilon: the public
ratio sqrt(d) / (n mu) (d the features and the intercept, n the training records, mu the target's GDP mu), the median
test R^2 over 10 random 75/25 splits x 3 fits with fresh noise, and the share of fits with R^2 below 0 (worse than
predicting the mean). Rows sorted by the ratio.

    PYTHONPATH=build/python /usr/bin/python3 experiments/regression_noise_rule.py        # about 20 s on 2 cores
"""
import time
import warnings

import numpy as np
from scipy.optimize import brentq
from sklearn import datasets
from sklearn.model_selection import train_test_split

import dpsosp

DELTA = 1e-6


def tables():
    """(name, X, y): raw, as scikit-learn ships them."""
    yield "diabetes", *datasets.load_diabetes(return_X_y=True, scaled=False)
    w = datasets.load_wine().data
    yield "wine: alcohol", w[:, 1:], w[:, 0]
    yield "wine: proline", w[:, :12], w[:, 12]
    b = datasets.load_breast_cancer().data
    yield "breast_cancer: mean area", b[:, [0, 1, 2, 4, 5, 6, 7, 8, 9]], b[:, 3]
    i = datasets.load_iris().data
    yield "iris: petal width", i[:, :3], i[:, 3]


def main():
    warnings.simplefilter("ignore")  # the rule's own RunWarning, and short runs': expected here
    start, rows = time.time(), []
    for name, X, y in tables():
        splits = [train_test_split(X, y, test_size=0.25, random_state=s) for s in range(10)]
        for eps in (0.5, 1.0, 2.0, 3.0, 8.0):
            mu = brentq(lambda m: dpsosp.gdp_epsilon(m, DELTA) - eps, 1e-4, 50)
            ratio = np.sqrt(X.shape[1] + 1) / (len(splits[0][2]) * mu)
            r2 = np.array([dpsosp.DPRegressor(epsilon=eps, delta=DELTA, threads=1).fit(Xtr, ytr).score(Xte, yte)
                           for Xtr, Xte, ytr, yte in splits for _ in range(3)])
            rows.append((ratio, name, eps, float(np.median(r2)), float((r2 < 0).mean())))
    print("| sqrt(d) / (n mu) | table | epsilon | median R^2 | fits with R^2 < 0 |")
    print("|---|---|---|---|---|")
    for ratio, name, eps, median, below in sorted(rows):
        print(f"| {ratio:.4f} | {name} | {eps:g} | {median:.3g} | {below:.0%} |")
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
