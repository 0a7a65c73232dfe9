"""The package's warnings: a run that may be poor, and something the privacy guarantee does not cover."""

__all__ = ["RunWarning", "PrivacyLeakWarning"]


class RunWarning(UserWarning):
    """A run that took fewer than 10 steps or used under half its records (the report's 'warnings').

    dpsosp.run also warns with it where delta is above 1/(10 n). The run's result stands; the warning says it
    may be poor.

    Attributes
    ----------
    args : tuple
        The message, one line, as for every Warning.

    Examples
    --------
    >>> import warnings, numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, algo="dpsgd", batch_size=500)
    >>> caught[0].category.__name__, str(caught[0].message)
    ('RunWarning', 'dpsgd took 4 steps, fewer than 10: its batches are large for 2000 records ...')
    """


class PrivacyLeakWarning(UserWarning):
    """Something computed from the private data that the privacy guarantee does not cover.

    DPClassifier(classes='observed') warns with it: the label set is then read from y.

    Attributes
    ----------
    args : tuple
        The message, one line, naming what is not covered and how to avoid it.

    Examples
    --------
    >>> import warnings, numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", dpsosp.PrivacyLeakWarning)   # refuse any leak outright
    ...     dpsosp.DPClassifier(classes="observed").fit(X, (X[:, 0] > 0).astype(int))
    Traceback (most recent call last):
    ...
    dpsosp._warnings.PrivacyLeakWarning: DPClassifier: classes='observed' took the classes from y, ...
    """
