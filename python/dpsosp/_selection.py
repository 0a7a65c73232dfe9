"""Private selection's accounting (docs/selection.md): the guarantee of running a mu-GDP candidate a random number
K of times and releasing only the best, by Papernot and Steinke's Theorem 2 (ICLR 2022, arXiv 2110.03620), and the
stopping rule K that it is for.

The stopping rule is their truncated negative binomial D_{eta,gamma} on K in {1, 2, ...}:
    P[K = k] = (1 - gamma)^k / (gamma^-eta - 1) * prod_{l=0}^{k-1} (l + eta) / (l + 1)     (eta != 0)
    P[K = k] = (1 - gamma)^k / (k log(1 / gamma))                                           (eta = 0, logarithmic)
    E[K] = eta (1 - gamma) / (gamma (1 - gamma^eta))   (eta != 0);   (1 / gamma - 1) / log(1 / gamma)   (eta = 0)
eta = 1 is the geometric distribution P[K = k] = gamma (1 - gamma)^(k - 1), E[K] = 1 / gamma: Liu and Talwar's random
stopping (STOC 2019, arXiv 1811.07971, Algorithm 2: after each run, stop with probability gamma).

Theorem 2 (Papernot and Steinke): if each run Q is (lambda, eps(lambda))-RDP and (lambda_hat, eps(lambda_hat))-RDP
(lambda > 1, lambda_hat >= 1), its outputs totally ordered, and A runs Q K ~ D_{eta,gamma} times and releases the best,
then A is (lambda, eps')-RDP with
    eps' = eps(lambda) + (1 + eta) (1 - 1/lambda_hat) eps(lambda_hat) + (1 + eta) log(1 / gamma) / lambda_hat
           + log(E[K]) / (lambda - 1).
A mu-GDP candidate is (lambda, lambda mu^2 / 2)-RDP at every order (a post-processing of the Gaussian pair), so the
lambda_hat terms are (1 + eta) ((lambda_hat - 1) mu^2 / 2 + log(1 / gamma) / lambda_hat), least at
lambda_hat = sqrt(2 log(1 / gamma)) / mu (at least 1). RDP to (eps, delta) is SPEC section 3's conversion
(Canonne, Kamath, Steinke, arXiv 2004.00010, Prop. 12): eps = min over the order grid of
eps'(lambda) + log1p(-1/lambda) - log(delta lambda) / (lambda - 1), on dp_accounting's grid
{1.1, 1.2, ..., 10.9} U {11, ..., 63} U {128, 256, 512, 1024}.
"""
import math
import numbers

ORDERS = tuple([round(1.1 + 0.1 * i, 10) for i in range(99)] + list(range(11, 64)) + [128, 256, 512, 1024])


def _check_eta(eta):
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real) or not -1.0 < eta < math.inf:
        raise ValueError(f"eta: expected a number > -1 (the stopping rule's shape; 1: geometric), got {eta!r}")
    return float(eta)


def mean_runs(eta, gamma):
    """E[K] of the truncated negative binomial D_{eta,gamma}."""
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def stopping_gamma(expected_runs, eta=1.0):
    """The gamma in (0, 1) of D_{eta,gamma} whose mean is expected_runs (> 1): E[K] falls from infinity to 1 as gamma
    goes from 0 to 1."""
    eta = _check_eta(eta)
    if isinstance(expected_runs, bool) or not isinstance(expected_runs, numbers.Real) or \
            not 1.0 < expected_runs < 1e9:
        raise ValueError(f"n_iter: expected a number in (1, 1e9), the expected number of candidate runs, got "
                         f"{expected_runs!r}")
    if eta == 1.0:
        return 1.0 / float(expected_runs)
    lo, hi = 1e-300, 1.0 - 1e-15
    for _ in range(200):  # bisection in log(gamma): the mean is decreasing in gamma
        mid = math.sqrt(lo * hi)
        if mean_runs(eta, mid) > expected_runs:
            lo = mid
        else:
            hi = mid
    return hi


def selection_rdp(order, mu, eta, gamma):
    """eps'(order) of Theorem 2 for a mu-GDP candidate, at the best lambda_hat (closed form above)."""
    log_inv_gamma = math.log(1.0 / gamma)
    lam_hat = max(1.0, math.sqrt(2.0 * log_inv_gamma) / mu)
    hat_terms = (1.0 + eta) * ((lam_hat - 1.0) * mu * mu / 2.0 + log_inv_gamma / lam_hat)
    return order * mu * mu / 2.0 + hat_terms + math.log(mean_runs(eta, gamma)) / (order - 1.0)


def selection_epsilon(mu, delta, expected_runs, eta=1.0):
    """Return the epsilon of a private search: K ~ D_{eta,gamma} runs of a mu-GDP candidate, the best released.

    Papernot and Steinke's Theorem 2, converted from RDP on dp_accounting's order grid (the module's docstring
    has the formula).

    Parameters
    ----------
    mu : float
        Each candidate run's Gaussian DP parameter, > 0.
    delta : float
        The search's delta, in (0, 1).
    expected_runs : float
        E[K], the expected number of candidate runs, in (1, 1e9) (DPSearchCV's n_iter).
    eta : float, default 1.0
        The stopping rule's shape, > -1 (1: geometric, Liu and Talwar's random stopping).

    Returns
    -------
    epsilon : float
        The search's (epsilon, delta) guarantee's epsilon.
    order : float
        The order of the RDP-to-DP conversion that gave it.

    Raises
    ------
    ValueError
        expected_runs or eta out of range.

    Examples
    --------
    >>> import dpsosp
    >>> eps, order = dpsosp.selection_epsilon(0.3, 1e-6, 10)
    >>> round(eps, 3), order
    (2.729, 18)
    """
    gamma = stopping_gamma(expected_runs, eta)
    best = (math.inf, None)
    for a in ORDERS:
        eps = selection_rdp(a, mu, eta, gamma) + math.log1p(-1.0 / a) - math.log(delta * a) / (a - 1.0)
        best = min(best, (eps, a))
    return max(best[0], 0.0), best[1]


def selection_mu(epsilon, delta, expected_runs, eta=1.0):
    """Return the largest candidate mu (to a relative 1e-9) whose search meets (epsilon, delta).

    Parameters
    ----------
    epsilon : float
        The search's target epsilon.
    delta : float
        The search's delta, in (0, 1).
    expected_runs : float
        E[K], the expected number of candidate runs, in (1, 1e9).
    eta : float, default 1.0
        The stopping rule's shape, > -1 (1: geometric).

    Returns
    -------
    float
        The candidates' mu: selection_epsilon(mu, delta, expected_runs, eta) is at most epsilon.

    Raises
    ------
    ValueError
        One line, where even a candidate with no privacy loss would not meet the target (the stopping rule's own
        cost), or expected_runs or eta out of range.

    Examples
    --------
    >>> import dpsosp
    >>> mu = dpsosp.selection_mu(1.0, 1e-6, 10)
    >>> round(mu, 4), dpsosp.selection_epsilon(mu, 1e-6, 10)[0] <= 1.0
    (0.1112, True)
    """
    floor = selection_epsilon(1e-9, delta, expected_runs, eta)[0]
    if not epsilon > floor:
        raise ValueError(f"epsilon={epsilon!r}: too small to run any candidate: with n_iter={expected_runs!r} "
                         f"expected runs and delta={delta!r} the stopping rule alone costs {floor:.4g} "
                         f"(Papernot-Steinke Theorem 2); raise epsilon or delta, or lower n_iter")
    lo, hi = 1e-9, 1.0
    while selection_epsilon(hi, delta, expected_runs, eta)[0] <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * lo:
        mid = 0.5 * (lo + hi)
        if selection_epsilon(mid, delta, expected_runs, eta)[0] <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def draw_runs(uniform, eta, gamma):
    """K ~ D_{eta,gamma} by inversion from one uniform in [0, 1): P[K = k + 1] / P[K = k] = (1 - gamma)(k + eta)/(k + 1)
    (eta = 0: (1 - gamma) k / (k + 1)). The uniform must be secret: the guarantee is for K unseen."""
    if eta == 0:
        p = (1.0 - gamma) / math.log(1.0 / gamma)
    else:
        p = (1.0 - gamma) * eta / math.expm1(-eta * math.log(gamma))  # P[K = 1] = (1 - gamma) eta / (gamma^-eta - 1)
    k, cdf = 1, p
    while cdf <= uniform and p > 0.0:
        p *= (1.0 - gamma) * (k + eta) / (k + 1.0)
        k += 1
        cdf += p
    return k
