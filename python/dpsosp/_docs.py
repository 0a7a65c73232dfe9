"""The library's tools (dpsosp._core) with numpydoc docstrings: Python functions of the same signatures that call
them, since a compiled function's docstring cannot be set from Python. The accounting functions are in
_docs_accounting.py."""
from . import _core

__all__ = ["generate_noise_key", "algorithms", "algorithm_table", "models", "synthetic", "certify_population",
           "write_records"]


def generate_noise_key():
    """Return 16 fresh random bytes from the OS, a secret key for the privacy noise.

    Pass them as run(noise_key=...) (or an estimator's noise_key) to make a private run reproducible; keep them
    as secret as the data: whoever holds the key can remove the noise.

    Returns
    -------
    bytes
        16 bytes from the operating system's random source.

    Examples
    --------
    >>> import dpsosp
    >>> key = dpsosp.generate_noise_key()
    >>> type(key), len(key)
    (<class 'bytes'>, 16)
    """
    return _core.generate_noise_key()


def algorithms():
    """Return the names accepted by run(algo=...).

    Returns
    -------
    list of str
        The algorithms of the library's registry, the default (spider-mf-adaptive) first.

    Examples
    --------
    >>> import dpsosp
    >>> dpsosp.algorithms()[0]
    'spider-mf-adaptive'
    >>> "dpsgd" in dpsosp.algorithms()
    True
    """
    return _core.algorithms()


def algorithm_table():
    """Return the algorithm table: one dict per algorithm.

    Returns
    -------
    list of dict
        For each algorithm: name, description, private (bool), mechanism (the noise's form), options (the
        options it reads besides the common ones) and overrides (the computed parameters overrides= may set).

    Examples
    --------
    >>> import dpsosp
    >>> row = dpsosp.algorithm_table()[0]
    >>> row["name"], row["private"], row["mechanism"]
    ('spider-mf-adaptive', True, 'matrix-factorization')
    >>> "epochs" in row["options"]
    True
    """
    return _core.algorithm_table()


def models():
    """Return the names accepted by run(model=...).

    Returns
    -------
    list of str
        The models of the library's model table (docs/models.md).

    Examples
    --------
    >>> import dpsosp
    >>> dpsosp.models()
    ['logistic', 'sigmoid', 'cauchy', 'phase-retrieval', 'linear', 'softmax', 'mlp', 'pca']
    """
    return _core.models()


def synthetic(spec):
    """Generate a synthetic problem with a known population.

    Parameters
    ----------
    spec : str
        'NAME:key=value,...', NAME one of phase-retrieval, pca and gaussian-mixture, e.g.
        'phase-retrieval:n=...,d=...,seed=...'.

    Returns
    -------
    dict
        name, model (the model to run on it), X, y (None where the model reads none), x_star (the population's
        solution), saddle (a strict saddle to start from) and params (the spec's values, defaults filled in).

    Raises
    ------
    ValueError
        An unknown problem or key, or a bad value.

    Examples
    --------
    >>> import dpsosp
    >>> p = dpsosp.synthetic("phase-retrieval:n=100,d=3,seed=1")
    >>> p["model"], p["X"].shape, p["y"].shape
    ('phase-retrieval', (100, 3), (100,))
    """
    return _core.synthetic(spec)


def certify_population(spec, x, rho=1.0):
    """Return the certificate of x for the known population of a synthetic problem.

    Parameters
    ----------
    spec : str
        The synthetic problem, as for synthetic (its n is ignored: the population is exact).
    x : array-like of shape (d,)
        The point.
    rho : float, default 1.0
        The Hessian-Lipschitz constant of the SOSP gap.

    Returns
    -------
    dict
        grad_norm, lambda_min, lambda_converged, lambda_residual and sosp_gap, of the population objective, as
        dpsosp.certify gives them for records.

    Raises
    ------
    ValueError
        An unknown problem, or x of the wrong length.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> c = dpsosp.certify_population("phase-retrieval:n=10,d=3,seed=1", np.zeros(3), rho=6)
    >>> c["grad_norm"], c["lambda_min"], c["sosp_gap"]     # the origin: a strict saddle
    (0.0, -3.0, 1.5)
    """
    return _core.certify_population(spec, x, rho)


def write_records(path, X, y=None, shuffle_seed=None, values="float64"):
    """Write the records X (and labels y) to a record file.

    run(model, data=path, stream=True) reads the file front to back, and `dpsosp convert` writes the same format
    (docs/data-formats.md): records too large for memory are streamed from it.

    Parameters
    ----------
    path : str
        The file to write.
    X : array-like of shape (n, p)
        The records, as float64.
    y : array-like of shape (n,), optional
        The labels.
    shuffle_seed : int, optional
        Write the records in that public seed's sample order (default: as given).
    values : {'float64', 'float32'}, default 'float64'
        How the values are stored: float32 halves the file, its values rounded to float32.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Labels of the wrong length, or a file that cannot be written.

    Examples
    --------
    >>> import os, tempfile, numpy as np, dpsosp
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> path = os.path.join(tempfile.mkdtemp(), "records.bin")
    >>> dpsosp.write_records(path, X, (X[:, 0] > 0).astype(float))
    >>> r = dpsosp.run("logistic", data=path, stream=True, G=1, M=1, seed=1)
    >>> r["n"]
    2000
    """
    return _core.write_records(path, X, y, shuffle_seed, values)
