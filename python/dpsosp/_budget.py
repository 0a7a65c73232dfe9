"""dpsosp.Budget: a privacy budget shared by runs on the same records (include/dpsosp/budget.hpp, docs/budget.md)."""
import json
import os

from . import _core

__all__ = ["Budget"]


class Budget:
    """An (epsilon, delta) budget under replace-one adjacency, shared by every run given it.

    Each run given ``budget=`` (dpsosp.run, DPClassifier, DPRegressor, DPPCA) is charged by its privacy
    curve, the privacy-loss distribution that reproduces its guarantee, and the charges compose exactly
    (PLD), far tighter than adding the runs' epsilons. A run that would take the spending past ``epsilon``
    is refused with a ValueError before it reads a record (its curve is planned on a table of zeros of
    the records' shape), and nothing is charged. A run that ran is charged even if it failed.

    Copies share the budget: scikit-learn's ``clone`` (GridSearchCV, cross_val_score) hands every fit
    the same object, so a search is charged for every fit, its refit included. A pickled copy (another
    process: ``n_jobs > 1``) is detached: it refuses runs, which would not reach the original.

    Parameters
    ----------
    epsilon : float
        The total epsilon, finite and > 0.
    delta : float
        The delta at which the total is read, in (0, 1).

    Attributes
    ----------
    epsilon : float
        The budget's epsilon.
    delta : float
        The delta at which the budget is read.
    ledger : list of dict
        What was charged, in order.

    Raises
    ------
    TypeError
        epsilon or delta not a number.
    ValueError
        epsilon not finite and > 0, or delta outside (0, 1).

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> from dpsosp import DPClassifier
    >>> from sklearn.model_selection import GridSearchCV
    >>> X = np.random.default_rng(0).normal(size=(3000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> budget = dpsosp.Budget(epsilon=8, delta=1e-5)
    >>> search = GridSearchCV(DPClassifier(epsilon=1, classes=[0, 1], budget=budget),
    ...                       {"learning_rate": [0.5, 1]}, cv=3).fit(X, y)
    >>> len(budget.ledger), budget.spent() < 7      # 7 fits: 2 settings x 3 folds and the refit, composed
    (7, True)
    """

    def __init__(self, epsilon, delta):
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"budget: {name} must be a number, got {value!r}")
        self._core = _core.Budget(float(epsilon), float(delta))
        self._detached = False

    @property
    def epsilon(self):
        """The budget's epsilon."""
        return self._core.epsilon

    @property
    def delta(self):
        """The delta at which the budget is read."""
        return self._core.delta

    def spent(self):
        """Return the epsilon, at the budget's delta, of every charge composed.

        Returns
        -------
        float
            The composed charges' epsilon (0 for none).

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(3000, 3))
        >>> budget = dpsosp.Budget(epsilon=2, delta=1e-6)
        >>> budget.spent()
        0.0
        >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, epsilon=1, G=1, M=1, budget=budget)
        >>> round(budget.spent(), 6)
        1.0
        """
        return self._core.spent()

    def remaining(self):
        """Return the epsilon of the largest Gaussian (mu-GDP) release the budget still admits.

        A yardstick for the next run, which is checked by its own curve.

        Returns
        -------
        float
            That release's epsilon at the budget's delta (0 when none).

        Examples
        --------
        >>> import dpsosp
        >>> round(dpsosp.Budget(epsilon=2, delta=1e-6).remaining(), 2)     # to the PLD grid
        2.0
        """
        return self._core.remaining()

    @property
    def ledger(self):
        """What was charged, in order: a list of dicts (label, curve, and epsilon: the charge alone at the
        budget's delta)."""
        return json.loads(self._core.to_json())["ledger"]

    def save(self, path):
        """Write the budget and its ledger as JSON (the file `dpsosp run --budget FILE` reads and updates).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.

        Returns
        -------
        None

        Examples
        --------
        >>> import os, tempfile, dpsosp
        >>> path = os.path.join(tempfile.mkdtemp(), "budget.json")
        >>> dpsosp.Budget(epsilon=2, delta=1e-6).save(path)
        >>> dpsosp.Budget.load(path)
        Budget(epsilon=2, delta=1e-06): 0 runs charged, epsilon 0 spent
        """
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._core.to_json() + "\n")

    @classmethod
    def load(cls, path):
        """Read a budget written by save or `dpsosp budget --new` (its charges recomposed from their curves).

        Parameters
        ----------
        path : str or os.PathLike
            The budget's file.

        Returns
        -------
        Budget
            The budget, with its ledger; runs charge it as any other (save it again to keep them).

        Raises
        ------
        ValueError
            A file that is not a budget's.
        OSError
            A file that cannot be read.

        Examples
        --------
        >>> import os, tempfile, dpsosp
        >>> path = os.path.join(tempfile.mkdtemp(), "budget.json")
        >>> dpsosp.Budget(epsilon=2, delta=1e-6).save(path)
        >>> dpsosp.Budget.load(path).epsilon
        2.0
        """
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        budget = cls.__new__(cls)
        budget._core = _core.Budget.from_json(text, path)
        budget._detached = False
        return budget

    def _charged_core(self):
        """The core budget for a run (refused for a detached copy)."""
        if self._detached:
            raise ValueError("budget: this Budget is a copy made by pickling (another process, e.g. n_jobs > 1), and "
                             "charges to it would not reach the original: run with n_jobs=1, or save and load it")
        return self._core

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        return {"json": self._core.to_json()}

    def __setstate__(self, state):
        self._core = _core.Budget.from_json(state["json"], "a pickled Budget")
        self._detached = True

    def __repr__(self):
        n = self._core.charges()
        return (f"Budget(epsilon={self.epsilon:.4g}, delta={self.delta:.4g}): {n} run{'s' if n != 1 else ''} "
                f"charged, epsilon {self.spent():.4g} spent")


def charged_core(budget):
    """A run's budget= as the core takes it: None, or a Budget's core (TypeError for anything else)."""
    if budget is None:
        return None
    if not isinstance(budget, Budget):
        raise TypeError(f"budget: expected a dpsosp.Budget, got {budget!r}")
    return budget._charged_core()
