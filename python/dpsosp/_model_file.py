"""The model file (docs/report.md): dpsosp.save writes a released point with its shape and privacy record,
dpsosp.load reads it back as a Model."""
import json

from ._model import Model

__all__ = ["save", "load"]


def save(path, model):
    """Write a model file (JSON: model, shape, x, the privacy record).

    `dpsosp predict --point PATH` and dpsosp.load read it. It holds only what the guarantee covers.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    model : Model, dict or fitted estimator
        A Model, a run's report or a fitted estimator of dpsosp.sklearn.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        A scikit-learn Pipeline (pickle it, or save its last step), or a dict that is not a report.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> dpsosp.save(path, r)
    >>> dpsosp.load(path)
    dpsosp.Model('logistic', d=4, epsilon=1)
    """
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
    """Read a Model from a model file of dpsosp.save or a report of `dpsosp run --out`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    Model
        The released point, its shape and privacy record.

    Raises
    ------
    ValueError
        A file that holds no JSON object, or one that is not a model file or report.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> r = dpsosp.run("logistic", X, (X[:, 0] > 0) * 1.0, G=1, M=1, seed=1)
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> dpsosp.save(path, r)
    >>> dpsosp.load(path).predict([[3.0, 0.0, 0.0]])
    array([1.])
    """
    with open(path) as f:
        j = json.load(f)
    if not isinstance(j, dict):
        raise ValueError(f"load: {path}: expected a JSON object (a model file or a run's report)")
    return Model.from_result(j)
