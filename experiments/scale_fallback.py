"""How often the private scale estimate's octave step picks a box of noise for a regression target
(docs/own-table.md, "What moved them"; include/dpsosp/scaling.hpp step 1).

    /usr/bin/python3 experiments/scale_fallback.py [--draws 4000]

The diabetes target (scikit-learn, raw: 25 to 346) on random 331-record subsets (a 75% training split), its
histogram over the public signed octave grid with Gaussian noise sigma on every count, read as
src/optimizers/scale_estimate.cpp reads it: the counts above 4 sigma in the bulk's cluster, or where none is, the
pair of adjacent octaves with the largest noisy count (a negative pair's less the sign prior's weight). A box of
noise: the wrong sign, or an upper edge S below a quarter or above 64 times the target's 98% point. sigma 37.3 is
the count noise of 11 columns at mu_s = 0.126 (eps 1, delta 1e-6, share 0.25) with equal parts; 22.5 the target's
with its part w = 1/4 of mu_s^2.
"""
import argparse

import numpy as np
from sklearn import datasets

K = 41  # octaves per sign, closed above: [0, 2^-20], (2^-20, 2^-19], ..., (2^19, 2^20]
EDGES = [0.0] + [2.0 ** (k - 20) for k in range(K)]
N = 331


def octave(v):
    a = abs(v)
    if a <= 2.0 ** -20:
        return 0
    e = int(np.floor(np.log2(a)))
    if a == 2.0 ** e:  # a power of two tops its octave
        e -= 1
    return min(K - 1, e + 21)


def read(counts, sigma):
    """(negative side, S, fell back) as step 1 reads the noisy counts: the kept octaves in the bulk's cluster (the
    largest kept octave above 0, those reached from it across gaps of one octave, and octave 0), or where none is
    kept the pair with the largest noisy count, a negative pair's less the prior's sigma^2 log(20) / n."""
    kept = counts > 4 * sigma
    either = kept[:K] | kept[K:]
    if either.any():
        top = [(max(counts[k], counts[K + k]), -k) for k in range(1, K) if either[k]]
        lo = hi = -max(top)[1] if top else -1  # the first of the largest, as the library's scan
        while hi > 0 and (hi + 1 < K and either[hi + 1] or hi + 2 < K and either[hi + 2]):
            hi += 1 if either[hi + 1] else 2
        while lo > 0 and (lo - 1 >= 1 and either[lo - 1] or lo - 2 >= 1 and either[lo - 2]):
            lo -= 1 if either[lo - 1] else 2
        bulk = np.array([k == 0 or lo <= k <= hi for k in range(K)])
        pos, neg = kept[:K] & bulk, kept[K:] & bulk
        mag = np.where(pos, counts[:K], 0) + np.where(neg, counts[K:], 0)
        k = int(np.searchsorted(np.cumsum(mag), 0.98 * mag.sum()))
        return bool(neg.any() and not pos.any()), EDGES[k + 1], False
    cost = sigma ** 2 * np.log(20) / N
    pairs = [counts[s + j] + counts[s + j + 1] - (cost if s else 0) for s in (0, K) for j in range(K - 1)]
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
            sub = rng.choice(y, N, replace=False)
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
