"""dpsosp.Model: a released point as a model (predict, predict_proba; the model file of save and load:
_model_file.py)."""
import numbers

import numpy as np

from . import _core
from ._api import _PRIVACY_KEYS, MODEL_FILE_FORMAT, _check_model, _records
from ._table import _show, encode_table, kept_rule, rule_for

__all__ = ["Model", "predict", "predict_proba"]


class Model:
    """A released point as a model: its name, its shape, x, and the privacy record of the run that released it.

    Build one with Model.from_result(dpsosp.run(...)) or dpsosp.load(path). class_names (a classifier's labels as
    the user declared them: its classes_), feature_names (a DataFrame's columns: its feature_names_in_) and the
    table's declared rule (categorical, impute) are kept where an estimator gave them: predict then takes the raw
    table, encoded by that rule, and answers in those labels.

    Parameters
    ----------
    model : str
        The model's name, one of dpsosp.models().
    x : array-like of shape (d,)
        The released point.
    features, classes, hidden, rank : int
        The shape (classes 0: not a multi-class model); hidden defaults to 32, rank to 1.
    fit_intercept : bool, default False
        Whether x ends with the margins' biases.
    privacy : dict, optional
        The privacy record of the run (epsilon, delta, guarantee, mechanism, ...).
    algo : str, optional
        The algorithm that released x.
    scaling : dict, optional
        The run's map of the records onto the unit box (report's 'scaling').
    class_names, feature_names : list, optional
        The labels in the order of the class indices, and the table's columns (before encoding).
    categorical, impute : dict or str, optional
        The table's declared rule, as dpsosp.encode_table takes it: its columns' public categories, and how
        missing values are filled.
    label : str, optional
        The label column of a run's table (its label=, the CLI's --label), kept for `dpsosp predict`.

    Attributes
    ----------
    model, x, algo, scaling, class_names, feature_names
        As given.
    categorical, impute, label
        As given, each column named as text (None: not declared).
    shape : dict
        features, classes, hidden, rank and fit_intercept.
    privacy : dict
        The privacy record.

    Raises
    ------
    ValueError
        An unknown model, x or class_names of another length than the shape's, feature_names that (encoded by
        categorical) are not the model's features, or a bad rule.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
    >>> m = dpsosp.Model.from_result(r)
    >>> m.model, m.shape["features"], m.x.shape
    ('logistic', 3, (4,))
    >>> m.predict(X[:4]).shape
    (4,)
    """

    def __init__(self, model, x, *, features, classes=0, hidden=32, rank=1, fit_intercept=False, privacy=None,
                 algo=None, scaling=None, class_names=None, feature_names=None, categorical=None, impute=None,
                 label=None):
        _check_model(model)
        self.categorical, self.impute = kept_rule(categorical, impute)
        self.label = None if label is None else str(label)
        self.class_names = None if class_names is None else np.asarray(class_names)
        self.feature_names = None if feature_names is None else [str(n) for n in feature_names]
        self.scaling = None if scaling is None else dict(scaling)
        self.model = model
        self.x = np.asarray(x, dtype=np.float64)
        self.shape = {"features": int(features), "classes": int(classes), "hidden": int(hidden),
                      "rank": int(rank), "fit_intercept": bool(fit_intercept)}
        self.privacy = dict(privacy or {})
        self.algo = algo
        d = _core.model_dim(model, self.shape["features"], self.shape["classes"], self.shape["hidden"],
                            self.shape["rank"], self.shape["fit_intercept"])
        if self.x.shape != (d,):
            raise ValueError(f"Model: x has {self.x.size} entries, a {model} of this shape has {d}")
        if self.class_names is not None and self.class_names.shape != (self.shape["classes"] or 2,):
            raise ValueError(f"Model: class_names holds {self.class_names.size} labels, the {model} model has "
                             f"{self.shape['classes'] or 2} classes")
        if self.feature_names is not None:
            cats = self.categorical or {}
            width = sum(len(cats[n]) if n in cats else 1 for n in self.feature_names)
            if width != self.shape["features"]:
                raise ValueError(f"Model: feature_names holds {len(self.feature_names)} names"
                                 + (f" ({width} features, categorical encoded)" if cats else "")
                                 + f", the model has {self.shape['features']} features")

    @classmethod
    def from_result(cls, result):
        """Build a Model from a report of dpsosp.run or `dpsosp run` (a dict) or a model file's dict.

        Parameters
        ----------
        result : dict
            The report, or a model file's JSON object.

        Returns
        -------
        Model
            The released point with its shape and privacy record.

        Raises
        ------
        ValueError
            No model, shape or x in result.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(2000, 3))
        >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
        >>> dpsosp.Model.from_result(r).privacy["delta"]
        1e-06
        """
        for key in ("model", "shape", "x"):
            if key not in result:
                raise ValueError(f"Model.from_result: no {key!r} (expected a report of dpsosp run or a model file)")
        privacy = result.get("privacy") or {k: result[k] for k in _PRIVACY_KEYS if k in result}
        x = [np.nan if v is None else v for v in result["x"]]
        return cls(result["model"], x, privacy=privacy, algo=result.get("algo"), scaling=result.get("scaling"),
                   class_names=result.get("class_names"), feature_names=result.get("feature_names"),
                   categorical=result.get("categorical"), impute=result.get("impute"), label=result.get("label"),
                   **result["shape"])

    def _features(self, X):
        """Raw records as the model's features: a DataFrame's columns checked against feature_names, and a table
        encoded by the declared rule (categorical, impute), as the fit encoded it."""
        columns = getattr(X, "columns", None)
        if self.feature_names is not None and columns is not None and [str(c) for c in columns] != self.feature_names:
            raise ValueError(f"X: its columns ({_show(list(columns), ',')}) are not the model's features "
                             f"({_show(self.feature_names, ',')}), in that order")
        if self.categorical is None and self.impute is None:
            return X
        return encode_table(X, categorical=rule_for(self.categorical, X), impute=rule_for(self.impute, X))

    def _unit(self, X):
        """The records (numbers) on the unit scale the point was fitted on (the run's scaling), as the library
        maps them."""
        X = _dense(X)
        s = self.scaling
        if not s or (not s.get("lower") and not s.get("normalize")):
            return X
        return _core.scale_records(X, s.get("lower") or [], s.get("upper") or [], bool(s.get("normalize")))

    def predict(self, X):
        """Return one prediction per record (docs/models.md).

        Parameters
        ----------
        X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
            The records, raw: the declared rule (categorical, impute) and the run's scaling are applied here. A
            DataFrame's columns must be feature_names.

        Returns
        -------
        ndarray of shape (n,)
            A class (its label where class_names are kept, else its index), or a fitted value (in the user's
            units).

        Raises
        ------
        ValueError
            Records of another width, or a DataFrame's columns other than the model's features.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(2000, 3))
        >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
        >>> dpsosp.Model.from_result(r).predict([[3.0, 0.0, 0.0], [-3.0, 0.0, 0.0]])
        array([1., 0.])
        """
        p = self._values(self._features(X))
        return p if self.class_names is None else self.class_names[p.astype(np.intp)]

    def _values(self, X):
        """A class index or a fitted value (in the user's units) per record of X (numbers)."""
        p = _core.predict(self.model, self._unit(X), self.x, *self._shape_args(), proba=False)
        t = (self.scaling or {}).get("target")
        if t:
            p = 0.5 * (t["lower"] + t["upper"]) + 0.5 * (t["upper"] - t["lower"]) * np.clip(p, -1.0, 1.0)
        return p

    def predict_proba(self, X):
        """Return a classifier's class probabilities.

        Parameters
        ----------
        X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
            The records, raw.

        Returns
        -------
        ndarray of shape (n, classes)
            Each row sums to 1.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(2000, 3))
        >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
        >>> dpsosp.Model.from_result(r).predict_proba(X[:2]).shape
        (2, 2)
        """
        return self._proba(self._features(X))

    def _proba(self, X):
        """The class probabilities of each record of X (numbers)."""
        return _core.predict(self.model, self._unit(X), self.x, *self._shape_args(), proba=True)

    @property
    def x_user(self):
        """x in the user's units (linear models with an intercept): predictions on raw records inside the box."""
        s = self.scaling
        if not s:
            return self.x
        return None if s.get("x_user") is None else np.asarray(s["x_user"], dtype=np.float64)

    def to_dict(self):
        """Return the model file's JSON object (docs/report.md): what `dpsosp predict --point` and dpsosp.load read.

        Returns
        -------
        dict
            format, version, model, shape, d, x, algo, privacy, scaling (and class_names, feature_names, label,
            categorical and impute where kept): only what the guarantee covers, and the table's declared schema.

        Examples
        --------
        >>> import numpy as np, dpsosp
        >>> X = np.random.default_rng(0).normal(size=(2000, 3))
        >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
        >>> d = dpsosp.Model.from_result(r).to_dict()
        >>> d["format"], d["d"]
        ('dpsosp-model', 4)
        """
        d = {"format": MODEL_FILE_FORMAT, "version": 1, "model": self.model, "shape": dict(self.shape),
             "d": int(self.x.size), "x": [float(v) for v in self.x], "algo": self.algo,
             "privacy": _jsonable(self.privacy), "scaling": _jsonable(self.scaling)}
        if self.class_names is not None:
            d["class_names"] = _jsonable(self.class_names)
        if self.feature_names is not None:
            d["feature_names"] = list(self.feature_names)
        for key in ("categorical", "impute", "label"):
            if getattr(self, key) is not None:
                d[key] = _jsonable(getattr(self, key))
        return d

    def _shape_args(self):
        s = self.shape
        return s["classes"], s["hidden"], s["rank"], s["fit_intercept"]

    def __repr__(self):
        eps = self.privacy.get("epsilon")
        eps = f"{eps:.4g}" if isinstance(eps, numbers.Real) else eps
        return f"dpsosp.Model({self.model!r}, d={self.x.size}, epsilon={eps})"


def _dense(X):
    records = _records(X)
    return np.ascontiguousarray(records.toarray()) if hasattr(records, "toarray") else records


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.str_):
        return str(value)
    return value


def predict(result, X):
    """Return the predictions of a run's report (or a Model) on the records X.

    Parameters
    ----------
    result : dict or Model
        A report of dpsosp.run (or a model file's dict), or a Model.
    X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
        The records, raw.

    Returns
    -------
    ndarray of shape (n,)
        As Model.predict.

    Raises
    ------
    ValueError
        A result that is not a report, or records of another width.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
    >>> dpsosp.predict(r, [[3.0, 0.0, 0.0]])
    array([1.])
    """
    return (result if isinstance(result, Model) else Model.from_result(result)).predict(X)


def predict_proba(result, X):
    """Return the class probabilities of a classifier's report (or a Model) on the records X.

    Parameters
    ----------
    result : dict or Model
        A classifier's report of dpsosp.run, or a Model.
    X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
        The records, raw.

    Returns
    -------
    ndarray of shape (n, classes)
        As Model.predict_proba.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
    >>> float(dpsosp.predict_proba(r, X[:3]).sum(axis=1).round(6).min())
    1.0
    """
    return (result if isinstance(result, Model) else Model.from_result(result)).predict_proba(X)
