"""The numpydoc docstrings of the estimators of dpsosp.sklearn and their methods, kept apart from the code (it
would pass 400 lines). The Parameters that the library's option table has come from it (_options.estimator_docs),
with each estimator's defaults, in the order of the estimator's signature; the others are below."""
from . import _options
from ._warm import PARTIAL_FIT_DOCS

# Parameters outside the option table, shared by the estimators that take them.
_OWN = {
    "model": None,  # each estimator's own, below
    "fit_intercept": """fit_intercept : bool, default True
        Add a bias to each margin (docs/models.md).""",
    "classes": """classes : array-like or 'observed', optional
        The labels, public: they size the model. None (the default): 0 and 1 for a binary model (auto, logistic,
        sigmoid), as the CLI's logistic model reads them; softmax and mlp need them. 'observed' takes them from y,
        which the guarantee does not cover: a PrivacyLeakWarning and a caveat in report_.""",
    "hidden": """hidden : int, optional
        The mlp model's hidden units (default 32); refused for the other models.""",
    "n_components": """n_components : int, default 1
        The rank r of the principal subspace.""",
    "random_state": """random_state : int, numpy.random.RandomState or None, default None
        The public seed: it orders the sample, never the privacy noise; two fits differ unless noise_key is fixed
        too.""",
    "noise_key": """noise_key : bytes, optional
        16 secret bytes for a reproducible fit (keep them as secret as the data); by default a fresh secret key
        for every fit (dpsosp.generate_noise_key).""",
    "stream": """stream : bool, default True
        Where fit is given a record file's path: read it once, front to back, in its order (True), or load it
        whole (False).""",
    "bounds": """bounds : tuple or array-like, optional
        Public bounds of the features: (lo, hi) for every feature or one pair per feature; records are clipped
        into the box, and no budget is spent on their scale (docs/own-table.md).""",
    "y_bounds": """y_bounds : tuple, optional
        (lo, hi): the target's public bounds (default: estimated privately).""",
    "n_features": """n_features : int, optional
        The public feature count, required for a sparse X (which is widened to it; predict then takes it).""",
    "categorical": """categorical : dict, optional
        {column: [public categories]} one-hot encodes those columns, as dpsosp.encode_table (the same in
        predict).""",
    "impute": """impute : str or dict, optional
        'zero' or {column: value}: fills missing values, as dpsosp.encode_table (the same in predict).""",
    "budget": """budget : Budget, optional
        A dpsosp.Budget shared by fits: GridSearchCV and cross_val_score charge it for every fit
        (docs/budget.md).""",
    "class_weight": """class_weight : dict, optional
        {label: weight in [0, 1]}, public: each record's weight is its class's times its sample_weight.
        'balanced' is refused: it would read the class frequencies from the private records.""",
    "warm_start": """warm_start : bool, default False
        A fit starts from the last fit's point and declares the last fit's released scale as its bounds (no
        budget spent on the scale), where the model and its shape are the same; each fit is a private run of its
        own, charged to budget where one is given.""",
}

_MODEL = {
    "DPClassifier": """model : {'auto', 'logistic', 'sigmoid', 'softmax', 'mlp'}, default 'auto'
        auto: logistic for 2 classes, else softmax; mlp has hidden units (hidden).""",
    "DPRegressor": """model : {'linear', 'cauchy'}, default 'linear'
        linear: least squares with the Huber loss; cauchy: the Cauchy loss log(1 + r^2/2).""",
}

_FITTED = """
    Attributes
    ----------
    report_ : dict
        The run's report (docs/report.md); its 'diagnostics' are not covered by the guarantee, and say so.
    model_ : Model
        The released point as a dpsosp.Model (dpsosp.save writes it).
    epsilon_, delta_ : float
        The fit's guarantee.
    n_features_in_ : int
        The model's width: X's, a record file's, or the declared n_features of a sparse X.
"""

CLASSIFIER = """Differentially private classifier fitted by one private run.

    Logistic regression (2 classes), softmax regression (more), or the sigmoid-loss or mlp models of dpsosp.
    Every fit is one private run: its guarantee (epsilon_, delta_, report_) covers coef_, intercept_ and every
    prediction. The defaults are dpsosp.run's (the CLI's): spider-mf-adaptive, 3 Poisson passes up to 100000
    records (dpsosp.run's epochs; up to 30 on a scaled table where the noise is small: docs/parameters.md, "A
    classifier's passes") at a replace-one target where the records are in memory, G and M estimated
    privately, the scale estimated privately.

    Parameters
    ----------
    {parameters}
""" + _FITTED + """    classes_ : ndarray
        The labels, declared (or observed).
    coef_ : ndarray of shape (1, p) or (classes, p)
        The weights in the user's units (not for mlp).
    intercept_ : ndarray of shape (1,) or (classes,)
        The biases (zeros without fit_intercept).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPClassifier
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = DPClassifier(epsilon=1, classes=[0, 1], noise_key=bytes(16), random_state=0).fit(X, y)
    >>> round(clf.epsilon_, 6), clf.coef_.shape, clf.score(X, y) > 0.9
    (1.0, (1, 3), True)
    """

REGRESSOR = """Differentially private regression fitted by one private run.

    Least squares with the Huber loss (model="linear", the default: the target clipped into its bounds, y_bounds
    or estimated privately, and mapped onto [-1, 1], where the loss is squared and its gradient bounded) or the
    Cauchy loss log(1 + r^2/2) (model="cauchy"); predict gives <x, coef_> + intercept_ in the user's units. The
    options are DPClassifier's, and y_bounds.

    Parameters
    ----------
    {parameters}
""" + _FITTED + """    coef_ : ndarray of shape (p,)
        The weights in the user's units.
    intercept_ : float
        The bias (0 without fit_intercept).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPRegressor
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> y = X @ [1.0, -2.0, 0.5]
    >>> reg = DPRegressor(epsilon=1, noise_key=bytes(16), random_state=0).fit(X, y)
    >>> reg.coef_.shape, reg.score(X, y) > 0.8
    ((3,), True)
    """

PCA = """Differentially private principal subspace.

    The matrix-factorisation objective ||U U^T - z z^T||^2 / 4 of dpsosp's pca model, whose zero start is a strict
    saddle (the noise, or spider-tree-adaptive's perturbations, escape it). Its defaults are the run's but for
    algo="dpsgd" with G = M = 1: at the zero start every per-example gradient is zero, so the private medians
    behind the run's G = M = "auto" say nothing. The data are not centered (their mean would be computed from
    the private data): center them with public knowledge.

    Parameters
    ----------
    {parameters}
""" + _FITTED + """    components_ : ndarray of shape (n_components, p)
        The orthonormalised columns of the released U (post-processing).
    n_components_ : int
        The rank.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPPCA
    >>> Z = np.random.default_rng(0).normal(size=(2000, 4)) * [3.0, 1.0, 0.5, 0.2]
    >>> pca = DPPCA(n_components=1, epsilon=1, noise_key=bytes(16), random_state=0).fit(Z)
    >>> int(np.argmax(np.abs(pca.components_[0])))     # the widest axis
    0
    >>> pca.transform(Z[:5]).shape
    (5, 1)
    """

_SETUP = """    >>> import numpy as np
    >>> from dpsosp import DPClassifier
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> clf = DPClassifier(classes=["no", "yes"], noise_key=bytes(16), random_state=0)
    >>> clf = clf.fit(X, np.where(X[:, 0] > 0, "yes", "no"))
"""
_X = """X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
        The records, encoded as at fit (categorical, impute)."""

METHODS = {
    "DPClassifier.fit": """Fit the classifier by one private run on X and y.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, scipy.sparse matrix, str or os.PathLike
        The records, or the path of a record file (dpsosp.write_records, `dpsosp convert`) whose labels are the
        indices of classes (0 .. K-1, or 0/1 and -1/+1 for two classes), classes then required.
    y : array-like of shape (n,)
        The labels, each one of classes (None for a record file).
    sample_weight : array-like of shape (n,), optional
        One weight in [0, 1] per record: a record adds its weight times its clipped gradient to every release,
        so the sensitivity and the guarantee are unchanged (docs/privacy.md, "Sample weights").

    Returns
    -------
    DPClassifier
        The fitted estimator (self).

    Raises
    ------
    ValueError
        classes not declared, a label not among them (in words that name no record), fewer than 2 classes, a
        model that does not take their number, or an option's rule broken (dpsosp.run's words).

    Warns
    -----
    PrivacyLeakWarning
        classes='observed': the label set is read from y.

    Examples
    --------
""" + _SETUP + """    >>> clf.classes_.tolist(), clf.n_features_in_
    (['no', 'yes'], 3)
    """,
    "DPClassifier.predict": """Predict a label for each record.

    Parameters
    ----------
    """ + _X + """

    Returns
    -------
    ndarray of shape (n,)
        One of classes_ per record.

    Examples
    --------
""" + _SETUP + """    >>> clf.predict([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0]]).tolist()
    ['yes', 'no']
    """,
    "DPClassifier.predict_proba": """Predict the class probabilities of each record.

    Parameters
    ----------
    """ + _X + """

    Returns
    -------
    ndarray of shape (n, classes)
        Each row sums to 1, in the order of classes_.

    Examples
    --------
""" + _SETUP + """    >>> p = clf.predict_proba([[2.0, 0.0, 0.0]])
    >>> p.shape, bool(p[0, 1] > 0.5), float(p.sum().round(6))
    ((1, 2), True, 1.0)
    """,
    "DPClassifier.predict_log_proba": """Predict the logarithms of the class probabilities of each record.

    Parameters
    ----------
    """ + _X + """

    Returns
    -------
    ndarray of shape (n, classes)
        log(predict_proba(X)).

    Examples
    --------
""" + _SETUP + """    >>> bool((clf.predict_log_proba([[2.0, 0.0, 0.0]]) < 0).all())
    True
    """,
    "DPClassifier.decision_function": """Return the margins of each record (the linear models).

    Parameters
    ----------
    """ + _X + """

    Returns
    -------
    ndarray of shape (n,) or (n, classes)
        The margin of the second class for two classes, else one per class. For records inside the bounds'
        box these are X @ coef_.T + intercept_.

    Raises
    ------
    AttributeError
        The mlp model has no linear decision function.

    Examples
    --------
""" + _SETUP + """    >>> clf.decision_function([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0]]).shape
    (2,)
    """,
    "DPRegressor.fit": """Fit the regression by one private run on X and y.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, scipy.sparse matrix, str or os.PathLike
        The records, or the path of a record file that holds the targets.
    y : array-like of shape (n,)
        The targets (None for a record file).
    sample_weight : array-like of shape (n,), optional
        One weight in [0, 1] per record: a record adds its weight times its clipped gradient to every release,
        so the sensitivity and the guarantee are unchanged (docs/privacy.md, "Sample weights").

    Returns
    -------
    DPRegressor
        The fitted estimator (self).

    Raises
    ------
    ValueError
        An unknown model, y given with a record file, or an option's rule broken (dpsosp.run's words).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPRegressor
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> reg = DPRegressor(noise_key=bytes(16), random_state=0).fit(X, X @ [1.0, -2.0, 0.5])
    >>> reg.coef_.shape, type(reg.intercept_)
    ((3,), <class 'float'>)
    """,
    "DPRegressor.predict": """Predict the target of each record, in the user's units.

    Parameters
    ----------
    """ + _X + """

    Returns
    -------
    ndarray of shape (n,)
        <x, coef_> + intercept_, within the target's box.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPRegressor
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> reg = DPRegressor(noise_key=bytes(16), random_state=0).fit(X, X @ [1.0, -2.0, 0.5])
    >>> reg.predict(X[:4]).shape
    (4,)
    """,
    "DPPCA.fit": """Fit the principal subspace by one private run on X.

    Parameters
    ----------
    X : array-like of shape (n, p), scipy.sparse matrix, str or os.PathLike
        The records (centered with public knowledge), or the path of a record file.
    y : None
        Ignored (scikit-learn's convention).

    Returns
    -------
    DPPCA
        The fitted estimator (self).

    Raises
    ------
    ValueError
        An option's rule broken (dpsosp.run's words).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPPCA
    >>> Z = np.random.default_rng(0).normal(size=(2000, 4)) * [3.0, 1.0, 0.5, 0.2]
    >>> DPPCA(n_components=2, noise_key=bytes(16), random_state=0).fit(Z).components_.shape
    (2, 4)
    """,
    "DPPCA.transform": """Project the records onto the private principal subspace.

    Parameters
    ----------
    X : array-like of shape (n, p) or scipy.sparse matrix
        The records.

    Returns
    -------
    ndarray of shape (n, n_components)
        X @ components_.T.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsosp import DPPCA
    >>> Z = np.random.default_rng(0).normal(size=(2000, 4)) * [3.0, 1.0, 0.5, 0.2]
    >>> DPPCA(noise_key=bytes(16), random_state=0).fit(Z).transform(Z[:3]).shape
    (3, 1)
    """,
}
METHODS.update(PARTIAL_FIT_DOCS)

_CLASS = {"DPClassifier": CLASSIFIER, "DPRegressor": REGRESSOR, "DPPCA": PCA}


def document(*classes):
    """Sets the estimators' docstrings, their Parameters from the option table and the entries above in the order
    of the signature, and those of their methods that have none in sklearn.py."""
    for cls in classes:
        own = dict(_OWN, model=_MODEL.get(cls.__name__))
        parameters = _options.estimator_docs(cls, own)
        cls.__doc__ = _CLASS[cls.__name__].replace("{parameters}", parameters)
        for name, doc in METHODS.items():
            owner, method = name.split(".")
            if owner == cls.__name__ and not getattr(cls, method).__doc__:  # one written in sklearn.py stands
                getattr(cls, method).__doc__ = doc
