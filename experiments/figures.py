"""The page's figures (matplotlib, Agg): gap against n, gap against n eps / sqrt(d),
saddle escape, Fashion-MNIST accuracy.  PNGs are written without the Software
metadata, so the same data gives the same bytes.
"""

import math
import os

import numpy as np

import config
from stats import eps_label

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"spider-mf-adaptive": "C6", "spider-tree-adaptive": "C3", "spider-gauss-fixed": "C0",
          "spider-tree-periodic": "C2", "dpsgd": "C1", "spider": "0.35", "sgd": "0.65", "dpsgd-multi": "C4",
          "spider-mf-adaptive:defaults": "C6", "dpsgd:defaults": "C1"}
MARK = {"spider-mf-adaptive": "*", "spider-tree-adaptive": "o", "spider-gauss-fixed": "s", "spider-tree-periodic": "^",
        "dpsgd": "D", "spider": "x", "sgd": "+", "dpsgd-multi": "v", "spider-mf-adaptive:defaults": "P",
        "dpsgd:defaults": "d"}
YMIN = 1e-4  # gap axis floor: noiseless phase retrieval lets SGD reach gaps of 1e-16

# Published DP results on Fashion-MNIST (delta = 1e-5); see the page for the sources.
PUBLISHED = [
    ("Papernot+ 2021 CNN, tanh", 2.93, 86.1),
    ("Tramer & Boneh 2021 ScatterNet+linear", 3.0, 89.7),
]


def savefig(fig, path):
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def fig_vs_n(res, prob, s, path):
    fig, axes = plt.subplots(2, len(s.eps), figsize=(4.2 * len(s.eps), 7), sharex=True, sharey=True,
                             squeeze=False)
    for row, which in enumerate(["default", "tuned"]):
        for col, eps in enumerate(s.eps):
            ax = axes[row][col]
            for algo in config.ALGOS:
                e = eps if algo in config.PRIVATE else math.inf
                ns = [n for n in s.ns if (prob, algo, e, n) in res and res[(prob, algo, e, n)][which]]
                if not ns:
                    continue
                S = [res[(prob, algo, e, n)][which] for n in ns]
                y = [x["gap_med"] for x in S]
                lo = [max(0.0, x["gap_med"] - x["gap_q1"]) for x in S]
                hi = [max(0.0, x["gap_q3"] - x["gap_med"]) for x in S]
                ax.errorbar(ns, y, yerr=[lo, hi], color=COLORS[algo], marker=MARK[algo], ms=4,
                            capsize=2, lw=1.2, ls="--" if algo in config.NONPRIVATE else "-",
                            label=algo)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(bottom=YMIN)
            ax.grid(True, which="both", alpha=0.3)
            ax.set_title("%s, eps = %s, %s" % (prob, eps_label(eps), which), fontsize=9)
            if row == 1:
                ax.set_xlabel("n")
            if col == 0:
                ax.set_ylabel("population SOSP gap (median, IQR)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    savefig(fig, path)


def fig_collapse(res, prob, s, fits, path):
    d = config.PROBLEMS[prob]["d"]
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    for algo in config.PRIVATE:
        xs, ys = [], []
        for eps in s.eps:
            for n in s.ns:
                r = res.get((prob, algo, eps, n))
                if r and r["tuned"]:
                    xs.append(n * eps / math.sqrt(d))
                    ys.append(r["tuned"]["gap_med"])
        ax.scatter(xs, ys, color=COLORS[algo], marker=MARK[algo], s=22, label=algo)
        f = fits.get((prob, algo, "tuned"))
        if f:
            xx = np.exp(np.linspace(f["xmin"], f["xmax"], 20))
            ax.plot(xx, np.exp(f["icpt"]) * xx ** f["slope"], color=COLORS[algo], lw=1.5,
                    label="fit %.2f [%.2f, %.2f]" % (f["slope"], f["lo"], f["hi"]))
    # reference slopes anchored at the adaptive method's largest-x point
    allx = [n * e / math.sqrt(d) for e in s.eps for n in s.ns]
    r0 = res.get((prob, "spider-tree-adaptive", max(s.eps), max(s.ns)))
    if r0 and r0["tuned"]:
        x1, y1 = max(allx), r0["tuned"]["gap_med"]
        xx = np.exp(np.linspace(math.log(min(allx)), math.log(x1), 20))
        ax.plot(xx, y1 * (xx / x1) ** -0.5, "k:", lw=1, label="slope -1/2 (this paper)")
        ax.plot(xx, y1 * (xx / x1) ** (-3 / 7), "k--", lw=1, label="slope -3/7 (Ganesh et al.)")
    else:
        ax.text(0.5, 0.5, "no tuned runs in the cache", transform=ax.transAxes, ha="center")
        ax.set_xlim(1, 10)
        ax.set_ylim(0.1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n eps / sqrt(d)")
    ax.set_ylabel("median population SOSP gap (tuned knob)")
    ax.set_title("%s: gap against n eps / sqrt(d); fits over the privacy-dominated runs" % prob, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6.5)
    fig.tight_layout()
    savefig(fig, path)


def fig_escape(esc, e, path):
    probs = list(config.PROBLEMS)
    fig, axes = plt.subplots(1, len(probs), figsize=(6 * len(probs), 4), squeeze=False)
    for i, prob in enumerate(probs):
        ax = axes[0][i]
        width = 0.8 / len(e.eps)
        for j, eps in enumerate(e.eps):
            vals, errs = [], []
            for algo in config.ALGOS:
                r = esc[(prob, algo, eps if algo in config.PRIVATE else math.inf, eps)]
                vals.append(r["frac_alpha"])
                errs.append([max(0.0, r["frac_alpha"] - r["ci_alpha"][0]), max(0.0, r["ci_alpha"][1] - r["frac_alpha"])])
            xs = np.arange(len(config.ALGOS)) + (j - (len(e.eps) - 1) / 2) * width
            ax.bar(xs, vals, width, yerr=np.array(errs).T, capsize=2,
                   label="eps = %s" % eps_label(eps))
        ax.set_xticks(np.arange(len(config.ALGOS)))
        ax.set_xticklabels(config.ALGOS, rotation=25, fontsize=7, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("fraction with lambda_min >= lambda_min(saddle)/2")
        ax.set_title("%s, n = %d, start at the strict saddle, %d runs" % (prob, e.n, len(e.seeds)), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    savefig(fig, path)


def fig_fmnist(fmres, fm, path):
    fig, axes = plt.subplots(1, max(1, len(fm.models)), figsize=(5.5 * max(1, len(fm.models)), 4), squeeze=False)
    for i, model in enumerate(fm.models):
        ax = axes[0][i]
        for algo in fm.algos:
            xs = [e for e in fm.eps if (model, algo, e) in fmres]
            ys = [100 * fmres[(model, algo, e)]["accuracy"] for e in xs]
            ax.plot(xs, ys, marker=MARK[algo], color=COLORS[algo], label=config.fm_label(algo, fm),
                    linestyle=":" if algo.endswith(":defaults") else "-")
        for (name, e, acc) in PUBLISHED:
            ax.scatter([e], [acc], marker="*", s=80, color="k")
            ax.annotate(name, (e, acc), fontsize=6, xytext=(3, -9), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlim(min(fm.eps) / 1.25, max(fm.eps) * 1.25)
        ax.set_xticks(fm.eps)
        ax.set_xticklabels([config.fmt(x) for x in fm.eps])
        ax.set_xlabel("epsilon (delta = %g)" % fm.delta)
        ax.set_ylabel("test accuracy (%)")
        ax.set_ylim(0, 100)
        ax.grid(True, alpha=0.3)
        ax.set_title("Fashion-MNIST, %s" % model, fontsize=9)
        ax.legend(fontsize=6.5, loc="lower right")
    fig.tight_layout()
    savefig(fig, path)


def draw_figures(figdir, res, esc, fmres, fits, scaling, escape, fm):
    """Draw every figure into figdir; returns their file names, keyed (prob, "n"), (prob, "c"),
    "escape" and (when Fashion-MNIST ran) "fmnist"."""
    figs = {}
    for prob in config.PROBLEMS:
        figs[(prob, "n")] = "%s-gap-vs-n.png" % prob
        fig_vs_n(res, prob, scaling, os.path.join(figdir, figs[(prob, "n")]))
        figs[(prob, "c")] = "%s-gap-vs-neps.png" % prob
        fig_collapse(res, prob, scaling, fits, os.path.join(figdir, figs[(prob, "c")]))
    figs["escape"] = "saddle-escape.png"
    fig_escape(esc, escape, os.path.join(figdir, figs["escape"]))
    if fm.models:
        figs["fmnist"] = "fashion-mnist-accuracy.png"
        fig_fmnist(fmres, fm, os.path.join(figdir, figs["fmnist"]))
    return figs
