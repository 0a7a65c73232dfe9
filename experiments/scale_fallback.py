"""How often the private scale estimate's octave step picks a box of noise for a regression target
(docs/own-table.md, "What moved them"; include/dpsosp/scaling.hpp step 1).

    /usr/bin/python3 experiments/scale_fallback.py [--draws 4000]

The diabetes target (scikit-learn, raw: 25 to 346) on random 331-record subsets (a 75% training split), its
histogram over the public signed octave grid with Gaussian noise sigma on every count, read as
src/optimizers/scale_estimate.cpp reads it: the counts above 4 sigma, or where none is, the pair of adjacent
octaves with the largest noisy count. A box of noise: the wrong sign, or an upper edge S below a quarter or above
64 times the target's 98% point. sigma 37.3 is the count noise of 11 columns at mu_s = 0.126 (eps 1, delta 1e-6,
share 0.25) with equal parts; 22.5 the target's with its part w = 1/4 of mu_s^2.
"""
import argparse

import numpy as np
from sklearn import datasets

K = 41  # octaves per sign: [0, 2^-20), [2^-20, 2^-19), ..., [2^19, 2^20]
EDGES = [0.0] + [2.0 ** (k - 20) for k in range(K)]


def octave(v):
    a = abs(v)
    return 0 if a < 2.0 ** -20 else min(K - 1, int(np.floor(np.log2(a))) + 21)


def read(counts, sigma):
    """(negative side, S, fell back) as step 1 reads the noisy counts."""
    kept = counts > 4 * sigma
    if kept.any():
        mag = np.where(kept[:K], counts[:K], 0) + np.where(kept[K:], counts[K:], 0)
        k = int(np.searchsorted(np.cumsum(mag), 0.98 * mag.sum()))
        return bool(kept[K:].any() and not kept[:K].any()), EDGES[k + 1], False
    pairs = [counts[s + j] + counts[s + j + 1] for s in (0, K) for j in range(K - 1)]
    b = int(np.argmax(pairs))
    return b >= K - 1, EDGES[b % (K - 1) + 2], True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=4000)
    a = ap.parse_args()
    _, y = datasets.load_diabetes(return_X_y=True, scaled=False)
    rng = np.random.default_rng(0)
    for sigma in (37.3, 22.5):
        fell = bad = 0
        for _ in range(a.draws):
            sub = rng.choice(y, 331, replace=False)
            counts = np.zeros(2 * K)
            for v in sub:
                counts[octave(v) + (K if v < 0 else 0)] += 1
            q98 = np.quantile(np.abs(sub), 0.98)
            negative, S, fallback = read(counts + sigma * rng.standard_normal(2 * K), sigma)
            fell += fallback
            bad += negative or S < q98 / 4 or S > 64 * q98
        print(f"count noise {sigma}: fell back in {fell} of {a.draws} draws, a box of noise in {bad}")


if __name__ == "__main__":
    main()
