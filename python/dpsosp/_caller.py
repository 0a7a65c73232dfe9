"""dpsosp.run_gradients: a private run of a model of the caller's (include/dpsosp/caller_model.hpp): the caller
computes per-example gradients, the library clips them, adds its noise and accounts (docs/torch.md)."""
import warnings

import numpy as np

from . import _core, _options
from ._api import RunWarning, _count
from ._budget import charged_core

__all__ = ["run_gradients"]

_OWN = dict(x0=None, noise_key=None, callback=None, losses=None, hvp=None, name="caller", budget=None)


def run_gradients(gradients, n, dim, **options):
    """Run privately a model whose per-example gradients come from the caller; return the report.

    The library clips every row the callable returns by its rule before it adds it to a release, forms the O2
    differences, adds its noise with the secret key, calibrates and accounts (docs/torch.md): whatever the
    callable returns, the guarantee holds, provided no row depends on another record (batch normalization
    mixes them).

    Parameters
    ----------
    gradients : callable
        gradients(x, ids) -> array of shape (len(ids), dim): the gradient at x (dim float64 values) of the loss of
        each record named in ids (int64, each in 0 .. n - 1), computed from that record alone.
    n : int
        The records' count (public).
    dim : int
        The parameter count.
    **options
        dpsosp.run's options (the library's table: algo, epsilon, delta, G, M, epochs, seed, ...), and x0,
        noise_key, callback and budget as there; losses(x, ids) -> array and hvp(x, id, v) -> array (optional:
        the model's per-record losses and Hessian-vector products for a caller of Model::loss and Model::hvp, such
        as a certificate; no run calls them: its steps, saddle escape and G/M estimate read gradients only; hvp
        defaults to central differences of gradients); name (the model's name in the report). The private scale does not apply: scale inputs from public knowledge.

    Returns
    -------
    dict
        The report (docs/report.md), x the released point.

    Raises
    ------
    TypeError
        An unknown keyword, or gradients (losses, hvp, callback) not callable.
    ValueError
        An option's rule broken, or a callable's result of the wrong shape, in one line.

    Examples
    --------
    >>> import numpy as np, dpsosp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)); y = X @ [1.0, -1.0, 0.5]
    >>> def gradients(x, ids):           # least squares, one row per record
    ...     return X[ids] * (X[ids] @ x - y[ids])[:, None]
    >>> r = dpsosp.run_gradients(gradients, 5000, 3, epsilon=2, delta=1e-6, G=1, M=1, noise_key=bytes(16), seed=1)
    >>> r["algo"], round(r["epsilon"], 3)
    ('spider-mf-adaptive', 2.0)
    """
    unknown = [k for k in options if k not in _options.SHARED and k not in _OWN]
    if unknown:
        raise TypeError(f"run_gradients() got an unexpected keyword argument '{unknown[0]}'")
    if not callable(gradients):
        raise TypeError(f"gradients: expected a callable gradients(x, ids), got {gradients!r}")
    own = {**_OWN, **{k: v for k, v in options.items() if k in _OWN}}
    for key in ("losses", "hvp", "callback"):
        if own[key] is not None and not callable(own[key]):
            raise TypeError(f"{key}: expected a callable, got {own[key]!r}")
    n = _count("n", n, 1, 2 ** 53)
    dim = _count("dim", dim, 1, 2 ** 31 - 1)
    budget = charged_core(own["budget"])

    def rows(x, ids):
        out = np.asarray(gradients(x, ids), dtype=np.float64)
        if out.shape != (len(ids), dim):
            raise ValueError(f"gradients: returned shape {out.shape} for {len(ids)} records of {dim} parameters")
        return np.ascontiguousarray(out)

    text, overrides = _options.given_options({k: v for k, v in options.items() if k in _options.SHARED})
    x0 = None if own["x0"] is None else np.asarray(own["x0"], dtype=np.float64).ravel()
    if x0 is not None and x0.size != dim:
        raise ValueError(f"x0: has {x0.size} entries for {dim} parameters")
    result = _core.run_caller(rows, n, dim, text, overrides, x0, own["noise_key"], own["callback"], own["losses"],
                              own["hvp"], str(own["name"]), budget)
    for message in result["warnings"]:
        warnings.warn(message, RunWarning, stacklevel=2)
    return result
