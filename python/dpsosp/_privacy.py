"""dpsosp.privacy: the figures of `dpsosp privacy`, from the library's privacy forms."""
import numbers

import numpy as np

from . import _core


def privacy(noise_multiplier, steps, delta, **options):
    """Return the privacy figures of a schedule and noise multiplier, as a dict.

    What `dpsosp privacy` prints, from the same library function (include/dpsosp/privacy_figures.hpp).

    Parameters
    ----------
    noise_multiplier : float or None
        The noise's standard deviation over the sensitivity; None with target_epsilon.
    steps : int or list of int
        The tree form's phase lengths (a list, or one count), or the step count T of the mf and Poisson forms.
    delta : float
        The delta of the figures, in (0, 1).
    **options
        sampling_rate (selects the Poisson form), mechanism ("tree", the default, or "mf"), period (mf),
        accountant ("pld", "rdp" or "gdp": its figure also as "epsilon"), adjacency ("replace-one", "zero-out" or
        "add-remove"), prior_mu (Poisson, PLD), epsilon (also delta at this epsilon), discretization (PLD,
        default 1e-4), target_epsilon (with noise_multiplier=None: the multiplier for that target, as
        "noise_multiplier", and the figures at it).

    Returns
    -------
    dict
        The figures of the form (form, epsilon_gdp, epsilon_rdp, epsilon_pld, mu, rho, depth, ...), as `dpsosp
        privacy --json` gives them.

    Raises
    ------
    ValueError
        A bad value or an option the form does not read, one line.
    TypeError
        A value that is neither a number nor text.

    Examples
    --------
    >>> import dpsosp
    >>> round(dpsosp.privacy(1.0, 1000, 1e-5, sampling_rate=0.01)["epsilon_pld"], 3)
    1.828
    >>> round(dpsosp.privacy(None, 1000, 1e-5, sampling_rate=0.01, target_epsilon=3)["noise_multiplier"], 3)
    0.814
    >>> dpsosp.privacy(5, [1000, 500, 256], 1e-6)["form"]
    'tree'
    """
    values = dict(options, steps=steps, delta=delta)
    if noise_multiplier is not None:
        values["noise_multiplier"] = noise_multiplier
    text = {}
    for key, value in values.items():
        if isinstance(value, bool) or value is None:
            raise TypeError("privacy: %s must be a number or text, got %r" % (key, value))
        if key == "steps" and isinstance(value, (list, tuple, np.ndarray)):
            text[key] = ",".join(str(int(v)) if float(v) == int(v) else repr(v) for v in value)
        elif isinstance(value, numbers.Real):
            text[key] = repr(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))
        elif isinstance(value, str):
            text[key] = value
        else:
            raise TypeError("privacy: %s must be a number or text, got %r" % (key, value))
    return _core.privacy_figures(text)


def calibrate(steps, epsilon, delta, **options):
    """Return the noise multiplier for a target (epsilon, delta), as Opacus's get_noise_multiplier.

    privacy(None, steps, delta, target_epsilon=epsilon, **options)["noise_multiplier"]: the figures at it never
    exceed epsilon and are within 1e-3 of it, by the form's own accountant (pld for the Poisson form, gdp for the
    tree and mf forms) or the one asked for.

    Parameters
    ----------
    steps : int or list of int
        The tree form's phase lengths, or the step count T of the mf and Poisson forms.
    epsilon : float
        The target epsilon.
    delta : float
        The target delta.
    **options
        privacy's options: sampling_rate (the Poisson form), mechanism, period, accountant, adjacency, prior_mu,
        discretization.

    Returns
    -------
    float
        The noise multiplier (the noise's standard deviation over the sensitivity).

    Raises
    ------
    TypeError
        target_epsilon or noise_multiplier given (epsilon is the target).
    ValueError
        A bad or inapplicable option, in one line.

    Examples
    --------
    >>> import dpsosp
    >>> z = dpsosp.calibrate(1000, 3, 1e-5, sampling_rate=0.01)
    >>> round(z, 3), dpsosp.privacy(z, 1000, 1e-5, sampling_rate=0.01)["epsilon_pld"] <= 3
    (0.814, True)
    """
    if "target_epsilon" in options or "noise_multiplier" in options:
        raise TypeError("calibrate: takes epsilon, not target_epsilon or noise_multiplier")
    return privacy(None, steps, delta, target_epsilon=epsilon, **options)["noise_multiplier"]
