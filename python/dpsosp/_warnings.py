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
    >>> import warnings, dpsosp
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", dpsosp.RunWarning)   # make a short run an error
    ...     issubclass(dpsosp.RunWarning, UserWarning)
    True
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
    >>> import warnings, dpsosp
    >>> warnings.simplefilter("error", dpsosp.PrivacyLeakWarning)   # refuse any leak outright
    >>> warnings.resetwarnings()
    """
