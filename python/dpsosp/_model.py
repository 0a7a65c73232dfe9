"""dpsosp.Model: a released point as a model (predict, predict_proba, the model file of save and load)."""
import json
import numbers

import numpy as np

from . import _core
from ._api import _PRIVACY_KEYS, MODEL_FILE_FORMAT, _check_model, _records
from ._table import _show

__all__ = ["Model", "predict", "predict_proba", "save", "load"]


class Model:
    """A released point as a model: its name, its shape (features, classes, hidden, rank, fit_intercept), x, and
    the privacy record of the run that released it. Model.from_result(dpsosp.run(...)), dpsosp.load(path).
    class_names (a classifier's labels as the user declared them) and feature_names (a DataFrame's columns) are
    kept where an estimator gave them: predict then answers in those labels."""

    def __init__(self, model, x, *, features, classes=0, hidden=32, rank=1, fit_intercept=False, privacy=None,
                 algo=None, scaling=None, class_names=None, feature_names=None):
        _check_model(model)
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
        if self.feature_names is not None and len(self.feature_names) != self.shape["features"]:
            raise ValueError(f"Model: feature_names holds {len(self.feature_names)} names, the model has "
                             f"{self.shape['features']} features")

    @classmethod
    def from_result(cls, result):
        """From a report of dpsosp.run or `dpsosp run` (a dict) or a model file's dict."""
        for key in ("model", "shape", "x"):
            if key not in result:
                raise ValueError(f"Model.from_result: no {key!r} (expected a report of dpsosp run or a model file)")
        privacy = result.get("privacy") or {k: result[k] for k in _PRIVACY_KEYS if k in result}
        x = [np.nan if v is None else v for v in result["x"]]
        return cls(result["model"], x, privacy=privacy, algo=result.get("algo"), scaling=result.get("scaling"),
                   class_names=result.get("class_names"), feature_names=result.get("feature_names"),
                   **result["shape"])

    def _unit(self, X):
        """The records on the unit scale the point was fitted on (the run's scaling), as the library maps them."""
        columns = getattr(X, "columns", None)
        if self.feature_names is not None and columns is not None and [str(c) for c in columns] != self.feature_names:
            raise ValueError(f"X: its columns ({_show(list(columns), ',')}) are not the model's features "
                             f"({_show(self.feature_names, ',')}), in that order")
        X = _dense(X)
        s = self.scaling
        if not s or (not s.get("lower") and not s.get("normalize")):
            return X
        return _core.scale_records(X, s.get("lower") or [], s.get("upper") or [], bool(s.get("normalize")))

    def predict(self, X):
        """One prediction per record (docs/models.md): a class (its label where class_names are kept, else its
        index), or a fitted value (in the user's units)."""
        p = self._values(X)
        return p if self.class_names is None else self.class_names[p.astype(np.intp)]

    def _values(self, X):
        """A class index or a fitted value (in the user's units) per record."""
        p = _core.predict(self.model, self._unit(X), self.x, *self._shape_args(), proba=False)
        t = (self.scaling or {}).get("target")
        if t:
            p = 0.5 * (t["lower"] + t["upper"]) + 0.5 * (t["upper"] - t["lower"]) * np.clip(p, -1.0, 1.0)
        return p

    def predict_proba(self, X):
        """A classifier's class probabilities, n x classes."""
        return _core.predict(self.model, self._unit(X), self.x, *self._shape_args(), proba=True)

    @property
    def x_user(self):
        """x in the user's units (linear models with an intercept): predictions on raw records inside the box."""
        s = self.scaling
        if not s:
            return self.x
        return None if s.get("x_user") is None else np.asarray(s["x_user"], dtype=np.float64)

    def to_dict(self):
        """The model file (docs/report.md): what `dpsosp predict --point` and dpsosp.load read."""
        d = {"format": MODEL_FILE_FORMAT, "version": 1, "model": self.model, "shape": dict(self.shape),
             "d": int(self.x.size), "x": [float(v) for v in self.x], "algo": self.algo,
             "privacy": _jsonable(self.privacy), "scaling": _jsonable(self.scaling)}
        if self.class_names is not None:
            d["class_names"] = _jsonable(self.class_names)
        if self.feature_names is not None:
            d["feature_names"] = list(self.feature_names)
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
    """Predictions of a run's report (or a Model) on the records X."""
    return (result if isinstance(result, Model) else Model.from_result(result)).predict(X)


def predict_proba(result, X):
    """Class probabilities of a classifier's report (or a Model) on the records X."""
    return (result if isinstance(result, Model) else Model.from_result(result)).predict_proba(X)


def save(path, model):
    """Writes a model file (JSON: model, shape, x, the privacy record) from a Model, a run's report or a fitted
    estimator; `dpsosp predict --point PATH` and dpsosp.load read it. It holds only what the guarantee covers."""
    if hasattr(model, "steps") and hasattr(model, "named_steps"):  # a scikit-learn Pipeline
        raise ValueError("save: a Pipeline's other steps do not fit in a model file; pickle the fitted pipeline "
                         "(pickle.dump(pipeline, f), docs/python.md), or save its last step, "
                         "dpsosp.save(path, pipeline[-1]), for records the steps before it have transformed")
    if hasattr(model, "model_"):  # a fitted estimator of dpsosp.sklearn
        model = model.model_
    if not isinstance(model, Model):
        model = Model.from_result(model)
    with open(path, "w") as f:
        json.dump(model.to_dict(), f, indent=1)
        f.write("\n")


def load(path):
    """A Model from a model file of dpsosp.save or a report of `dpsosp run --out`."""
    with open(path) as f:
        j = json.load(f)
    if not isinstance(j, dict):
        raise ValueError(f"load: {path}: expected a JSON object (a model file or a run's report)")
    return Model.from_result(j)
