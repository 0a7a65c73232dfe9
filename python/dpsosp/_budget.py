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

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> budget = dpsosp.Budget(epsilon=8, delta=1e-5)
    >>> search = GridSearchCV(DPClassifier(epsilon=1, classes=[0, 1], budget=budget),
    ...                       {"learning_rate": [0.5, 1]}, cv=3).fit(X, y)
    >>> budget.spent(), len(budget.ledger)   # 7 fits: 2 settings x 3 folds and the refit
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
        """The epsilon, at the budget's delta, of every charge composed (0 for none)."""
        return self._core.spent()

    def remaining(self):
        """The epsilon, at the budget's delta, of the largest Gaussian (mu-GDP) release the budget still admits
        (0 when none): a yardstick for the next run, which is checked by its own curve."""
        return self._core.remaining()

    @property
    def ledger(self):
        """What was charged, in order: a list of dicts (label, curve, and epsilon: the charge alone at the
        budget's delta)."""
        return json.loads(self._core.to_json())["ledger"]

    def save(self, path):
        """Writes the budget and its ledger as JSON (the file `dpsosp run --budget FILE` reads and updates)."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._core.to_json() + "\n")

    @classmethod
    def load(cls, path):
        """A budget written by save or `dpsosp budget --new` (its charges recomposed from their curves)."""
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
