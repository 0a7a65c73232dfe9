"""dpsosp.run_gradients: a private run of a model of the caller's (include/dpsosp/caller_model.hpp): the caller
computes per-example gradients, the library clips them, adds its noise and accounts (docs/torch.md)."""
import warnings

import numpy as np

from . import _core, _options
from ._api import RunWarning, _count

__all__ = ["run_gradients"]

_OWN = dict(x0=None, noise_key=None, callback=None, losses=None, hvp=None, name="caller", budget=None)


def run_gradients(gradients, n, dim, **options):
    """A private run whose per-example gradients come from the caller; returns the report (docs/report.md).

    gradients(x, ids) -> array (len(ids) x dim): the gradient at x (dim float64 values) of the loss of each record
    named in ids (int64, each in 0 .. n - 1), each computed from that record alone: the library clips every row by
    its rule before it adds it to a release, so whatever the callable returns, the guarantee holds, provided no row
    depends on another record (a module with batch normalization mixes them). losses(x, ids) -> array and
    hvp(x, id, v) -> array are optional (the certificate and the G/M estimate; hvp defaults to central differences
    of gradients). The records are the caller's: n is their public count. The options are dpsosp.run's (the
    library's table), x0, noise_key, callback and budget as there; the private scale applies to a table the library
    reads, so it does not apply here (scale your inputs from public knowledge).
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
    budget = own["budget"]
    if budget is not None:
        from ._budget import Budget
        if not isinstance(budget, Budget):
            raise TypeError(f"budget: expected a dpsosp.Budget, got {budget!r}")
        budget = budget._charged_core()

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
