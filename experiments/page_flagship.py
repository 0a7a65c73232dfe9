"""The page's section 0: spider-mf-adaptive (config.FLAGSHIP) against every
private baseline, from the same runs as sections 1 and 3: in how many
configurations of the scaling grid its median gap is at most the best
baseline's, where it loses, and its Fashion-MNIST accuracy against
single-pass dpsgd's.
"""

import math

import config
from stats import f3


def grid_rows(res, scaling, prob, which):
    """(n, eps, flagship median gap, best baseline, its median gap) per configuration."""
    rows = []
    for eps in scaling.eps:
        for n in scaling.ns:
            mine = res.get((prob, config.FLAGSHIP, eps, n))
            best = None
            for a in config.BASELINES:
                r = res.get((prob, a, eps, n))
                if r and r[which] and (best is None or r[which]["gap_med"] < best[1]):
                    best = (a, r[which]["gap_med"])
            if mine and mine[which] and best:
                rows.append((n, eps, mine[which]["gap_med"], best[0], best[1]))
    return rows


def write_flagship(w, p):
    res, scaling, fm, fmres = p.res, p.scaling, p.fm, p.fmres
    w("## 0. spider-mf-adaptive against the baselines")
    w("")
    w("spider-mf-adaptive is the paper's SpiderBoost framework with the changes of docs/parameters.md "
      "(\"spider-mf-adaptive\"): one square-root matrix factorization of the noise over the whole run instead of "
      "a fresh tree per phase (docs/matrix-factorization.md), O1 steps on a batch chosen from public quantities "
      "(O2 steps, on differences of the clipped gradients, only with --o2 on), and the mean of the iterates over "
      "the last quarter of the records as the output. Its parameters come from n, d, the target and the constants alone: the runs "
      "below give it no option (the `default` knob), the baselines their defaults.")
    w("")
    w("**Scaling grid** (section 1's runs, %d seeds): configurations where its median gap is at most the smallest "
      "median gap of the baselines (%s):" % (len(scaling.seeds), ", ".join(config.BASELINES)))
    w("")
    w("| problem | default knobs | tuned knobs (each method its best of 3) |")
    w("|---|---|---|")
    for prob in config.PROBLEMS:
        cells = []
        for which in ("default", "tuned"):
            rows = grid_rows(res, scaling, prob, which)
            cells.append("%d of %d" % (sum(1 for r in rows if r[2] <= r[4]), len(rows)))
        w("| %s | %s |" % (prob, " | ".join(cells)))
    w("")
    for prob in config.PROBLEMS:
        rows = grid_rows(res, scaling, prob, "default")
        lost = [r for r in rows if r[2] > r[4]]
        if lost:
            w("Where it loses on %s (default knobs): " % prob +
              "; ".join("n = %d, eps = %s: %s against %s's %s" % (n, config.fmt(e), f3(g), a, f3(b))
                        for (n, e, g, a, b) in lost) + ".")
            w("")
    ratios = {}
    for prob in config.PROBLEMS:
        rs = [r[2] / r[4] for r in grid_rows(res, scaling, prob, "default") if r[4] > 0]
        if rs:
            rs.sort()
            ratios[prob] = (rs[len(rs) // 2], rs[0], rs[-1])
    if ratios:
        w("Ratio of its median gap to the best baseline's (median over the configurations, min, max; default "
          "knobs): " + "; ".join("%s %.2f (%.2f to %.2f)" % ((prob,) + v) for prob, v in ratios.items()) + ".")
        w("")
    if fmres:
        w("**Fashion-MNIST** (section 3's runs, median over seeds %s): test accuracy against single-pass dpsgd "
          "with the same constants (G = M = 1), and both with the CLI's defaults (G and M estimated privately):"
          % ", ".join(str(s) for s in fm.seeds))
        w("")
        w("| model | eps | spider-mf-adaptive | dpsgd | difference | spider-mf-adaptive (defaults) | dpsgd (defaults) |")
        w("|---|---|---|---|---|---|---|")
        for model in fm.models:
            for e in fm.eps:
                mine = fmres.get((model, config.FLAGSHIP, e))
                theirs = fmres.get((model, "dpsgd", e))
                md = fmres.get((model, config.FLAGSHIP + ":defaults", e))
                dd = fmres.get((model, "dpsgd:defaults", e))
                acc = lambda r: "%.2f%%" % (100 * r["accuracy"]) if r else "missing"
                diff = "%+.2f" % (100 * (mine["accuracy"] - theirs["accuracy"])) if mine and theirs else ""
                w("| %s | %s | %s | %s | %s | %s | %s |" % (model, config.fmt(e), acc(mine), acc(theirs), diff,
                                                           acc(md), acc(dd)))
        w("")
    w("Other data (MNIST digits, scikit-learn's digits and breast cancer): docs/results-other-data.md "
      "(`/usr/bin/python3 experiments/other_data.py`).")
    w("")
