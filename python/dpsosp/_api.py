"""The package's functions over the private _core module: keywords checked by
name, arrays converted (numpy, pandas, scipy.sparse), the library's rules in
the CLI's words, warnings, models you can predict with, save and load."""
import json
import numbers
import os
import warnings

import numpy as np

from . import _core, _options
from ._budget import charged_core
from ._labels import label_indices, label_numbers
from ._table import _declared_width, _numeric_dtype, _table_input, load_data_table
from ._table import encode_table, kept_rule, table_rule  # noqa: F401
from ._warnings import PrivacyLeakWarning, RunWarning

__all__ = ["RunWarning", "PrivacyLeakWarning", "run", "certify",
           "encode_table"]

# Which models read classes, hidden and rank: the library's model table (model.hpp).
_MODELS_READING = {key: tuple(m["name"] for m in _core.model_table() if m[flag])
                   for key, flag in (("classes", "classifier"), ("hidden", "reads_hidden"), ("rank", "reads_rank"))}
_MODELS_READING_TEXT = {key: "the " + " and ".join(names) + (" models" if len(names) > 1 else " model")
                        for key, names in _MODELS_READING.items()}
# What a model file keeps of a report: the guarantee of the run that released x.
_PRIVACY_KEYS = ("private", "guarantee", "epsilon", "delta", "mu", "sigma", "sensitivity", "noise_multiplier",
                 "epsilon_rdp", "zcdp_rho", "depth", "mechanism", "noise", "grid", "accounting", "adjacency",
                 "caveats")
MODEL_FILE_FORMAT = "dpsosp-model"


def _count(name, value, low, high):
    """An integer option, refused in the CLI's words ("NAME: expected an integer in [LOW, HIGH], got V")."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        if not float(value).is_integer():
            raise ValueError(f"{name}: expected {_core.count_rule_text(low, high)}, got {value!r}")
        value = int(value)
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: expected {_core.count_rule_text(low, high)}, got {value!r}")
    return int(value)


def _real(name, value):
    """A number (its range is the library's rule, checked in _core with the CLI's words)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    return float(value)


def _records(X, name="X"):
    """Dense float64 C-ordered rows, or a float64 CSR matrix (sorted, no duplicates)."""
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):  # scipy.sparse
        m = X.tocsr().astype(np.float64, copy=True)
        m.sum_duplicates()
        m.sort_indices()
        if m.ndim != 2:
            raise ValueError(f"{name}: expected a 2-d matrix")
        return m
    if hasattr(X, "to_numpy") and hasattr(X, "dtypes"):  # pandas.DataFrame
        bad = [c for c, t in zip(X.columns, X.dtypes) if not _numeric_dtype(t)]
        if bad:
            raise ValueError(f"{name}: column {bad[0]!r} is not numeric ({X[bad[0]].dtype})")
        X = X.to_numpy(dtype=np.float64)
    a = np.asarray(X, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-d array (n records x p features), got {a.ndim}-d"
                         + ("; X.reshape(-1, 1) makes one feature" if a.ndim == 1 else ""))
    if a.shape[0] == 0:  # the run's own words would name the CLI's --data
        raise ValueError(f"{name}: no records")
    return np.ascontiguousarray(a)


def _labels(y, n, names=None):
    if y is None:
        return None
    if hasattr(y, "to_numpy"):  # pandas.Series / DataFrame
        y = y.to_numpy(dtype=object) if names is not None else y.to_numpy()
    if names is not None:
        # Public class names: each label is one of them and becomes its index.
        values = np.asarray(y, dtype=object)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(f"y: expected one label per record (a 1-d array), got shape {values.shape}")
        y = label_indices(values, names)
    a = label_numbers(y)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"y: expected one label per record (a 1-d array), got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"run: {a.shape[0]} labels for {n} records")
    return np.ascontiguousarray(a)


def _model_options(model, classes, hidden, rank):
    """classes, hidden and rank, each refused (as by the CLI) for a model that does not read it."""
    given = {"classes": classes, "hidden": hidden, "rank": rank}
    for key, value in given.items():
        if value is not None and model not in _MODELS_READING[key] and model in _core.models():
            raise ValueError(f"{key}: applies to {_MODELS_READING_TEXT[key]}, not {model}")
    return (0 if classes is None else _count("classes", classes, 2, 1 << 30),
            32 if hidden is None else _count("hidden", hidden, 1, 1 << 30),
            1 if rank is None else _count("rank", rank, 1, 1 << 30))


def _bounds(name, value, rule="(lo, hi) or one (lo, hi) per feature"):
    """[(lo, hi), ...] from (lo, hi), a list of pairs or a 2 x p / p x 2 array; [] for None."""
    if value is None:
        return []
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):  # text, or ragged pairs
        a = np.zeros(0)
    if a.ndim == 1 and a.shape[0] == 2:
        a = a.reshape(1, 2)
    if a.ndim != 2 or a.shape[1] != 2 or (name == "y_bounds" and a.shape[0] != 1):
        shown = f"shape {np.shape(value)}" if hasattr(value, "shape") else repr(value)
        raise ValueError(f"{name}: expected {rule}, numbers, got {shown}")
    return [(float(lo), float(hi)) for lo, hi in a]


def _sample_weight(w, records):
    """One weight per record of X, as a float64 vector (the library checks each is in [0, 1])."""
    if records is None:
        raise ValueError("sample_weight: applies to X (one weight per record); a record file holds no weights")
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != records.shape[0]:
        raise ValueError(f"sample_weight: expected one weight per record ({records.shape[0]}), got shape {w.shape}")
    return w


def _check_model(model):
    if not isinstance(model, str):
        raise TypeError(f"model: expected a model name, got {model!r}")
    if model not in _core.models():
        raise ValueError(f"model: unknown model '{model}', expected one of {', '.join(_core.models())}")


# run()'s own keywords (the records, the model's shape, the key, the callback) and their defaults; the
# run's options are the library's table's (_options.py).
_OWN = dict(x0=None, classes=None, hidden=None, rank=None, fit_intercept=None, noise_key=None, callback=None,
            data=None, stream=False, n_features=None, label=None, categorical=None, impute=None, bounds=None,
            y_bounds=None, budget=None, sample_weight=None)


def run(model, X=None, y=None, **options):
    """Run a private optimizer on the records X with labels y and return its report.

    The report is a dict with the keys of `dpsosp run`'s JSON (docs/report.md). Everything in it but its
    'diagnostics' is covered by the privacy guarantee, fixed before the run. Every option of the library's table
    (the parameters between y and x0 below, in the order of `dpsosp run --help`; None or absent: the default) is checked
    by the library, whose errors name the keyword: options an algorithm does not read are refused
    (dpsosp.algorithm_table() lists what each reads).

    Parameters
    ----------
    model : str
        The model's name, one of dpsosp.models() (docs/models.md).
    X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix, optional
        The records (numpy, pandas or scipy.sparse); None where data names a record file. A table (a pandas
        DataFrame, or an array) is encoded as numbers by encode_table's rules (label, categorical, impute below).
    y : array-like of shape (n,), optional
        The labels (or targets); None for pca, where label names a column of X, or where data names a CSV table or
        a record file (which hold their labels).
    {options}
    x0 : array-like of shape (d,), optional
        The start point (default: the model's).
    classes : int or list, optional
        softmax and mlp need classes=K (labels 0 .. K-1). A list gives the public class names: labels are compared
        with ==, each mapped to its index (logistic and sigmoid take 2), the rule of the CLI's --classes a,b,c.
    hidden : int, optional
        The mlp model's hidden units (default 32).
    rank : int, optional
        The pca model's rank (default 1).
    fit_intercept : bool, optional
        Add a bias to each margin (docs/models.md); None (the default, as the CLI's): on for logistic, sigmoid,
        softmax, linear and cauchy.
    noise_key : bytes, optional
        16 secret bytes that key the privacy noise (see generate_noise_key); by default, unless noise_key_file
        is given, a fresh key from the OS kept nowhere. Keep them as secret as the data.
    callback : callable, optional
        callback(step, info) is called after every step with what the step released (info: x, o1, batch,
        records_used, release_norm, perturbed); returning False stops the run (termination 'callback').
    data : str or os.PathLike, optional
        Instead of X and y: a CSV table (.csv, .csv.gz), read by the CLI's loader with label, classes, categorical
        and impute, the same records as `dpsosp run --data`; or a record file (write_records, `dpsosp convert`):
        loaded whole, or with stream=True read once, front to back, in the file's order (docs/data-formats.md). A
        sparse record file needs the feature count its header declares (dpsosp convert --features).
    stream : bool, default False
        Read the record file data once, front to back, instead of loading it whole.
    n_features : int, optional
        The public feature count D. A scipy.sparse X needs it: it is widened to D, and an index at or above D is
        refused. A dense X (numpy, pandas) has one width for every record; n_features, if given, must be it.
    label : str or int, optional
        The column of X (or of the CSV table data) that holds the labels (y then stays None), by the rule of the
        CLI's --label: a header name, or a 0-based index (a CSV table's default: the first column).
    categorical : dict, optional
        {column: [public categories]}: those columns one-hot encoded, as in encode_table (the CLI's
        --categorical).
    impute : str or dict, optional
        'zero' or {column: value}: how missing values are filled, as in encode_table (the CLI's --impute).
    bounds : tuple or array-like, optional
        Public bounds of the features (docs/own-table.md): one (lo, hi) for every feature or one per feature.
        Records are clipped into the box and mapped onto [-1, 1]; see also scale, scale_share and normalize.
        The report's 'scaling' holds the map, the estimate's share and noise, and x_user: x in the user's units
        (Model.predict takes raw X).
    y_bounds : tuple, optional
        linear and cauchy: the target's public bounds (lo, hi), used as bounds are.
    budget : Budget, optional
        A budget shared by runs (docs/budget.md): the run is charged by its privacy curve, and refused (ValueError,
        before it reads a record) where it would take the budget's spending past its epsilon.
    sample_weight : array-like of shape (n,), optional
        One weight in [0, 1] per record of X: a record adds its weight times its clipped gradient to every
        release, so the sensitivity, and the guarantee, are unchanged (docs/privacy.md, "Sample weights").

    Returns
    -------
    dict
        The report (docs/report.md): among others x (the released point), epsilon, delta, guarantee, steps,
        termination, warnings, shape and scaling; 'diagnostics' (clipped counts, timings), computed from the data
        without noise, is the one entry the guarantee does not cover (release_only=True leaves it out).

    Raises
    ------
    ValueError
        A bad value (an option's rule broken, in the words of the CLI; an option the algorithm does not read;
        a label outside the declared classes; a run the budget refuses), with one line.
    TypeError
        An unknown keyword, or a value of the wrong type.
    KeyboardInterrupt
        Ctrl-C stops the run after the current step and raises KeyboardInterrupt with the report so far as its
        .result (the guarantee covers the shorter run too); an exception in the callback is raised the same way.

    Warns
    -----
    RunWarning
        A run that took fewer than 10 steps or used under half its records, or a delta above 1/(10 n).

    Notes
    -----
    The public shape (docs/privacy.md): what sizes a private run is declared, never read from the records.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> y = (X[:, 0] > 0).astype(float)
    >>> r = dpsosp.run("logistic", X, y, epsilon=1, G=1, M=1, seed=1)
    >>> r["guarantee"]
    '(1, 1e-06)-DP for replace-one adjacency, fixed before the run...'
    >>> r["x"].shape                    # three weights and an intercept
    (4,)
    """
    encoded_one_hot = options.pop("_one_hot", None)  # the estimators': X encoded already, its one-hot flags
    unknown = [k for k in options if k not in _options.SHARED and k not in _OWN]
    if unknown:
        raise TypeError(f"run() got an unexpected keyword argument '{unknown[0]}'")
    own = {**_OWN, **{k: v for k, v in options.items() if k in _OWN}}
    x0, classes, hidden, rank, fit_intercept, noise_key, callback, data, stream, n_features, label, categorical, \
        impute, bounds, y_bounds, budget, sample_weight = (own[k] for k in _OWN)
    _check_model(model)
    if data is not None and not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data: expected a record file's path, got {data!r}")
    if not isinstance(stream, bool):
        raise TypeError(f"stream: expected True or False, got {stream!r}")
    text, overrides = _options.given_options({k: v for k, v in options.items() if k in _options.SHARED})
    rule = table_rule(categorical, impute)  # checked whole, as the options are, before X is read
    csv = None if data is None or X is not None else load_data_table(_core, model, data, y, label, classes, rule,
                                                                     stream)
    notes, origin = [], ""  # the loader's warnings on a CSV table's layout lead the run's, as the CLI's
    if csv is not None:  # the table's rule applied by the loader: X, y and its one-hot flags as the CLI's
        (X, y, encoded_one_hot, notes, origin), data = csv, None
    X, y, class_names, one_hot = _table_input(model, X, y, classes, *((None,) * 3 if csv else (label, categorical,
                                                                                            impute)), _core.models())
    one_hot = one_hot or encoded_one_hot or []
    width = None if n_features is None else _count("n_features", n_features, 1, 2147483647)
    records = None if X is None else _declared_width(_records(X), width)
    labels = None if records is None else _labels(y, records.shape[0], None if csv else class_names)
    if records is None and y is not None:
        raise ValueError("y: applies to X; a record file holds its labels")
    if class_names is not None:
        classes = len(class_names) if model in ("softmax", "mlp") else None
    classes, hidden, rank = _model_options(model, classes, hidden, rank)
    budget = charged_core(budget)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback: expected a callable callback(step, info), got {callback!r}")
    try:
        result = _core.run(
            model, records, labels, text, overrides, None if x0 is None else np.asarray(x0, dtype=np.float64),
            classes, hidden, rank, None if fit_intercept is None else bool(fit_intercept), noise_key, callback,
            None if data is None else os.fspath(data), stream,
            0 if n_features is None else _count("n_features", n_features, 1, 2147483647), _bounds("bounds", bounds),
            None if y_bounds is None else _bounds("y_bounds", y_bounds, "(lo, hi)")[0], budget,
            None if sample_weight is None else _sample_weight(sample_weight, records), one_hot)
    except _core.LabelError as e:  # a refusal of a CSV table's labels says where they were read from, as the CLI's
        raise (ValueError(f"{e}; {origin}") if origin else e) from None
    _keep_table_rule(result, class_names, label, categorical, impute)
    result["warnings"] = list(notes) + list(result["warnings"])
    for message in result["warnings"]:
        warnings.warn(message, RunWarning, stacklevel=2)
    if result["private"] and result["n"] > 0 and result["delta"] > 0.1 / result["n"]:  # public: delta and n
        warnings.warn(f"delta {result['delta']:.3g} is above 1/(10 n) = {0.1 / result['n']:.3g} for the "
                      f"{result['n']} records: delta should be well below 1/n, the chance that the guarantee fails "
                      "for some record", RunWarning, stacklevel=2)
    return result


def _keep_table_rule(result, class_names, label, categorical, impute):
    """The table's declared rule in the report, as the CLI's run writes it (class_names, label, categorical,
    impute: public), so that dpsosp.save keeps it and dpsosp predict and dpsosp.load read the raw table."""
    if class_names is not None:
        result["class_names"] = [v.item() if isinstance(v, np.generic) else v for v in class_names]
    if label is not None:
        result["label"] = str(label)
    kept_categorical, kept_impute = kept_rule(categorical, impute)
    if kept_categorical is not None:
        result["categorical"] = kept_categorical
    if kept_impute is not None:
        result["impute"] = kept_impute


run.__signature__ = _options.signature(_OWN)
run.__doc__ = run.__doc__.replace("{options}", _options.docs())


def certify(model, X, y=None, x=None, *, rho=1.0, classes=None, hidden=None, rank=None, fit_intercept=False):
    """Gradient norm, smallest Hessian eigenvalue and SOSP gap of the point x on the records X, y.

    A non-private check of a point (as `dpsosp certify --point`): it reads the records without noise, so its
    figures are not covered by any guarantee.

    Parameters
    ----------
    model : str
        The model's name, one of dpsosp.models().
    X : array-like of shape (n, p), pandas.DataFrame or scipy.sparse matrix
        The records.
    y : array-like of shape (n,), optional
        The labels (None for pca and other models without).
    x : array-like of shape (d,) or dict
        The point, or a run's report: then its x on the records as the run saw them (its scaling applied), with
        its shape (classes, hidden, rank, fit_intercept), as `dpsosp certify --point` does.
    rho : float, default 1.0
        The Hessian-Lipschitz constant of the SOSP gap.
    classes, hidden, rank : int, optional
        The model's shape, as in dpsosp.run (taken from the report where x is one).
    fit_intercept : bool, default False
        Whether x ends with the margins' biases.

    Returns
    -------
    dict
        grad_norm, lambda_min (the smallest Hessian eigenvalue), lambda_converged, lambda_residual and sosp_gap
        (max(grad_norm, max(0, -lambda_min)^2 / rho): 0 at a second-order stationary point).

    Raises
    ------
    ValueError
        An unknown model, records of the wrong shape, or a model option the model does not read.
    TypeError
        No point x, or a model that is not a name.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> c = dpsosp.certify("logistic", np.eye(2), [0, 1], np.zeros(3), fit_intercept=True)
    >>> sorted(c)
    ['grad_norm', 'lambda_converged', 'lambda_min', 'lambda_residual', 'sosp_gap']
    >>> round(c["grad_norm"], 4)
    0.3536
    """
    _check_model(model)
    if isinstance(x, dict):
        from ._model import Model  # the model file's reader (_model.py imports this module)
        point = Model.from_result(x)
        shape = x["shape"]
        classes = shape.get("classes") if model in ("softmax", "mlp") else classes
        hidden = shape.get("hidden") if model == "mlp" else hidden
        rank = shape.get("rank") if model == "pca" else rank
        fit_intercept = bool(shape.get("fit_intercept", fit_intercept))
        X = point._unit(X)
        t = (point.scaling or {}).get("target")
        if t and y is not None:
            lo, hi = t["lower"], t["upper"]
            y = (np.clip(np.asarray(y, dtype=np.float64), lo, hi) - 0.5 * (lo + hi)) / (0.5 * (hi - lo))
        x = point.x
    records = _records(X)
    if hasattr(records, "toarray"):
        records = np.ascontiguousarray(records.toarray())
    classes, hidden, rank = _model_options(model, classes, hidden, rank)
    if x is None:
        raise TypeError("certify() missing the point x")
    return _core.certify(model, records, _labels(y, records.shape[0]), np.asarray(x, dtype=np.float64),
                         _real("rho", rho), classes, hidden, rank, bool(fit_intercept))
