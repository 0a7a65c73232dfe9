"""The page's section "Where the measurements agree with the paper and where they
do not": the fitted slopes against the theory's, the head-to-head winners, saddle
escape, Fashion-MNIST against the published accuracies, gap / alpha.
"""

import math

import config
from stats import eps_label, f3, med, pct


def write_agreement(w, p):
    res, fits, esc, fmres, scaling, escape, fm, wins_all = (p.res, p.fits, p.esc, p.fmres, p.scaling, p.escape,
                                                            p.fm, p.wins)
    w("## Where the measurements agree with the paper and where they do not")
    w("")
    for line in agreement(res, fits, esc, fmres, scaling, escape, fm, wins_all):
        w("- " + line)
    gl = gap_alpha_lines(res, scaling)
    if gl:
        w("- The final gap tracks the alpha the run was configured with (the theory's alpha times alpha_scale): "
          "median ratio gap / alpha over the configurations at default knobs (min to max): " + "; ".join(gl) + ". "
          "The methods output the **last** iterate, while the theory (Proposition 3.4) only promises that **some** iterate "
          "is an O~(alpha)-SOSP. Our reading (not separately tested): the perturbed methods add g ~ N(0, alpha^2/d I) "
          "whenever the gradient estimate falls below alpha, so their last iterate hovers at a gap of the order of alpha, "
          "and the measured slope is then largely the slope of the configured alpha; spider-tree-periodic, which uses the "
          "same alpha but never perturbs, ends further below it (its ratio above).")
    w("")


def gap_alpha_lines(res, s):
    """The final gap relative to the alpha each SPIDER-family run was configured with."""
    out = []
    for prob in config.PROBLEMS:
        parts = []
        for algo in ["spider-tree-adaptive", "spider-gauss-fixed", "spider-tree-periodic", "spider"]:
            v = [r["default"]["gap_over_alpha"] for (p, a, e, n), r in sorted(res.items(), key=lambda kv: str(kv[0]))
                 if p == prob and a == algo and r["default"]["gap_over_alpha"] is not None]
            if v:
                parts.append("%s %.2f (%.2f to %.2f)" % (algo, med(v), min(v), max(v)))
        if parts:
            out.append("%s: %s" % (prob, "; ".join(parts)))
    return out

def agreement(res, fits, esc, fmres, s, e, fm, wins_all):
    out = []
    for prob in config.PROBLEMS:
        for algo, theory in (("spider-tree-adaptive", -0.5), ("spider-gauss-fixed", -3 / 7),
                             ("spider-tree-periodic", -0.5), ("dpsgd", None), (config.FLAGSHIP, None)):
            f = fits.get((prob, algo, "tuned"))
            if not f:
                out.append("%s, %s: fewer than 3 privacy-dominated configurations, no slope fitted." % (prob, algo))
                continue
            txt = "%s, %s (tuned): slope %.3f [%.3f, %.3f] over %d configurations." % (
                prob, algo, f["slope"], f["lo"], f["hi"], f["npts"])
            if theory is not None:
                inside = f["lo"] <= theory <= f["hi"]
                txt += " The theory's %s is %s the CI" % ("-1/2" if theory == -0.5 else "-3/7", "inside" if inside else "outside")
                if not inside:
                    txt += " (the measured decay is %s)" % ("faster" if f["hi"] < theory else "slower")
                txt += "."
                if algo == "spider-tree-adaptive":
                    g = fits.get((prob, "spider-gauss-fixed", "tuned"))
                    if g:
                        txt += (" Against spider-gauss-fixed's %.3f [%.3f, %.3f]: the paper predicts a steeper slope "
                                "for the adaptive method; measured, it is %s." % (
                                    g["slope"], g["lo"], g["hi"],
                                    "steeper with non-overlapping CIs" if f["hi"] < g["lo"] else
                                    ("shallower with non-overlapping CIs" if f["lo"] > g["hi"] else
                                     "not distinguishable (overlapping CIs)")))
            out.append(txt)
        cnt = wins_all.get(prob)
        if cnt:
            tot = sum(cnt[(a, "tuned")] for a in config.PRIVATE)
            best = max(config.PRIVATE, key=lambda a: (cnt[(a, "tuned")], a))
            out.append("%s: the smallest median gap (tuned) belongs to %s in %d of %d configurations; "
                       "spider-tree-adaptive in %d." % (prob, best, cnt[(best, "tuned")], tot,
                                                         cnt[("spider-tree-adaptive", "tuned")]))
    for prob in config.PROBLEMS:
        for eps in e.eps:
            r = esc.get((prob, "spider-tree-adaptive", eps, eps))
            p = esc.get((prob, "spider-tree-periodic", eps, eps))
            if r and p:
                out.append("Saddle escape, %s, eps = %s: %s %s, spider-tree-adaptive %s, spider-tree-periodic (no perturbation) %s, "
                           "spider-gauss-fixed %s, dpsgd %s of %d runs end with lambda_min >= lambda_min(saddle)/2 (alpha_esc = %s); "
                           "the non-private references: spider %s, sgd (no noise, no perturbation) %s.%s" % (
                               prob, eps_label(eps), config.FLAGSHIP,
                               pct(esc[(prob, config.FLAGSHIP, eps, eps)]["frac_alpha"]),
                               pct(r["frac_alpha"]), pct(p["frac_alpha"]),
                               pct(esc[(prob, "spider-gauss-fixed", eps, eps)]["frac_alpha"]),
                               pct(esc[(prob, "dpsgd", eps, eps)]["frac_alpha"]), r["m"], f3(r["alpha"]),
                               pct(esc[(prob, "spider", math.inf, eps)]["frac_alpha"]),
                               pct(esc[(prob, "sgd", math.inf, eps)]["frac_alpha"]),
                               " Every private method escapes in at least 95% of the runs, spider-tree-periodic (no "
                               "perturbation) included: at this n the privacy noise alone moves them off the saddle, "
                               "so the perturbation step is not what separates them here."
                               if min(esc[(prob, a, eps, eps)]["frac_alpha"] for a in config.PRIVATE) >= 0.95 else ""))
    if fmres:
        for model in fm.models:
            best = None
            for (m, a, ee), r in sorted(fmres.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
                if m == model and (best is None or r["accuracy"] > best[1]["accuracy"]):
                    best = ((a, ee), r)
            if best:
                ada = [fmres[(model, "spider-tree-adaptive", ee)]["accuracy"] for ee in fm.eps
                       if (model, "spider-tree-adaptive", ee) in fmres]
                out.append("Fashion-MNIST %s: best test accuracy %.2f%% (%s, eps = %s); spider-tree-adaptive reaches %s "
                           "at eps = %s. All are below the published 86.1%% (CNN, eps 2.93) and 89.7%% (ScatterNet, eps 3), "
                           "which use stronger models, many epochs and tuned hyper-parameters." % (
                               model, 100 * best[1]["accuracy"], best[0][0], config.fmt(best[0][1]),
                               ", ".join("%.2f%%" % (100 * x) for x in ada), ", ".join(config.fmt(x) for x in fm.eps))
                           if best[1]["accuracy"] < 0.861 else
                           "Fashion-MNIST %s: best test accuracy %.2f%% (%s, eps = %s)." % (
                               model, 100 * best[1]["accuracy"], best[0][0], config.fmt(best[0][1])))
    return out
