"""Private hyperparameter search against the untuned default (docs/selection.md).

On scikit-learn's bundled tables, loaded raw, at epsilon 1 and 3 (delta 1e-6, replace-one): the default estimator
fitted once at the full epsilon, against dpsosp.DPSearchCV at the same total epsilon over a small grid (learning
rate x passes x intercept, 12 settings, 10 expected candidate runs), and, to show where the difference comes from,
"alone": the default setting fitted once as a candidate is (order sampling, the candidate epsilon) on the whole
training part. Each of --splits random 75/25 splits (seed = split index): all fit on the 75 % and are scored on the
25 % (accuracy, or R^2). Prints a markdown table of the medians over the splits, and what the search chose.

--ceiling: what no search at the same total epsilon can beat. Every setting of CEILING_GRID is fitted at the epsilon a
candidate gets with n_iter=3 expected runs (the search's most generous useful stopping rule), with the default's
Poisson passes (which the search's candidates cannot use), on the whole 75 %, and scored on the 25 %; the best
setting's median over the first --splits splits is picked with hindsight, on the test scores themselves (not private:
a free selection with no held-out part). The winner of 72 noisy medians is biased upward, so it and the default at
the full epsilon are then fitted afresh on 2 x --splits other splits (seeds --splits, ...), and those medians are
compared.

    PYTHONPATH=build/python /usr/bin/python3 experiments/private_selection.py          # about 10 s on 2 cores
    PYTHONPATH=build/python /usr/bin/python3 experiments/private_selection.py --ceiling --epsilons 1,3,8
"""
import argparse
import collections
import itertools
import time
import warnings

import numpy as np
from sklearn import datasets
from sklearn.model_selection import train_test_split

import dpsosp

GRID = {"learning_rate": [0.3, 1.0, 3.0], "epochs": [1, 3], "fit_intercept": [True, False]}
CEILING_GRID = {"learning_rate": [0.1, 0.3, 1.0, 3.0], "epochs": [1, 3, 10], "scale_share": [0.1, 0.25, 0.4],
                "fit_intercept": [True, False]}
DELTA = 1e-6
N_ITER = 10
CEILING_N_ITER = 3


def tables():
    """(name, X, y, classes or None for regression): raw, as scikit-learn ships them."""
    for name, loader in (("breast_cancer", datasets.load_breast_cancer), ("wine", datasets.load_wine),
                         ("digits", datasets.load_digits)):
        X, y = loader(return_X_y=True)
        yield name, X, y, sorted(set(y.tolist()))  # the label set: public, from the table's documentation
    X, y = datasets.load_diabetes(return_X_y=True)
    yield "diabetes", X, y, None
    try:
        X, y = datasets.fetch_california_housing(return_X_y=True, download_if_missing=False)
        rows = np.random.default_rng(0).choice(X.shape[0], 5000, replace=False)  # a public subset
        yield "california (5000 rows)", X[rows], y[rows], None
    except (OSError, IOError):  # not cached on this machine (no network)
        pass


def estimator(classes, epsilon):
    if classes is None:
        return dpsosp.DPRegressor(epsilon=epsilon, delta=DELTA, threads=1)
    return dpsosp.DPClassifier(epsilon=epsilon, delta=DELTA, classes=classes, threads=1)


def ceiling(args):
    """The best of CEILING_GRID at a candidate's epsilon, chosen with hindsight, against the default (--ceiling)."""
    print("| table | metric | epsilon | candidate epsilon (n_iter=3) | hindsight best at it (chosen on its own scores) |"
          " default (full epsilon), fresh splits | hindsight best, fresh splits | best - default | best setting |")
    print("|---|---|---|---|---|---|---|---|---|")
    settings = [dict(zip(CEILING_GRID, values)) for values in itertools.product(*CEILING_GRID.values())]
    beaten = total = 0
    for name, X, y, classes in tables():
        choose = [train_test_split(X, y, test_size=0.25, random_state=s) for s in range(args.splits)]
        fresh = [train_test_split(X, y, test_size=0.25, random_state=s) for s in range(args.splits, 3 * args.splits)]
        for eps in (float(e) for e in args.epsilons.split(",")):
            cand_eps = dpsosp.gdp_epsilon(dpsosp.selection_mu(eps, DELTA, CEILING_N_ITER), DELTA)

            def median(splits, epsilon, **kw):
                return float(np.median([estimator(classes, epsilon).set_params(**kw).fit(Xtr, ytr).score(Xte, yte)
                                        for Xtr, Xte, ytr, yte in splits]))
            chosen, setting = max(((median(choose, cand_eps, **kw), kw) for kw in settings), key=lambda r: r[0])
            default, best = median(fresh, eps), median(fresh, cand_eps, **setting)
            beaten, total = beaten + (best > default), total + 1
            top = ", ".join(f"{k}={v}" for k, v in setting.items())
            print(f"| {name} | {'accuracy' if classes else 'R^2'} | {eps:g} | {cand_eps:.3f} | {chosen:.3f} |"
                  f" {default:.3f} | {best:.3f} | {best - default:+.3f} | {top} |", flush=True)
    print(f"\nOn fresh splits the hindsight best beats the default in {beaten} of {total} cells; {len(settings)}"
          f" settings, chosen on {args.splits} splits, compared on {2 * args.splits}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--epsilons", default="1,3")
    parser.add_argument("--ceiling", action="store_true", help="the hindsight ceiling (module docstring)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # RunWarning: small tables' short runs, expected here
    start = time.time()
    if args.ceiling:
        ceiling(args)
        print(f"{time.time() - start:.0f} s")
        return
    print("| table | n | metric | epsilon | default (full epsilon) | DPSearchCV (same total) | search - default |"
          " candidate epsilon | alone | most chosen setting |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, X, y, classes in tables():
        for eps in (float(e) for e in args.epsilons.split(",")):
            default, searched, alone, chosen, cand_eps = [], [], [], collections.Counter(), None
            for split in range(args.splits):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=split)
                default.append(estimator(classes, eps).fit(Xtr, ytr).score(Xte, yte))
                search = dpsosp.DPSearchCV(estimator(classes, eps), GRID, epsilon=eps, delta=DELTA, n_iter=N_ITER,
                                           random_state=split).fit(Xtr, ytr)
                searched.append(search.score(Xte, yte))
                chosen[tuple(sorted(search.best_params_.items()))] += 1
                cand_eps = search.guarantee_["candidate_epsilon"]
                # What one candidate's noise costs on its own: the default setting as the search runs it (order
                # sampling, the candidate epsilon), on the whole training part.
                one = estimator(classes, cand_eps).set_params(sampling="order")
                alone.append(one.fit(Xtr, ytr).score(Xte, yte))
            d, s = float(np.median(default)), float(np.median(searched))
            setting, count = chosen.most_common(1)[0]
            top = ", ".join(f"{k}={v}" for k, v in setting)
            print(f"| {name} | {X.shape[0]} | {'accuracy' if classes else 'R^2'} | {eps:g} | {d:.3f} | {s:.3f} | "
                  f"{s - d:+.3f} | {cand_eps:.3f} | {float(np.median(alone)):.3f} | {top} ({count}/{args.splits}) |",
                  flush=True)
    print(f"\n{args.splits} splits; {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
