"""The estimators' warm_start and partial_fit (sklearn.py): a fit that starts from the last one."""
import numpy as np


def warm_start_options(self, model, extra):
    """warm_start: the last fit's x as x0 and its released box as declared bounds (post-processing of what
    that fit released, under its own guarantee), where the model and its shape are the same."""
    last = getattr(self, "report_", None)
    if not getattr(self, "warm_start", False) or last is None or last["model"] != model:
        return
    if last["shape"]["fit_intercept"] != bool(extra.get("fit_intercept")) or \
            last["shape"]["classes"] != extra.get("classes", 0) or \
            int(last["shape"]["features"]) != self._width:
        return
    extra["x0"] = np.asarray(last["x"], dtype=np.float64)
    box = last.get("scaling") or {}
    if box.get("lower") and getattr(self, "bounds", None) is None and not box.get("normalize"):
        extra["bounds"] = list(zip(box["lower"], box["upper"]))
    if box.get("target") and getattr(self, "y_bounds", None) is None:
        extra["y_bounds"] = (box["target"]["lower"], box["target"]["upper"])


def partial_fit(estimator, X, y, classes=None):
    """estimator.fit(X, y) with warm_start on for this call. A classifier's label set (public) is its classes, or
    those given here on the first call, or those of the last fit."""
    fitted = getattr(estimator, "n_features_in_", None)
    if fitted is not None and not isinstance(X, (str, bytes)) and hasattr(X, "__len__"):
        width = (X.shape if hasattr(X, "shape") else np.shape(X))[1:2]
        if width and width[0] != fitted and estimator.n_features is None:
            raise ValueError(f"partial_fit: X has {width[0]} features, the model {fitted}: every call takes the "
                             "same features")
    params = estimator.get_params()
    saved = {"warm_start": estimator.warm_start}
    if "classes" in params:
        declared = estimator.classes
        if declared is None or isinstance(declared, str):
            if classes is None:
                classes = getattr(estimator, "classes_", None)
            if classes is not None:  # else fit's default: a binary model's 0 and 1, or its refusal
                saved["classes"] = declared
                estimator.classes = list(classes)
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), np.unique(declared)):
            raise ValueError("partial_fit: classes differ from the estimator's declared classes")
    estimator.warm_start = True
    try:
        return estimator.fit(X, y)
    finally:
        for key, value in saved.items():
            setattr(estimator, key, value)


# The partial_fit methods' docstrings (_estimator_docs.METHODS takes them).
PARTIAL_FIT_DOCS = {
    "DPClassifier.partial_fit": """Fit by one private run on X and y that starts from the last fit (warm_start's rule).

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The records of this call, with the same features as before.
    y : array-like of shape (n,)
        Their labels, each one of the classes.
    classes : array-like, optional
        The public label set, on the first call where the estimator has none (as scikit-learn's).

    Returns
    -------
    DPClassifier
        The fitted estimator (self).

    Raises
    ------
    ValueError
        Another number of features than the last fit's, no label set declared, or an option's rule broken.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 3))
    >>> est = dpsosp.DPClassifier(noise_key=bytes(16), random_state=0)
    >>> est = est.partial_fit(X[:300], X[:300, 0] > 0, classes=[False, True]).partial_fit(X[300:], X[300:, 0] > 0)
    >>> est.report_["scaling"]["features"]
    'declared'
    """,
    "DPRegressor.partial_fit": """Fit by one private run on X and y that starts from the last fit (warm_start's rule).

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The records of this call, with the same features as before.
    y : array-like of shape (n,)
        Their targets.

    Returns
    -------
    DPRegressor
        The fitted estimator (self).

    Raises
    ------
    ValueError
        Another number of features than the last fit's, or an option's rule broken.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 3))
    >>> est = dpsosp.DPRegressor(noise_key=bytes(16), random_state=0)
    >>> est = est.partial_fit(X[:300], X[:300, 0]).partial_fit(X[300:], X[300:, 0])
    >>> est.report_["scaling"]["features"]
    'declared'
    """,
}
