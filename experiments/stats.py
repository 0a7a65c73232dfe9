"""The page's statistics and number formats: quantiles, medians, the fixed number
formats, the slope fit with its bootstrap interval, Wilson intervals.

Deterministic: the bootstrap draws from a fixed seed.
"""

import math

import numpy as np

import config

BOOT = 2000  # bootstrap resamples in fit_slope


def q(v, p):
    return float(np.percentile(np.asarray(v, dtype=float), p))


def med(v):
    return float(np.median(np.asarray(v, dtype=float)))


def f3(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1000 or a < 1e-3:
        return "%.2e" % x
    if a >= 10:
        return "%.1f" % x
    return "%.3g" % x


def pct(x):
    return "%.0f%%" % (100 * x)


def eps_label(e):
    return "inf" if e == math.inf else config.fmt(float(e))


def fit_slope(points, d):
    """points: list of (n, eps, [gaps]).  OLS of log gap on log(n eps / sqrt d) over all runs,
    95% CI by a bootstrap that resamples the runs within each configuration (fixed seed)."""
    xs = [math.log(n * e / math.sqrt(d)) for (n, e, g) in points]
    groups = [np.log(np.asarray(g, dtype=float)) for (n, e, g) in points]

    def ols(gs):
        X = np.concatenate([np.full(len(g), x) for x, g in zip(xs, gs)])
        Y = np.concatenate(gs)
        A = np.vstack([X, np.ones_like(X)]).T
        coef, *_ = np.linalg.lstsq(A, Y, rcond=None)
        return coef
    slope, icpt = ols(groups)
    rng = np.random.default_rng(20240601)
    bs = []
    for _ in range(BOOT):
        gs = [g[rng.integers(0, len(g), len(g))] for g in groups]
        bs.append(ols(gs)[0])
    lo, hi = np.percentile(bs, [2.5, 97.5])
    return {"slope": float(slope), "icpt": float(icpt), "lo": float(lo), "hi": float(hi),
            "npts": len(points), "nruns": int(sum(len(g) for g in groups)),
            "xmin": min(xs), "xmax": max(xs)}


def wilson(k, m, z=1.96):
    if m == 0:
        return (0.0, 1.0)
    p = k / m
    den = 1 + z * z / m
    c = (p + z * z / (2 * m)) / den
    h = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / den
    return (max(0.0, c - h), min(1.0, c + h))
