"""Tables as numbers (docs/data-formats.md): the rules of the CLI's CSV loader for pandas DataFrames and
arrays. Categorical columns one-hot from public categories, missing values refused (naming row and column)
or filled by a declared rule; a value outside the declared categories is refused in words that name no
record."""
import numbers
import os

import numpy as np

__all__ = ["encode_table"]


def _is_frame(X):
    return hasattr(X, "to_numpy") and hasattr(X, "dtypes") and hasattr(X, "columns")


def _numeric_dtype(dtype):
    """Whether a column of this dtype holds numbers (bool included): numpy's, and pandas' nullable ones (Int64,
    Float64, boolean), whose pandas.NA is a missing value. A pandas category or string column does not: its
    categories are declared (categorical=), never read from it."""
    try:
        import pandas
        from pandas.api.types import is_bool_dtype, is_numeric_dtype
    except ImportError:
        return np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)
    if isinstance(dtype, pandas.CategoricalDtype):
        return False
    return bool(is_numeric_dtype(dtype) or is_bool_dtype(dtype))


def _number(value):
    """An object column's value as a number: a number, or the text True / False (any case) as 1 / 0, as the CSV
    loader reads a field (pandas' to_csv writes a bool column so)."""
    word = value.strip().lower() if isinstance(value, str) else None
    return 1.0 if word == "true" else 0.0 if word == "false" else float(value)


def _isna(values):
    """Missing entries of a 1-d array: NaN, None, pandas.NA / NaT."""
    try:
        import pandas
        return np.asarray(pandas.isna(values), dtype=bool)
    except ImportError:
        return np.array([v is None or (isinstance(v, float) and v != v) for v in values], dtype=bool)


def _show(values, sep):
    items = [str(v) for v in values]
    return sep.join(items) if len(items) <= 10 else sep.join(items[:8]) + f"{sep}... ({len(items)} in all)"


def _names(what, values, low=1):
    """A public list (class names, categories): at least `low` entries, each once."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}: expected a list, got {values!r}")
    values = list(values)
    if len(values) < low:
        raise ValueError(f"{what}: expected {low} names or more, got {len(values)}")
    for i, v in enumerate(values):
        if any(v == w for w in values[:i]):
            raise ValueError(f"{what}: {v!r} is named twice")
    return values


def _codes(values, names):
    """Each entry's index in names (compared with ==), -1 where it is none of them."""
    codes = np.full(len(values), -1, dtype=np.int64)
    for k, name in enumerate(names):
        codes[(codes < 0) & np.asarray(values == name, dtype=bool)] = k
    return codes


def table_rule(categorical, impute, columns=None, name="X"):
    """categorical and impute checked whole, before any record is read, whatever the records hold: each column
    one of the table's columns (where given), its categories a list that names each once; impute 'zero' or
    {column: fill}, a categorical column's fill one of its categories, another's a finite number. Returns
    (categorical, zero, fills), as encode_table reads them."""
    if categorical is None:
        categorical = {}
    if not hasattr(categorical, "items"):
        raise TypeError(f"categorical: expected a dict {{column: [categories]}}, got {categorical!r}")
    for what, table in (("categorical", categorical), ("impute", impute if isinstance(impute, dict) else {})):
        for key in table if columns is not None else ():
            if key not in columns:
                raise ValueError(f"{what}: {name} has no column {key!r} (its columns: {_show(columns, ', ')})")
    categorical = {key: _names(f"categorical[{key!r}]", values) for key, values in categorical.items()}
    if impute is None or isinstance(impute, str):
        if impute not in (None, "zero"):
            raise ValueError(f"impute: expected 'zero' or a dict {{column: value}}, got {impute!r}")
        return categorical, impute == "zero", {}
    if not isinstance(impute, dict):
        raise TypeError(f"impute: expected 'zero' or a dict {{column: value}}, got {impute!r}")
    for key, fill in impute.items():
        if key in categorical:
            if _codes(np.array([fill], dtype=object), categorical[key])[0] < 0:
                raise ValueError(f"impute[{key!r}]: {fill!r} is not one of the column's categories "
                                 f"({_show(categorical[key], '|')})")
        elif isinstance(fill, bool) or not isinstance(fill, numbers.Real) or not np.isfinite(fill):
            raise ValueError(f"impute[{key!r}]: expected a finite number for a numeric column, got {fill!r}")
    return categorical, False, dict(impute)


def kept_rule(categorical, impute):
    """A declared rule as a model keeps it (and its file, JSON): the columns named as text."""
    categorical, zero, fills = table_rule(categorical, impute)
    return ({str(k): v for k, v in categorical.items()} or None,
            "zero" if zero else ({str(k): v for k, v in fills.items()} or None))


def rule_for(table, X):
    """A kept rule's columns (text) as X's: a DataFrame's by name, an array's by 0-based index."""
    if not isinstance(table, dict):
        return table
    if _is_frame(X):
        by_text = {str(c): c for c in X.columns}
        return {by_text.get(k, k): v for k, v in table.items()}
    return {int(k) if str(k).isdigit() else k: v for k, v in table.items()}


def encode_table(X, *, categorical=None, impute=None, name="X"):
    """Return the records X (a pandas DataFrame, or a 2-d array) as float64 features.

    By the rules of the CLI's CSV loader (docs/data-formats.md): each column of `categorical` one-hot encoded, one
    feature per category in the order given, a value not among them refused in words that name no record; other
    columns numeric. A missing value (NaN, None, pandas.NA) is refused, naming its row (0-based) and column,
    unless `impute` declares how to fill it. Array columns are named by their 0-based index.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        The table.
    categorical : dict, optional
        {column: [public categories]}: the columns to one-hot encode.
    impute : str or dict, optional
        "zero" (a numeric column 0, a categorical one no category) or {column: value} (a number, or one of the
        column's categories).
    name : str, default 'X'
        The table's name in error messages.

    Returns
    -------
    ndarray of shape (n, features)
        float64, C-ordered: the numeric columns as they are, each categorical one as its categories' indicators.

    Raises
    ------
    ValueError
        A missing value without a rule, a value outside its column's categories, a column that is not numeric
        and not declared categorical, an unknown column, or a bad fill.
    TypeError
        impute neither 'zero' nor a dict, or categories that are not a list.

    Examples
    --------
    >>> import pandas as pd, dpsosp
    >>> df = pd.DataFrame({"age": [30, None, 50], "city": ["Oslo", "Rome", "Oslo"]})
    >>> dpsosp.encode_table(df, categorical={"city": ["Oslo", "Rome"]}, impute={"age": 40})
    array([[30.,  1.,  0.],
           [40.,  0.,  1.],
           [50.,  1.,  0.]])
    """
    return _encode(X, categorical, impute, name)[0]


def _encode(X, categorical, impute, name="X"):
    """encode_table's array and, per feature, whether it is a one-hot feature of a categorical column (its box
    [0, 1] is public: the private scale estimates the others alone, RunRequest::scaling)."""
    if _is_frame(X):
        keys = list(X.columns)
        column = lambda j: X.iloc[:, j]  # noqa: E731
    else:
        a = np.asarray(X, dtype=object if categorical else None)
        if a.ndim != 2:
            raise ValueError(f"{name}: expected a 2-d array (n records x p features), got {a.ndim}-d")
        keys = list(range(a.shape[1]))
        column = lambda j: a[:, j]  # noqa: E731
    categorical, zero, fills = table_rule(categorical, impute, keys, name)
    n = len(X)
    parts, one_hot = [], []
    for j, key in enumerate(keys):
        values = column(j)
        series = values if hasattr(values, "to_numpy") else None
        numeric = key not in categorical and _numeric_dtype(values.dtype)
        if numeric:  # a number column: NaN (pandas.NA) is its missing value
            numbers_ = (series.to_numpy(dtype=np.float64, na_value=np.nan) if series is not None
                        else np.asarray(values, dtype=np.float64))
            missing = np.isnan(numbers_)
        else:
            values = series.to_numpy(dtype=object) if series is not None else np.asarray(values, dtype=object)
            missing = _isna(values)
        fill = fills.get(key, "zero" if zero else None)
        if missing.any() and fill is None:
            row = int(np.argmax(missing))
            raise ValueError(f"{name}: row {row} (0-based), column {key!r}: missing value; fill it in, or declare a "
                             f"rule: impute='zero' or impute={{{key!r}: VALUE}}")
        if key in categorical:
            cats = categorical[key]
            codes = _codes(values, cats)
            if ((codes < 0) & ~missing).any():
                raise ValueError(f"{name}: a value in column {key!r} is not one of its {len(cats)} declared "
                                 f"categories ({_show(cats, '|')}); every value must be one of them")
            if missing.any() and key in fills:
                codes[missing] = _codes(np.array([fill], dtype=object), cats)[0]
            parts.append((codes[:, None] == np.arange(len(cats))[None, :]).astype(np.float64))
            one_hot += [True] * len(cats)
            continue
        if not numeric:  # an object column of numbers (None for a missing one) passes
            try:
                numbers_ = np.array([np.nan if m else _number(v) for v, m in zip(values, missing)],
                                    dtype=np.float64)
            except (TypeError, ValueError):
                kind = f" ({series.dtype})" if series is not None else ""
                raise ValueError(f"{name}: column {key!r} is not numeric{kind}; declare its public categories: "
                                 f"categorical={{{key!r}: [...]}}") from None
        if missing.any():
            numbers_[missing] = float(fills.get(key, 0.0))
        parts.append(numbers_[:, None])
        one_hot.append(False)
    if not parts:
        raise ValueError(f"{name}: no feature columns")
    table = np.ascontiguousarray(np.hstack(parts)) if n else np.zeros((0, sum(p.shape[1] for p in parts)))
    return table, one_hot


def _table_input(model, X, y, classes, label, categorical, impute, models):
    """dpsosp.run's table keywords: the label column split off X, the class names (None for a count), X encoded as
    numbers by encode_table's rules when it is a table; returns (X, y, class_names, one_hot), one_hot the encoded
    features' one-hot flags (empty where X was not encoded)."""
    class_names, one_hot = None, []
    if classes is not None and not isinstance(classes, (numbers.Number, str)) and hasattr(classes, "__iter__"):
        class_names = _names("classes", classes, 2)
        if model in ("logistic", "sigmoid") and len(class_names) != 2:
            raise ValueError(f"classes: {model} takes 2 classes (the first is label 0, the second 1), got "
                             f"{len(class_names)} names")
        if model not in ("logistic", "sigmoid", "softmax", "mlp") and model in models:
            raise ValueError(f"classes: class names apply to the logistic, sigmoid, softmax and mlp models, not {model}")
    if label is not None:
        if X is None:
            raise ValueError("label: names a column of X")
        if y is not None:
            raise ValueError("label: the labels are a column of X; give label or y, not both")
        if _is_frame(X):
            if label not in list(X.columns):
                raise ValueError(f"label: X has no column {label!r} (its columns: {_show(list(X.columns), ', ')})")
            y, X = X[label], X.drop(columns=[label])
        else:
            a = np.asarray(X, dtype=object if class_names is not None or categorical else None)
            if a.ndim != 2 or isinstance(label, bool) or not isinstance(label, numbers.Integral) or \
                    not 0 <= label < a.shape[1]:
                raise ValueError(f"label: expected a column index of X (0 to {a.shape[1] - 1 if a.ndim == 2 else 0}), "
                                 f"got {label!r}")
            y, X = a[:, label], np.delete(a, label, axis=1)
    if X is not None and (_is_frame(X) or categorical is not None or impute is not None):
        if not (_is_frame(X) and categorical is None and impute is None and
                all(_numeric_dtype(t) for t in X.dtypes) and
                not X.isna().to_numpy().any()):
            X, one_hot = _encode(X, categorical, impute)
    elif categorical is not None or impute is not None:
        raise ValueError("categorical and impute apply to X (a table); a record file is encoded already")
    return X, y, class_names, one_hot


def _declared_width(records, n_features):
    """The records at the declared feature count n_features (None: not declared). A sparse X is widened to it
    (its shape may come from its largest index), and a record with an index at or above it is refused in words that
    name no record; a dense X's width (the same for every record) must be it. n_features: checked already."""
    if n_features is None:
        return records
    if hasattr(records, "indptr"):
        if records.nnz and int(records.indices.max()) >= n_features:
            raise ValueError(f"X: a record has a feature index at or above n_features={n_features}; which record "
                             "is not said, as a refusal must not depend on it")
        return type(records)((records.data, records.indices, records.indptr), shape=(records.shape[0], n_features))
    if records.shape[1] != n_features:
        raise ValueError(f"n_features={n_features}: X has {records.shape[1]} columns (the width of every record)")
    return records


def load_data_table(core, model, data, y, label, classes, rule, stream):
    """run(data=path): a CSV table read by the CLI's own loader (--label, --classes a,b,c, --categorical,
    --impute: the same records as `dpsosp run --data`; its refusals in the keywords' words), as (X, y, one_hot
    flags, warnings on its layout, where its labels were read from: '' where label= chose the column); None where
    data is a record file (read by the library as it is). Other formats are refused in one line. rule:
    table_rule's (categorical, zero, fills)."""
    path = os.fspath(data)
    kind = core.file_format(path)
    if kind == "records":
        return None
    if kind != "csv":
        raise ValueError(f"data: {path}: " + ("cannot tell its format (a record file says so in its first bytes; a "
                                              "CSV table's name ends in .csv or .csv.gz)" if kind is None else
                                              f"a {kind} file") +
                         "; dpsosp.run reads a CSV table or a record file (dpsosp convert); give other records as X")
    if stream:
        raise ValueError("stream=True reads a record file; a CSV table is loaded whole (dpsosp convert makes a record "
                         "file of it)")
    if y is not None:
        raise ValueError("y: a CSV table holds its labels (label= names their column: the first by default)")
    categorical, zero, fills = rule
    names = None
    if classes is not None and not isinstance(classes, (numbers.Number, str)) and hasattr(classes, "__iter__"):
        names = [str(c) for c in _names("classes", classes, 2)]
    return core.load_table(path, None if label is None else str(label), model != "pca", names or [],
                           [(str(k), [str(c) for c in v]) for k, v in categorical.items()], zero,
                           [(str(k), str(v)) for k, v in fills.items()])

