"""The page's sections on the synthetic problems: 1. scaling in n and eps (figures,
slopes, the guarantee), the head-to-head counts, 2. saddle escape, and the
appendix with every configuration.  Each writer takes w (appends one line) and
the collected data p (see report.generate).
"""

import math

import config
from collect import esc_alpha
from figures import YMIN
from stats import BOOT, eps_label, f3, med, pct


def write_scaling(w, p):
    res, fits, scaling, relfig, figs, cmd = p.res, p.fits, p.scaling, p.relfig, p.figs, p.cmd
    w("## 1. Scaling in n and eps")
    w("")
    for prob in config.PROBLEMS:
        w("![%s: gap vs n](%s/%s)" % (prob, relfig, figs[(prob, "n")]))
        w("")
        w("*Figure: %s, median and inter-quartile range over %d seeds of the population SOSP gap of the final iterate, "
          "against n; top row default knobs, bottom row tuned; dashed: non-private references (the same in every column); "
          "the axis stops at %g (points below it are off the panel). "
          "Made by `%s`.*" % (prob, len(scaling.seeds), YMIN, cmd))
        w("")
    w("### Slopes")
    w("")
    w("Slope of log(gap) against log(n eps / sqrt(d)), least squares over all runs of the configurations in the "
      "**privacy-dominated regime**, defined as the (n, eps) whose median gap is at least twice the better "
      "non-private reference's median gap at the same n (same tuning mode). 95%% CI: bootstrap over runs within "
      "configurations (%d resamples, fixed seed). The theory: -1/2 for spider-tree-adaptive (and the FOSP rate of "
      "spider-tree-periodic), -3/7 = -0.429 for spider-gauss-fixed. Also shown: the slope over all configurations "
      "(privacy and sampling error mixed), and the slope in eps alone at the largest n (n = %d, eps in {%s}): "
      "there the sampling terms are fixed and only the privacy term moves." % (BOOT, scaling.ns[-1], ", ".join(eps_label(e) for e in scaling.eps)))
    w("")
    w("| problem | algorithm | knob | regime configs (runs) | slope [95% CI] | -1/2 in CI | -3/7 in CI | all configs: slope [95% CI] | eps only, largest n: slope [95% CI] |")
    w("|---|---|---|---|---|---|---|---|---|")
    for prob in config.PROBLEMS:
        for algo in config.PRIVATE:
            for which in ("tuned", "default"):
                f = fits.get((prob, algo, which))
                fa = fits.get((prob, algo, which, "all"))
                alls = "%.3f [%.3f, %.3f]" % (fa["slope"], fa["lo"], fa["hi"]) if fa else "n/a"
                fe = fits.get((prob, algo, which, "eps"))
                alls += " | " + ("%.3f [%.3f, %.3f]" % (fe["slope"], fe["lo"], fe["hi"]) if fe else "n/a")
                if f:
                    w("| %s | %s | %s | %d (%d) | **%.3f** [%.3f, %.3f] | %s | %s | %s |" % (
                        prob, algo, which, f["npts"], f["nruns"], f["slope"], f["lo"], f["hi"],
                        "yes" if f["lo"] <= -0.5 <= f["hi"] else "no",
                        "yes" if f["lo"] <= -3 / 7 <= f["hi"] else "no", alls))
                else:
                    w("| %s | %s | %s | < 3 | not enough privacy-dominated configurations | | | %s |" % (prob, algo, which, alls))
    w("")
    nps = []
    for prob in config.PROBLEMS:
        for algo in config.NONPRIVATE:
            v = fits.get((prob, algo, "tuned", "n"))
            if v is not None:
                nps.append("%s %s %.3f" % (prob, algo, v))
    if nps:
        w("For reference, the slope of log(median gap) against log(n) of the non-private references (tuned): %s "
          "(the theory's non-private term is n^-1/3 for SPIDER, -0.333). Noiseless phase retrieval is an interpolation "
          "problem (every per-example gradient vanishes at x*), so plain SGD can converge to x* exactly, to gaps near "
          "machine precision: its slope there says nothing about rates, and it makes every private configuration "
          "'privacy-dominated' by the criterion above." % "; ".join(nps))
        w("")
    # the guarantee: every private run reports the target it was calibrated to
    dev = [abs(r["default"]["eps_max"] / e - 1) for (p, a, e, n), r in res.items()
           if a in config.PRIVATE and r["default"]["eps_max"] is not None and e != math.inf]
    if dev:
        w("Privacy: every private run reports as its epsilon the guarantee fixed before the run, which is the target it "
          "was calibrated to (largest relative deviation over all configurations and seeds: %.1e). "
          "spider-tree-adaptive calibrates its noise for phases of up to its L_max (automatic: 2^D - 1 >= 2 kappa/alpha, "
          "docs/parameters.md); its phases are often shorter, but an epsilon read off the phases that ran would be no "
          "guarantee (docs/privacy-accounting.md), so all methods are compared at the same guaranteed epsilon." % max(dev))
        w("")
    for prob in config.PROBLEMS:
        w("![%s: gap vs n eps/sqrt(d)](%s/%s)" % (prob, relfig, figs[(prob, "c")]))
        w("")
        w("*Figure: %s, median gap (tuned knob) of every private configuration against n eps / sqrt(d), the fitted lines "
          "over the privacy-dominated regime, and reference slopes -1/2 and -3/7 anchored at spider-tree-adaptive's "
          "largest n eps. Made by `%s`.*" % (prob, cmd))
        w("")


def write_head_to_head(w, p):
    res, wins, scaling = p.res, p.wins, p.scaling
    w("### Head to head")
    w("")
    w("In how many of the %d (n, eps) configurations per problem each private method has the smallest median gap "
      "(tuned knobs; default knobs in parentheses):" % (len(scaling.ns) * len(scaling.eps)))
    w("")
    w("| problem | " + " | ".join(config.PRIVATE) + " |")
    w("|---|" + "---|" * len(config.PRIVATE))
    for prob in config.PROBLEMS:
        cnt = wins[prob]
        w("| %s | " % prob + " | ".join("%d (%d)" % (cnt[(a, "tuned")], cnt[(a, "default")]) for a in config.PRIVATE) + " |")
    w("")
    # ratio adaptive / gauss-fixed
    rat = []
    for prob in config.PROBLEMS:
        for wh in ("tuned", "default"):
            rs = []
            for eps in scaling.eps:
                for n in scaling.ns:
                    a = res.get((prob, "spider-tree-adaptive", eps, n))
                    b = res.get((prob, "spider-gauss-fixed", eps, n))
                    if a and b and a[wh] and b[wh]:
                        rs.append(a[wh]["gap_med"] / b[wh]["gap_med"])
            if rs:
                rat.append((prob, wh, med(rs), min(rs), max(rs)))
    if rat:
        w("Ratio of median gaps spider-tree-adaptive / spider-gauss-fixed over the configurations "
          "(median, min, max; < 1 means the adaptive method is better): " +
          "; ".join("%s %s %.2f (%.2f to %.2f)" % r for r in rat) + ".")
        w("")


def write_escape(w, p):
    esc, escape, relfig, figs, cmd = p.esc, p.escape, p.relfig, p.figs, p.cmd
    w("## 2. Saddle escape")
    w("")
    w("From the strict saddle (lambda_min = -2 for phase retrieval, -0.9 for PCA), %d runs per algorithm at n = %d, "
      "default knobs. On the criterion: with the reported gap (the smallest alpha for which the point is an alpha-SOSP), "
      "lambda_min >= -sqrt(rho * gap) holds for every point by definition, and with the theory's alpha at this n "
      "(about 0.5) sqrt(rho alpha) exceeds |lambda_min| of the saddle itself, so the saddle would count as escaped. "
      "We therefore fix alpha_esc = gap(saddle) / 4 (%s for phase retrieval, %s for PCA, rho = 6): a run **escaped** when "
      "lambda_min >= -sqrt(rho alpha_esc), i.e. at least half of the saddle's negative curvature is gone. Also shown: "
      "the fraction whose second-order condition is implied by their own gradient norm (lambda_min >= -sqrt(rho ||grad F||)), "
      "the fraction with lambda_min > 0 (in the minimiser's basin) and the medians. 95%% Wilson intervals."
      % (len(escape.seeds), escape.n, f3(esc_alpha("phase-retrieval")), f3(esc_alpha("pca"))))
    w("")
    w("![saddle escape](%s/%s)" % (relfig, figs["escape"]))
    w("")
    w("*Figure: fraction of %d runs from the strict saddle that end with lambda_min >= lambda_min(saddle) / 2, per algorithm "
      "and privacy level (the non-private references do not depend on eps), with 95%% Wilson intervals. Made by `%s`.*"
      % (len(escape.seeds), cmd))
    w("")
    w("| problem | eps | algorithm | escaped [95% CI] | lambda_min >= -sqrt(rho grad) | lambda_min > 0 | median gap | median grad norm | median lambda_min |")
    w("|---|---|---|---|---|---|---|---|---|")
    for prob in config.PROBLEMS:
        for eps in escape.eps:
            for algo in config.ALGOS:
                ae = eps if algo in config.PRIVATE else math.inf
                if ae == math.inf and eps != escape.eps[0]:
                    continue
                r = esc[(prob, algo, ae, eps)]
                w("| %s | %s | %s | %s [%s, %s] | %s | %s | %s | %s | %s |" % (
                    prob, eps_label(ae), algo,
                    pct(r["frac_alpha"]), pct(r["ci_alpha"][0]), pct(r["ci_alpha"][1]),
                    pct(r["frac_grad"]), pct(r["frac_pos"]), f3(r["gap_med"]), f3(r["gn_med"]), f3(r["lam_med"])))
    w("")


def write_appendix(w, p):
    res, scaling = p.res, p.scaling
    w("## Appendix: every configuration")
    w("")
    w("Median [inter-quartile range] over the %d evaluation seeds; `knob` is the tuned value (alpha_scale, or the batch "
      "size for dpsgd/sgd); `eps` (guarantee) is the largest reported epsilon over the seeds, the guarantee fixed before "
      "the run (the target); `clipped` is the median fraction of per-example gradient evaluations that were clipped "
      "(read from the reports' diagnostics, which the privacy guarantee does not cover)." % len(scaling.seeds))
    w("")
    for prob in config.PROBLEMS:
        w("### %s" % prob)
        w("")
        w("| algorithm | eps | n | gap, default | knob | gap, tuned | grad norm, tuned | lambda_min, tuned | eps (guarantee) | clipped | steps |")
        w("|---|---|---|---|---|---|---|---|---|---|---|")
        for algo in config.ALGOS:
            for eps in (scaling.eps if algo in config.PRIVATE else [math.inf]):
                for n in scaling.ns:
                    r = res.get((prob, algo, eps, n))
                    if not r:
                        w("| %s | %s | %d | missing | | | | | | | |" % (algo, eps_label(eps), n))
                        continue
                    d, t = r["default"], r["tuned"] or r["default"]
                    w("| %s | %s | %d | %s [%s, %s] | %s | %s [%s, %s] | %s [%s, %s] | %s [%s, %s] | %s | %s | %d |" % (
                        algo, eps_label(eps), n, f3(d["gap_med"]), f3(d["gap_q1"]), f3(d["gap_q3"]),
                        config.fmt(r["knob"]) if r["knob"] is not None else "n/a",
                        f3(t["gap_med"]), f3(t["gap_q1"]), f3(t["gap_q3"]),
                        f3(t["gn_med"]), f3(t["gn_q1"]), f3(t["gn_q3"]),
                        f3(t["lm_med"]), f3(t["lm_q1"]), f3(t["lm_q3"]),
                        f3(t["eps_max"]) if t["eps_max"] is not None else "inf", pct(t["clip"]), int(t["steps"])))
        w("")
