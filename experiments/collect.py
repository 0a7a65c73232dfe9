"""The data behind the page, read from the caches: per-configuration summaries
(default and tuned knob), the saddle-escape fractions, the Fashion-MNIST
evaluations, the slope fits and the head-to-head counts.

Data.used records every argument list the page reads, in the order read
(run_all.py checks those runs).
"""

import math

import numpy as np

import config
from stats import fit_slope, med, q, wilson


class Data:
    def __init__(self, cache, scaling, escape):
        self.cache, self.s, self.e = cache, scaling, escape
        self.used = []

    def reports(self, prob, algo, eps, n, knob, seeds, delta=None):
        out = []
        for sd in seeds:
            a = config.synthetic_args(prob, n, eps, algo, sd, knob, delta or self.s.delta)
            self.used.append(a)
            row = self.cache.get(a)
            if row is not None:
                out.append(row["report"])
        return out

    def tuned_knob(self, prob, algo, eps, n):
        best, best_val = None, None
        for v in config.knob_grid(algo, self.s.quick):
            reps = self.reports(prob, algo, eps, n, v, self.s.tune_seeds)
            if len(reps) < len(self.s.tune_seeds):
                continue
            m = med([r["certificate"]["sosp_gap"] for r in reps])
            if best_val is None or m < best_val:
                best, best_val = v, m
        return best


def clipped_fraction(r):
    """Clipped per-example vectors per gradient evaluation (the report's diagnostics)."""
    d = r["diagnostics"]
    return d["clipped"]["total"] / max(1, d["gradient_evaluations"])


def summarize(reps):
    g = [r["certificate"]["sosp_gap"] for r in reps]
    gn = [r["certificate"]["grad_norm"] for r in reps]
    lm = [r["certificate"]["lambda_min"] for r in reps]
    clip = [clipped_fraction(r) for r in reps]
    eps = [r["epsilon"] for r in reps if r.get("epsilon") is not None]
    ratio = [r["certificate"]["sosp_gap"] / r["params"]["alpha"] for r in reps
             if isinstance(r.get("params"), dict) and r["params"].get("alpha")]
    return {"k": len(reps), "gap": g, "gap_med": med(g), "gap_q1": q(g, 25), "gap_q3": q(g, 75),
            "gn_med": med(gn), "gn_q1": q(gn, 25), "gn_q3": q(gn, 75),
            "lm_med": med(lm), "lm_q1": q(lm, 25), "lm_q3": q(lm, 75),
            "clip": med(clip), "eps_max": max(eps) if eps else None,
            "gap_over_alpha": med(ratio) if ratio else None,
            "samples": med([r["samples_used"] for r in reps]),
            "steps": med([r["steps"] for r in reps])}


def collect(data):
    """res[(prob, algo, eps, n)] = {"default": summary, "tuned": summary, "knob": value}."""
    res = {}
    for (prob, algo, eps, n) in data.s.configs():
        default = config.knob_grid(algo, data.s.quick)[0]
        d = data.reports(prob, algo, eps, n, default, data.s.seeds)
        kb = data.tuned_knob(prob, algo, eps, n)
        t = data.reports(prob, algo, eps, n, kb, data.s.seeds) if kb is not None else []
        if not d:
            continue
        res[(prob, algo, eps, n)] = {"default": summarize(d),
                                     "tuned": summarize(t) if t else None, "knob": kb}
    return res


def ref_gap(res, prob, n, which):
    vals = []
    for algo in config.NONPRIVATE:
        r = res.get((prob, algo, math.inf, n))
        if r and r[which]:
            vals.append(r[which]["gap_med"])
    return min(vals) if vals else None


def regime_points(res, prob, algo, eps_list, ns, which, factor=2.0):
    pts = []
    for eps in eps_list:
        for n in ns:
            r = res.get((prob, algo, eps, n))
            ref = ref_gap(res, prob, n, which)
            if not r or not r[which] or ref is None:
                continue
            if r[which]["gap_med"] >= factor * ref:
                pts.append((n, eps, r[which]["gap"]))
    return pts


def all_points(res, prob, algo, eps_list, ns, which):
    return [(n, e, res[(prob, algo, e, n)][which]["gap"]) for e in eps_list for n in ns
            if (prob, algo, e, n) in res and res[(prob, algo, e, n)][which]]


def esc_alpha(prob):
    lam0 = config.PROBLEMS[prob]["saddle_lambda"]
    return lam0 * lam0 / config.PROBLEMS[prob]["rho"] / 4

def collect_escape(data):
    """Escaped: lambda_min >= -sqrt(rho alpha_esc) with alpha_esc = gap(saddle) / 4, i.e.
    lambda_min >= lambda_min(saddle) / 2: at least half of the negative curvature is gone."""
    e = data.e
    out = {}
    for prob in config.PROBLEMS:
        rho = config.PROBLEMS[prob]["rho"]
        lam0 = config.PROBLEMS[prob]["saddle_lambda"]
        alpha = lam0 * lam0 / rho / 4
        for eps in e.eps:
            for algo in config.ALGOS:
                ae = eps if algo in config.PRIVATE else math.inf
                reps = data.reports(prob, algo, ae, e.n, config.knob_grid(algo)[0], e.seeds, e.delta)
                m = len(reps)
                lam = [r["certificate"]["lambda_min"] for r in reps]
                gn = [r["certificate"]["grad_norm"] for r in reps]
                k_alpha = sum(1 for l in lam if l >= -math.sqrt(rho * alpha))
                k_grad = sum(1 for l, g in zip(lam, gn) if l >= -math.sqrt(rho * g))
                k_pos = sum(1 for l in lam if l > 0)
                out[(prob, algo, ae, eps)] = {
                    "m": m, "alpha": alpha, "lam0": lam0,
                    "frac_alpha": k_alpha / m if m else float("nan"), "ci_alpha": wilson(k_alpha, m),
                    "frac_grad": k_grad / m if m else float("nan"),
                    "frac_pos": k_pos / m if m else float("nan"),
                    "gap_med": med([r["certificate"]["sosp_gap"] for r in reps]) if m else float("nan"),
                    "gn_med": med(gn) if m else float("nan"),
                    "lam_med": med(lam) if m else float("nan")}
    return out


def fmnist_seed_median(rows):
    """The median over the seeds of every number of the rows (the test-set
    evaluations with the run's figures), the accuracy of each seed in "accs"."""
    out = {}
    for k in rows[0]:
        vals = [r[k] for r in rows]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            out[k] = med(vals)
        else:
            out[k] = vals[0]
    out["accs"] = [r["accuracy"] for r in rows]
    out["seeds"] = len(rows)
    return out


def collect_fmnist(data, cache, evcache, fm):
    """(fmres, fmextra): fmres[(model, algo, eps)] = the median over fm.seeds of the test-set
    evaluation with the run's epsilon and steps (also: records used, clipped fraction, and each
    seed's accuracy); fmextra[(M, eps)] the same for one seed."""
    fmres = {}
    for model in fm.models:
        for algo in fm.algos:
            for e in fm.eps:
                rows = []
                for seed in fm.seeds:
                    a = fm.args(model, algo, e, seed=seed)
                    data.used.append(a)
                    row, ev = cache.get(a), evcache.get(a)
                    if row and ev:
                        r = dict(ev["report"])
                        rep = row["report"]
                        r.update({"epsilon": rep["epsilon"], "steps": rep["steps"], "samples": rep["samples_used"],
                                  "clip": clipped_fraction(rep), "d": rep["d"]})
                        rows.append(r)
                if len(rows) == len(fm.seeds):
                    fmres[(model, algo, e)] = fmnist_seed_median(rows)
    fmextra = {}
    for M in fm.extra_M:
        for e in fm.eps:
            a = fm.args("softmax", "spider-tree-adaptive", e, M)
            data.used.append(a)
            row, ev = cache.get(a), evcache.get(a)
            if row and ev:
                r = dict(ev["report"])
                r.update({"epsilon": row["report"]["epsilon"], "steps": row["report"]["steps"]})
                fmextra[(M, e)] = r
    return fmres, fmextra


def compute_fits(res, scaling):
    """fits[(prob, algo, which)]: the privacy-dominated regime; (..., "eps"): eps alone at the
    largest n; (..., "all"): every configuration; (prob, algo, which, "n"): the non-private
    references' slope of log(median gap) in log(n), a float."""
    fits = {}
    for prob in config.PROBLEMS:
        d = config.PROBLEMS[prob]["d"]
        for algo in config.PRIVATE:
            for which in ("tuned", "default"):
                pts = regime_points(res, prob, algo, scaling.eps, scaling.ns, which)
                if len({(n * e) for (n, e, g) in pts}) >= 3:
                    fits[(prob, algo, which)] = fit_slope(pts, d)
                fixn = all_points(res, prob, algo, scaling.eps, scaling.ns[-1:], which)
                if len(fixn) >= 2:
                    fits[(prob, algo, which, "eps")] = fit_slope(fixn, d)
                allp = all_points(res, prob, algo, scaling.eps, scaling.ns, which)
                if len(allp) >= 3:
                    fits[(prob, algo, which, "all")] = fit_slope(allp, d)
        for algo in config.NONPRIVATE:
            for which in ("tuned", "default"):
                pts = all_points(res, prob, algo, [math.inf], scaling.ns, which)
                if len(pts) >= 3:
                    xs = [math.log(n) for (n, e, g) in pts]
                    ys = [math.log(med(g)) for (n, e, g) in pts]
                    fits[(prob, algo, which, "n")] = float(np.polyfit(xs, ys, 1)[0])

    return fits


def count_wins(res, scaling):
    """wins[prob][(algo, which)]: in how many (n, eps) configurations algo has the smallest median gap."""
    wins_all = {}
    for prob in config.PROBLEMS:
        cnt = {(a, wh): 0 for a in config.PRIVATE for wh in ("tuned", "default")}
        for wh in ("tuned", "default"):
            for eps in scaling.eps:
                for n in scaling.ns:
                    best = None
                    for a in config.PRIVATE:
                        r = res.get((prob, a, eps, n))
                        if r and r[wh] and (best is None or r[wh]["gap_med"] < best[1]):
                            best = (a, r[wh]["gap_med"])
                    if best:
                        cnt[(best[0], wh)] += 1
        wins_all[prob] = cnt
    return wins_all
