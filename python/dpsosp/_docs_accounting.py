"""The library's accounting functions (dpsosp._core) with numpydoc docstrings: Python functions of the same
signatures that call them (a compiled function's docstring cannot be set from Python), and the docstring of
PrivacyLossDistribution (a class's can). docs/privacy-accounting.md has the methods."""
from . import _core

__all__ = ["pld_gaussian", "pld_poisson_gaussian", "PrivacyLossDistribution", "privacy_tree", "privacy_poisson",
           "privacy_poisson_pld", "privacy_poisson_pld_delta", "calibrate_poisson", "gdp_epsilon"]

PrivacyLossDistribution = _core.PrivacyLossDistribution
PrivacyLossDistribution.__doc__ = """A discretized privacy-loss distribution (PLD) of a mechanism.

Compose mechanisms, then read epsilon(delta) or delta(epsilon) (docs/privacy-accounting.md). Build one with
pld_gaussian or pld_poisson_gaussian; it is not constructed directly.

Attributes
----------
bins : int
    The number of grid points of the discretized loss.
symmetric : bool
    Whether the PLD is that of both orders of the neighbouring pair (as a Gaussian's is).

Methods
-------
compose(other)
    The PLD of this mechanism followed by `other` (same discretization and rounding).
self_compose(times)
    The PLD of `times` runs of this mechanism (one FFT, its power, one inverse FFT).
epsilon(delta)
    The epsilon of the composed mechanism at delta.
delta(epsilon)
    The delta of the composed mechanism at epsilon.

Examples
--------
>>> import dpsosp
>>> step = dpsosp.pld_gaussian(sigma=1.0)
>>> round(step.epsilon(1e-5), 3)
4.377
>>> round(step.self_compose(10).epsilon(1e-5), 2), round(step.compose(step).epsilon(1e-5), 2)
(17.86, 6.57)
>>> round(step.delta(1.0), 4)
0.1269
"""


def pld_gaussian(sigma, sensitivity=1.0, discretization=1e-4, pessimistic=True):
    """Return the PLD of the Gaussian mechanism: noise sigma on a release of L2 sensitivity `sensitivity`.

    Parameters
    ----------
    sigma : float
        The noise's standard deviation, finite and > 0.
    sensitivity : float, default 1.0
        The release's L2 sensitivity.
    discretization : float, default 1e-4
        The loss grid's interval h.
    pessimistic : bool, default True
        True: connect-the-dots rounding, which dominates the exact PLD (a guarantee); False: privacy buckets, a
        lower bound.

    Returns
    -------
    PrivacyLossDistribution
        The mechanism's PLD, to compose with others.

    Raises
    ------
    ValueError
        sigma, sensitivity or discretization not finite and > 0.

    Examples
    --------
    >>> import dpsosp
    >>> round(dpsosp.pld_gaussian(1.0).epsilon(1e-5), 3)          # exactly gdp_epsilon(1, 1e-5), to the grid
    4.377
    """
    return _core.pld_gaussian(sigma, sensitivity, discretization, pessimistic)


def pld_poisson_gaussian(sampling_rate, sigma, record_bound=1.0, adjacency="add-remove", discretization=1e-4,
                         pessimistic=True):
    """Return the PLD of one Poisson-subsampled Gaussian release.

    Each record is sampled with probability sampling_rate and contributes at most record_bound (L2) to a sum
    released with Gaussian noise sigma.

    Parameters
    ----------
    sampling_rate : float
        The probability q in (0, 1] that a record is sampled.
    sigma : float
        The noise's standard deviation, finite and > 0.
    record_bound : float, default 1.0
        A record's largest contribution C (L2).
    adjacency : {'add-remove', 'replace-one', 'zero-out'}, default 'add-remove'
        The neighbouring relation: add/remove has sensitivity C, replace-one 2C.
    discretization : float, default 1e-4
        The loss grid's interval h.
    pessimistic : bool, default True
        True: a guarantee (connect the dots); False: a lower bound (privacy buckets).

    Returns
    -------
    PrivacyLossDistribution
        One step's PLD; self_compose(T) gives T steps.

    Raises
    ------
    ValueError
        A rate outside (0, 1], a sigma, bound or discretization not finite and > 0, an unknown adjacency.

    Examples
    --------
    >>> import dpsosp
    >>> step = dpsosp.pld_poisson_gaussian(0.01, 1.0)
    >>> round(step.self_compose(1000).epsilon(1e-5), 3)          # as privacy_poisson_pld(0.01, 1.0, 1000, 1e-5)
    1.828
    """
    return _core.pld_poisson_gaussian(sampling_rate, sigma, record_bound, adjacency, discretization, pessimistic)


def privacy_tree(noise_multiplier, steps, delta):
    """Return the privacy of tree-aggregated Gaussian releases with the given phase lengths (replace-one).

    Parameters
    ----------
    noise_multiplier : float
        The noise's standard deviation over the sensitivity.
    steps : list of int
        The phase lengths; each phase is one tree.
    delta : float
        The delta of the (epsilon, delta) figures, in (0, 1).

    Returns
    -------
    dict
        The exact GDP, RDP and PLD figures: epsilon_gdp, epsilon_rdp, epsilon_pld, mu, rho (zCDP) and depth (the
        tallest tree's).

    Raises
    ------
    ValueError
        A noise multiplier not > 0, an empty or non-positive phase, a delta outside (0, 1).

    Examples
    --------
    >>> import dpsosp
    >>> f = dpsosp.privacy_tree(1.0, [100, 50], 1e-6)
    >>> round(f["mu"], 4), f["depth"], round(f["epsilon_gdp"], 2)
    (2.6458, 7, 15.51)
    """
    return _core.privacy_tree(noise_multiplier, steps, delta)


def privacy_poisson(sampling_rate, noise_multiplier, steps, delta):
    """Return the epsilon of Poisson-subsampled DP-SGD by RDP (add/remove-one).

    Parameters
    ----------
    sampling_rate : float
        The probability q in (0, 1] that a record is in a step's batch.
    noise_multiplier : float
        sigma / C, the noise over the clip.
    steps : int
        The number of steps T.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The epsilon at delta (RDP, converted on dp_accounting's order grid).

    Raises
    ------
    ValueError
        A value outside its range.

    Examples
    --------
    >>> import dpsosp
    >>> round(dpsosp.privacy_poisson(0.01, 1.0, 1000, 1e-5), 3)
    2.101
    """
    return _core.privacy_poisson(sampling_rate, noise_multiplier, steps, delta)


def privacy_poisson_pld(sampling_rate, noise_multiplier, steps, delta, adjacency="add-remove", discretization=1e-4,
                        pessimistic=True):
    """Return the epsilon of Poisson-subsampled DP-SGD by PLD.

    Parameters
    ----------
    sampling_rate : float
        The probability q in (0, 1] that a record is in a step's batch.
    noise_multiplier : float
        sigma / sensitivity: sigma / C for add-remove, sigma / 2C for replace-one.
    steps : int
        The number of steps T.
    delta : float
        In (0, 1).
    adjacency : {'add-remove', 'replace-one', 'zero-out'}, default 'add-remove'
        The neighbouring relation.
    discretization : float, default 1e-4
        The loss grid's interval h.
    pessimistic : bool, default True
        True: a guarantee; False: a lower bound.

    Returns
    -------
    float
        The epsilon at delta.

    Raises
    ------
    ValueError
        A value outside its range, or an unknown adjacency.

    Examples
    --------
    >>> import dpsosp
    >>> round(dpsosp.privacy_poisson_pld(0.01, 1.0, 1000, 1e-5), 3)     # below the RDP figure, 2.101
    1.828
    """
    return _core.privacy_poisson_pld(sampling_rate, noise_multiplier, steps, delta, adjacency, discretization,
                                     pessimistic)


def privacy_poisson_pld_delta(sampling_rate, noise_multiplier, steps, epsilon, adjacency="add-remove",
                              discretization=1e-4):
    """Return the delta of Poisson-subsampled DP-SGD at epsilon by PLD (pessimistic).

    Parameters
    ----------
    sampling_rate : float
        The probability q in (0, 1] that a record is in a step's batch.
    noise_multiplier : float
        sigma / sensitivity, as for privacy_poisson_pld.
    steps : int
        The number of steps T.
    epsilon : float
        The epsilon, >= 0.
    adjacency : {'add-remove', 'replace-one', 'zero-out'}, default 'add-remove'
        The neighbouring relation.
    discretization : float, default 1e-4
        The loss grid's interval h.

    Returns
    -------
    float
        The delta at epsilon.

    Raises
    ------
    ValueError
        A value outside its range, or an unknown adjacency.

    Examples
    --------
    >>> import dpsosp
    >>> "%.3g" % dpsosp.privacy_poisson_pld_delta(0.01, 1.0, 1000, 2.0)
    '2.67e-06'
    """
    return _core.privacy_poisson_pld_delta(sampling_rate, noise_multiplier, steps, epsilon, adjacency,
                                           discretization)


def calibrate_poisson(sampling_rate, steps, epsilon, delta, accountant="pld", adjacency="add-remove"):
    """Return the noise multiplier for which `steps` Poisson-subsampled Gaussian steps are (epsilon, delta)-DP.

    Parameters
    ----------
    sampling_rate : float
        The probability q in (0, 1] that a record is in a step's batch.
    steps : int
        The number of steps T.
    epsilon : float
        The target epsilon, > 0.
    delta : float
        The target delta, in (0, 1).
    accountant : {'pld', 'rdp'}, default 'pld'
        The accountant that states the guarantee.
    adjacency : {'add-remove', 'replace-one', 'zero-out'}, default 'add-remove'
        The neighbouring relation.

    Returns
    -------
    float
        The smallest noise multiplier (to the search's tolerance) that meets the target.

    Raises
    ------
    ValueError
        A value outside its range, an unknown accountant or adjacency.

    Examples
    --------
    >>> import dpsosp
    >>> z = dpsosp.calibrate_poisson(0.01, 1000, 2.0, 1e-5)
    >>> round(z, 2), dpsosp.privacy_poisson_pld(0.01, z, 1000, 1e-5) <= 2.0
    (0.96, True)
    """
    return _core.calibrate_poisson(sampling_rate, steps, epsilon, delta, accountant, adjacency)


def gdp_epsilon(mu, delta):
    """Return the exact (epsilon, delta) of mu-GDP: the epsilon at delta.

    Parameters
    ----------
    mu : float
        The Gaussian DP parameter, > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The smallest epsilon for which a mu-GDP mechanism is (epsilon, delta)-DP.

    Raises
    ------
    ValueError
        mu not > 0, or delta outside (0, 1).

    Examples
    --------
    >>> import dpsosp
    >>> round(dpsosp.gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    return _core.gdp_epsilon(mu, delta)
