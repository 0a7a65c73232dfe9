"""dpsosp: differentially private non-convex optimization that finds second-order
stationary points (SOSP).

    import numpy as np, dpsosp
    p = dpsosp.synthetic("phase-retrieval:n=400000,d=8,seed=1")
    r = dpsosp.run("phase-retrieval", p["X"], p["y"], epsilon=2, delta=1e-6,
                   G=6, M=20, rho=6, B=1, seed=1, x0=p["saddle"])
    print(r["epsilon"], dpsosp.certify_population("phase-retrieval:n=10,d=8,seed=1", r["x"], rho=6))

    from dpsosp import DPClassifier          # scikit-learn estimators (dpsosp.sklearn)
    DPClassifier(epsilon=1, classes=[0, 1]).fit(X, y).score(X, y)   # the label set is public
    from dpsosp import DPSearchCV            # private hyperparameter search, one guarantee (docs/selection.md)
    DPSearchCV(DPClassifier(classes=[0, 1]), {"learning_rate": [0.3, 1, 3]}, epsilon=1).fit(X, y).best_params_

The result's entries are covered by the run's privacy guarantee, except
r["diagnostics"] (clipped counts, timings), computed from the data without
noise; run(..., release_only=True) leaves it out. seed keys only the public
randomness; the privacy noise comes from a secret key, fresh from the OS unless
noise_key (see generate_noise_key) or noise_key_file is given. docs/report.md
describes every key.

Accounting: calibrate(steps, epsilon, delta, ...) gives the noise multiplier for a target;
privacy(noise_multiplier, steps, delta, ...) gives the figures of
`dpsosp privacy` (the tree, matrix-factorization and Poisson forms) as a dict;
privacy_tree and privacy_poisson / privacy_poisson_pld those of one form; pld_gaussian and
pld_poisson_gaussian build privacy-loss distributions that compose.

Budget(epsilon, delta) is a budget shared by runs (budget= in run and the estimators): each run is charged by
its exact privacy curve, and one that would overrun it is refused before it reads a record (docs/budget.md).

audit(algo=..., runs=...) is the empirical privacy audit of `dpsosp audit`; dpsosp.torch.audit runs it through
a PyTorch module's per-example gradients (docs/privacy.md).

Records too large for memory go to a record file (write_records, or `dpsosp
convert`); run(model, data=path, stream=True) reads it once, front to back.

Bad options raise ValueError (a bad value, in the words of the CLI) or
TypeError (an unknown keyword, a value of the wrong type), with one line.
"""
from ._audit import audit
from ._api import PrivacyLeakWarning, RunWarning, certify, encode_table, run
from ._budget import Budget
from ._caller import run_gradients
from ._model import Model, predict, predict_proba
from ._model_file import load, save
from ._privacy import calibrate, privacy
from ._selection import selection_epsilon, selection_mu
from ._docs import algorithm_table, algorithms, certify_population, generate_noise_key, models, synthetic, write_records
from ._docs_accounting import (PrivacyLossDistribution, calibrate_poisson, gdp_epsilon, pld_gaussian,
                               pld_poisson_gaussian, privacy_poisson, privacy_poisson_pld, privacy_poisson_pld_delta,
                               privacy_tree)

__version__ = "0.1.0"
__all__ = ["run", "run_gradients", "audit", "Budget", "privacy", "calibrate", "certify", "certify_population", "synthetic", "privacy_tree", "privacy_poisson",
           "privacy_poisson_pld", "privacy_poisson_pld_delta", "calibrate_poisson", "pld_gaussian",
           "pld_poisson_gaussian", "PrivacyLossDistribution", "gdp_epsilon", "generate_noise_key", "algorithms",
           "algorithm_table", "models", "write_records", "Model", "predict", "predict_proba", "save", "load", "encode_table",
           "RunWarning",
           "PrivacyLeakWarning", "DPClassifier", "DPRegressor", "DPPCA", "DPSearchCV", "selection_epsilon",
           "selection_mu"]

_ESTIMATORS = ("DPClassifier", "DPRegressor", "DPPCA")


def __getattr__(name):
    # The estimators need scikit-learn, imported when they are first used.
    if name == "torch":  # dpsosp.torch imports PyTorch: only when asked for
        import importlib
        return importlib.import_module(".torch", __name__)
    if name in _ESTIMATORS:
        from . import sklearn as estimators
        return getattr(estimators, name)
    if name == "DPSearchCV":
        from .search import DPSearchCV
        return DPSearchCV
    raise AttributeError(f"module 'dpsosp' has no attribute {name!r}")
