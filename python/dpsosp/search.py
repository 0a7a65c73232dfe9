"""DPSearchCV: private hyperparameter search with one (epsilon, delta) guarantee for the whole search
(docs/selection.md).

    from dpsosp import DPClassifier, DPSearchCV
    search = DPSearchCV(DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3], "epochs": [1, 3]},
                        epsilon=1, delta=1e-6).fit(X, y)
    search.best_params_, search.best_estimator_.predict(X), search.epsilon_

The records are split once, by the public seed random_state over their positions, into a training part and a
held-out part (holdout, a fraction). A candidate run Q draws a setting uniformly from param_grid (or one value per
parameter from param_distributions), fits the estimator privately on the training part as a mu-GDP run, and scores
it on the held-out part with Gaussian noise of the same mu (accuracy, or minus the clipped absolute error): Q is
mu-GDP under replace-one, as the parts are disjoint (docs/selection.md, "One candidate"). The search runs Q K times,
K drawn from the stopping rule (eta = 1: geometric, Liu and Talwar's random stopping; mean n_iter), and keeps the
best score's fit; mu is the largest for which Papernot and Steinke's Theorem 2 gives (epsilon, delta) for the whole
search (python/dpsosp/_selection.py has the formula). K, the settings drawn and every score but the best are secret:
the guarantee is for the best fit, its setting and its noisy score alone (diagnostics_ holds K, not covered).
"""
import hashlib
import numbers
import random
import secrets

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted

from . import _core
from ._selection import draw_runs, selection_epsilon, selection_mu, stopping_gamma
from ._estimator import _D, _is_path
from ._labels import declared_classes, refuse_labels_outside
from .sklearn import DPClassifier, DPRegressor

__all__ = ["DPSearchCV"]

# Set by the search for every candidate: a grid may not name them.
_SET_BY_SEARCH = ("epsilon", "delta", "noise_key", "sampling")
_THEOREM = ("Papernot and Steinke, ICLR 2022, Theorem 2 (K ~ truncated negative binomial D_{eta,gamma}; eta = 1: "
            "geometric, Liu and Talwar 2019), mu-GDP candidates, RDP to (epsilon, delta) by Canonne-Kamath-Steinke "
            "Prop. 12 on dp_accounting's order grid")
_NOT_COVERED = ("not covered by the guarantee: K, the number of candidate runs, is secret (its randomness is part of "
                "the guarantee); do not publish it with the search's results")


class DPSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search over a DPClassifier or DPRegressor with one (epsilon, delta) guarantee.

    The guarantee is for replace-one adjacency, fixed before the search (docs/selection.md; the module's docstring
    has the method).

    Parameters
    ----------
    estimator : DPClassifier or DPRegressor
        The defaults of every candidate; a DPClassifier's classes must be declared (or the binary default, 0 and 1).
    param_grid : dict or list of dict, optional
        A dict of lists (or a list of such dicts): each candidate run draws one setting uniformly. Give it or
        param_distributions.
    param_distributions : dict, optional
        A dict of lists or scipy.stats distributions: one value drawn per parameter.
    epsilon : float, default 1.0
        The whole search's epsilon.
    delta : float, optional
        The whole search's delta (default: the estimator's).
    n_iter : float, default 10
        The expected number of candidate runs E[K] (> 1).
    eta : float, default 1.0
        The stopping rule's shape (1: geometric; > -1).
    holdout : float, default 0.2
        The fraction of the records held out to score the candidates.
    score_bound : float, optional
        DPRegressor: the absolute error each held-out record's is clipped to (default: the width of the
        candidate's target box, private or declared).
    random_state : int, optional
        The public seed of the split.
    noise_key : bytes, optional
        16 secret bytes that fix every secret draw (K, the settings, each fit's noise, the scores' noise), for
        tests.

    Attributes
    ----------
    best_params_ : dict
        The best candidate's setting.
    best_estimator_ : DPClassifier or DPRegressor
        The best candidate, fitted on the training part.
    best_score_ : float
        Its noisy held-out score.
    epsilon_, delta_ : float
        The search's guarantee.
    guarantee_ : dict
        The formula's inputs.
    report_ : dict
        guarantee_ and the best fit's report.
    diagnostics_ : dict
        K, the number of candidate runs: secret, not covered by the guarantee.
    classes_ : ndarray
        A classifier's labels.

    Notes
    -----
    Each candidate gets about half the search's mu: it rarely beats the defaults (docs/selection.md, "The ceiling").

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(3000, 3))
    >>> search = dpsosp.DPSearchCV(dpsosp.DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, n_iter=3,
    ...                            noise_key=bytes(16), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    >>> round(search.epsilon_, 3), search.delta_, search.best_params_["learning_rate"] in (0.3, 1, 3)
    (1.0, 1e-06, True)
    """

    def __init__(self, estimator, param_grid=None, *, param_distributions=None, epsilon=_D["epsilon"], delta=None,
                 n_iter=10, eta=1.0, holdout=0.2, score_bound=None, random_state=None, noise_key=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.eta = eta
        self.holdout = holdout
        self.score_bound = score_bound
        self.random_state = random_state
        self.noise_key = noise_key

    # The search's plan, fixed before any record is read.
    def _plan(self):
        est = self.estimator
        if not isinstance(est, (DPClassifier, DPRegressor)):
            raise TypeError(f"DPSearchCV: estimator: expected a DPClassifier or DPRegressor, got {type(est).__name__}")
        if isinstance(est, DPClassifier) and declared_classes(est) is None:
            raise ValueError("DPSearchCV: the estimator's classes must be declared (classes=[...]): "
                             "classes='observed' reads them from y, outside the guarantee")
        draw = self._setting_drawer(est)
        for name, value in (("epsilon", self.epsilon), ("holdout", self.holdout)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"DPSearchCV: {name}: expected a number, got {value!r}")
        delta = est.delta if self.delta is None else self.delta
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
            raise ValueError(f"DPSearchCV: delta: expected a number in (0, 1), got {delta!r}")
        if not 0 < self.epsilon < float("inf"):
            raise ValueError(f"DPSearchCV: epsilon: expected a finite number > 0, got {self.epsilon!r}")
        if not 0 < self.holdout < 1:
            raise ValueError(f"DPSearchCV: holdout: expected a fraction in (0, 1), got {self.holdout!r}")
        gamma = stopping_gamma(self.n_iter, self.eta)
        mu = selection_mu(float(self.epsilon), float(delta), self.n_iter, self.eta)
        return draw, float(delta), gamma, mu

    def _setting_drawer(self, est):
        grid, dists = self.param_grid, self.param_distributions
        if (grid is None) == (dists is None):
            raise ValueError("DPSearchCV: give one of param_grid and param_distributions")
        which = "param_grid" if dists is None else "param_distributions"
        spaces = grid if dists is None else dists
        spaces = [spaces] if isinstance(spaces, dict) else spaces
        if not isinstance(spaces, (list, tuple)) or not spaces or \
                not all(isinstance(s, dict) and s for s in spaces):
            raise ValueError(f"DPSearchCV: {which}: expected a non-empty dict of parameter values (or a list of "
                             f"such dicts), got {grid if dists is None else dists!r}")
        known = est.get_params(deep=False)
        for space in spaces:
            for name, values in space.items():
                if name not in known:
                    raise ValueError(f"DPSearchCV: {which}: unknown parameter {name!r} of {type(est).__name__} "
                                     f"(its parameters: {', '.join(sorted(known))})")
                if name in _SET_BY_SEARCH:
                    raise ValueError(f"DPSearchCV: {which}: {name!r} is set by the search for every candidate")
                if not hasattr(values, "rvs") and (isinstance(values, str) or not hasattr(values, "__len__")
                                                   or len(values) == 0):
                    raise ValueError(f"DPSearchCV: {which}: {name!r}: expected a non-empty list of values"
                                     + (" or a distribution" if dists is not None else "") + f", got {values!r}")
                if hasattr(values, "rvs") and dists is None:
                    raise ValueError(f"DPSearchCV: param_grid: {name!r}: a distribution belongs in "
                                     "param_distributions")
        if dists is None:
            settings = list(ParameterGrid(spaces))
            return lambda rnd: dict(settings[rnd.randrange(len(settings))])

        def draw(rnd):
            space = spaces[rnd.randrange(len(spaces))]
            return {name: (values.rvs(random_state=np.random.default_rng(rnd.getrandbits(128)))
                           if hasattr(values, "rvs") else values[rnd.randrange(len(values))])
                    for name, values in sorted(space.items())}
        return draw

    def _secret(self, label):
        """A stream for a secret draw: the OS's (secrets), or, with noise_key, one fixed by it (tests)."""
        if self.noise_key is None:
            return secrets.SystemRandom()
        return random.Random(int.from_bytes(hashlib.sha256(bytes(self.noise_key) + label).digest(), "big"))

    def _run_key(self, index):
        if self.noise_key is None:
            return None  # each fit draws a fresh key from the OS
        return hashlib.sha256(bytes(self.noise_key) + b"dpsosp-search-run" + index.to_bytes(8, "big")).digest()[:16]

    def fit(self, X, y=None):
        """Run the private search on X and y and keep the best candidate.

        Parameters
        ----------
        X : array-like of shape (n, p) or pandas.DataFrame
            The records (not a record file: the search splits them).
        y : array-like of shape (n,)
            The labels or targets.

        Returns
        -------
        DPSearchCV
            The fitted search (self).

        Raises
        ------
        ValueError
            An estimator whose classes are not declared, a bad grid, epsilon, delta or holdout, a label outside
            the declared classes, too few records, a target too small for the stopping rule's own cost, or a
            candidate whose run is not Gaussian DP under replace-one.
        TypeError
            An estimator other than DPClassifier or DPRegressor, or a setting that is not a number.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(3000, 3))
        >>> search = dpsosp.DPSearchCV(dpsosp.DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, n_iter=3,
        ...                            noise_key=bytes(16), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
        >>> sorted(search.best_params_), search.diagnostics_["runs"] >= 1
        (['learning_rate'], True)
        """
        draw, delta, gamma, mu = self._plan()
        if _is_path(X):
            raise ValueError("DPSearchCV: fit takes arrays or a DataFrame (the search splits the records), not a "
                             "record file")
        if y is None:
            raise ValueError("DPSearchCV: fit needs y (the labels or targets)")
        if getattr(self.estimator, "budget", None) is not None:
            # Charging each candidate would show their number K, which the guarantee needs unseen.
            raise ValueError("DPSearchCV: the estimator has a budget; a search is one release whose guarantee (an "
                             "RDP bound) a budget cannot compose: leave the estimator's budget unset")
        n = _num_samples(X)
        if _num_samples(y) != n:
            raise ValueError(f"DPSearchCV: X has {n} records and y {_num_samples(y)}")
        self._check_records(X, y)  # refused before any noise, in words that name no record
        n_held = int(round(self.holdout * n))
        if n_held < 1 or n - n_held < 2:
            raise ValueError(f"DPSearchCV: holdout={self.holdout!r} of {n} records leaves {n - n_held} to fit and "
                             f"{n_held} to score; each needs more")
        order = np.random.default_rng(self.random_state).permutation(n)  # public: positions only
        train, held = np.sort(order[n_held:]), np.sort(order[:n_held])
        X_fit, y_fit = _safe_indexing(X, train), _safe_indexing(y, train)
        X_held, y_held = _safe_indexing(X, held), np.asarray(_safe_indexing(y, held))
        epsilon_c = float(_core.gdp_epsilon(mu, delta))
        rnd = self._secret(b"dpsosp-search-draws")
        runs = draw_runs(rnd.random(), self.eta, gamma)
        best = None
        for index in range(runs):
            setting = draw(rnd)
            est = clone(self.estimator).set_params(**setting)
            extra = {"sampling": "order"} if est.algo == "spider-mf-adaptive" else {}
            est.set_params(epsilon=epsilon_c, delta=delta, noise_key=self._run_key(index), **extra)
            est.fit(X_fit, y_fit)
            self._check_candidate(est, setting, mu)
            score = self._noisy_score(est, X_held, y_held, mu, rnd)
            if best is None or score > best[0]:
                best = (score, setting, est)
        self.best_score_, self.best_params_, self.best_estimator_ = best
        self.epsilon_, order_used = selection_epsilon(mu, delta, self.n_iter, self.eta)
        self.delta_ = delta
        self.guarantee_ = {"epsilon": self.epsilon_, "delta": delta, "adjacency": "replace-one",
                           "guarantee": f"({self.epsilon_:.6g}, {delta:.6g})-DP for replace-one adjacency, fixed "
                                        "before the search",
                           "theorem": _THEOREM, "candidate_mu": mu, "candidate_epsilon": epsilon_c,
                           "expected_runs": float(self.n_iter), "eta": float(self.eta), "gamma": gamma,
                           "order": order_used, "n_fit": int(train.size), "n_holdout": int(held.size),
                           "target": {"epsilon": float(self.epsilon), "delta": delta}}
        self.report_ = dict(self.guarantee_, best_params=self.best_params_, best_score=self.best_score_,
                            candidate=self.best_estimator_.report_)
        self.diagnostics_ = {"runs": runs, "covered": _NOT_COVERED}
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        return self

    def _check_records(self, X, y):
        check_array(self.estimator._table(X), accept_sparse="csr", dtype=np.float64)
        if isinstance(self.estimator, DPRegressor):
            check_array(np.asarray(y), ensure_2d=False, dtype=np.float64)
        else:
            refuse_labels_outside("DPSearchCV", self.estimator, y)

    @staticmethod
    def _check_candidate(est, setting, mu):
        r = est.report_
        # A Poisson-sampled run is accounted by PLD (its report's mu is 0 or null): no RDP curve here.
        if not (r.get("mu") or 0) > 0 or "poisson" in str(r.get("mechanism")) or r.get("adjacency") != "replace-one":
            raise ValueError(f"DPSearchCV: the setting {setting} ran a {r.get('mechanism')} run whose guarantee is "
                             f"not Gaussian DP under replace-one (mu {r.get('mu')}, {r.get('adjacency')}); the "
                             "search needs single-pass or order-sampled candidates (docs/selection.md)")
        if r["mu"] > mu * (1 + 1e-6):  # the library calibrates to the target or below it
            raise ValueError(f"DPSearchCV: the setting {setting} ran at mu {r['mu']:.9g} above the candidates' "
                             f"{mu:.9g}")

    def _noisy_score(self, est, X_held, y_held, mu, rnd):
        """The held-out score with Gaussian noise of the candidate's mu (replace-one: one held-out record moves the
        sum by at most its sensitivity): accuracy, or minus the mean absolute error clipped to score_bound."""
        n_held = y_held.shape[0]
        pred = est.predict(X_held)
        if isinstance(est, DPClassifier):
            total, sensitivity = float(np.sum(pred == y_held)), 1.0
        else:
            bound = self.score_bound
            if bound is None:
                box = (est.model_.scaling or {}).get("target")
                if not box:
                    raise ValueError("DPSearchCV: score_bound: needed where the regressor runs without a target box "
                                     "(scale off): the clip of each held-out record's absolute error")
                bound = box["upper"] - box["lower"]
            if isinstance(bound, bool) or not isinstance(bound, numbers.Real) or not 0 < bound < float("inf"):
                raise ValueError(f"DPSearchCV: score_bound: expected a finite number > 0, got {bound!r}")
            err = np.minimum(np.abs(np.asarray(y_held, dtype=np.float64) - pred), bound)
            total, sensitivity = -float(np.sum(err)), float(bound)
        return (total + rnd.gauss(0.0, sensitivity / mu)) / n_held

    def predict(self, X):
        """Predict with the best candidate.

        Parameters
        ----------
        X : array-like of shape (n, p) or pandas.DataFrame
            The records.

        Returns
        -------
        ndarray of shape (n,)
            The best estimator's predictions.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(3000, 3))
        >>> search = dpsosp.DPSearchCV(dpsosp.DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, n_iter=3,
        ...                            noise_key=bytes(16), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
        >>> search.predict(X[:3]).shape
        (3,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """Predict class probabilities with the best candidate (a classifier).

        Parameters
        ----------
        X : array-like of shape (n, p) or pandas.DataFrame
            The records.

        Returns
        -------
        ndarray of shape (n, classes)
            The best estimator's probabilities.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(3000, 3))
        >>> search = dpsosp.DPSearchCV(dpsosp.DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, n_iter=3,
        ...                            noise_key=bytes(16), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
        >>> search.predict_proba(X[:3]).shape
        (3, 2)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def score(self, X, y):
        """Return the best candidate's score on X and y (not private: it reads the records without noise).

        Parameters
        ----------
        X : array-like of shape (n, p) or pandas.DataFrame
            The records.
        y : array-like of shape (n,)
            The labels or targets.

        Returns
        -------
        float
            Accuracy (a classifier) or R^2 (a regressor).

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(3000, 3))
        >>> search = dpsosp.DPSearchCV(dpsosp.DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, n_iter=3,
        ...                            noise_key=bytes(16), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
        >>> 0.0 <= search.score(X, (X[:, 0] > 0).astype(int)) <= 1.0
        True
        """
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)
