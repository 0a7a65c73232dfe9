"""dpsosp.audit: the empirical privacy audit of `dpsosp audit` from Python (docs/privacy.md)."""
from . import _core

__all__ = ["audit"]


def audit(algo="spider-tree-adaptive", epsilon=1.0, delta=1e-5, runs=2000, batch=16, steps=0, dim=1, epochs=0.0,
          sampling=None, bands=None, canary="linear", canary_norm=10.0, G=1.0, confidence=0.95, test_level=0.01,
          canaries=0, seed=1, threads=0, tamper="none", noise="float", caller=None):
    """The empirical privacy audit of one algorithm: a lower bound on epsilon from runs on neighbouring datasets.

    Runs on two datasets that differ in one canary record, and a Clopper-Pearson lower bound on epsilon from the
    best threshold test on what the runs release, with the tests of the claim's shape (docs/privacy.md).

    The same audit as ``dpsosp audit`` with the same options (its flags' names with underscores); the result is the
    JSON that command writes, as a dict.

    Parameters
    ----------
    algo : str
        The private algorithm audited (dpsosp.algorithms() lists them).
    epsilon, delta : float
        The target the audited runs are calibrated to: the claim under test.
    runs : int
        Runs on each dataset (at least 4): the first half chooses the test, the second measures it.
    batch, steps, dim : int
        Records per batch, optimizer steps (0: the mode's default) and dimension.
    epochs : float
        dpsgd: Poisson epochs (zero-out neighbours); spider-mf-adaptive: passes as sampling says; 0: one pass.
    sampling : str or None
        spider-mf-adaptive with epochs: "poisson" or "order" (None: the run's default).
    bands : int or None
        spider-mf-adaptive's Poisson passes: the bands (None: automatic).
    canary : str
        "linear", "quadratic-o2" or "extreme" (docs/privacy.md).
    canary_norm : float
        The canary's gradient in units of its clip (>= 1).
    G : float
        The clip norm of the honest runs.
    confidence, test_level : float
        Of the epsilon lower bound, and the false-alarm rate of the mu or trade-off test.
    canaries : int
        Poisson paths: canaries per run (0: 64); 1 elsewhere.
    seed : int
        Base seed: every run gets its own seed and key from it.
    threads : int
        Runs in parallel (0: all cores); never changes the result. A caller's model runs them one at a time.
    tamper : str
        A deliberate bug the audit must catch ("none", "noise-div-10", "clip-off", ...: ``dpsosp audit --help``).
    noise : str
        "float" or "secure" (docs/noise.md).
    caller : callable or None
        None: the audit's own canary model. Else caller(records) -> gradients(x, ids), the model of a caller
        (dpsosp.run_gradients) whose loss of record i is <records[i], x>: the audit then trains that model
        (dpsosp.torch.audit passes a PyTorch module's gradients this way). Linear canary only.

    Returns
    -------
    dict
        The audit's result: claimed_epsilon, epsilon_lower_bound, claimed_mu, empirical_mu, mu_lower_bound,
        violation (the claim proved false) and violation_by, false_alarm, the test and its counts, tradeoff on the
        Poisson paths, failures, n, d, steps, seconds.

    Raises
    ------
    ValueError
        An option out of its range, or a combination that does not apply, in one line.

    Examples
    --------
    >>> import dpsosp
    >>> r = dpsosp.audit(algo="dpsgd", runs=400, seed=3)
    >>> r["violation"], r["epsilon_lower_bound"] <= r["claimed_epsilon"]
    (False, True)
    >>> dpsosp.audit(algo="dpsgd", runs=400, seed=3, tamper="noise-div-10")["violation"]
    True
    """
    return _core.audit(str(algo), float(epsilon), float(delta), int(runs), int(batch), int(steps), int(dim),
                       float(epochs), None if sampling is None else str(sampling),
                       None if bands is None else int(bands), str(canary), float(canary_norm), float(G),
                       float(confidence), float(test_level), int(canaries), int(seed), int(threads), str(tamper),
                       str(noise), caller)
