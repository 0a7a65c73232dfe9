"""dpsosp.privacy: the figures of `dpsosp privacy`, from the library's privacy forms."""
import numbers

import numpy as np

from . import _core


def privacy(noise_multiplier, steps, delta, **options):
    """The privacy figures of a schedule and noise multiplier: what `dpsosp privacy` prints, from the
    same library function (include/dpsosp/privacy_figures.hpp), as a dict.

    steps: the tree form's phase lengths (a list, or one count), or the step count T of the mf and
    Poisson forms. options: sampling_rate (selects the Poisson form), mechanism ("tree", the default,
    or "mf"), period (mf), accountant ("pld", "rdp" or "gdp": its figure also as "epsilon"),
    adjacency ("replace-one", "zero-out" or "add-remove"), prior_mu (Poisson, PLD), epsilon (also
    delta at this epsilon), discretization (PLD, default 1e-4), target_epsilon (with
    noise_multiplier=None: the multiplier for that target, as "noise_multiplier", and the figures
    at it). Errors: ValueError, one line.

        dpsosp.privacy(1.0, 1000, 1e-5, sampling_rate=0.01)["epsilon_pld"]
        dpsosp.privacy(None, 1000, 1e-5, sampling_rate=0.01, target_epsilon=3)["noise_multiplier"]
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
    """The noise multiplier for a target (epsilon, delta): privacy(None, steps, delta, target_epsilon=epsilon,
    **options)["noise_multiplier"], as Opacus's get_noise_multiplier, for each form (the tree's phase lengths,
    mechanism="mf", or the Poisson form with sampling_rate) and accountant (accountant="pld", "rdp" or "gdp";
    by default the form's own). The figures at that multiplier never exceed epsilon and are within 1e-3 of it.

        dpsosp.calibrate(1000, 3, 1e-5, sampling_rate=0.01)             # Poisson steps, by PLD
        dpsosp.calibrate([1, 2, 4], 1, 1e-6)                            # the tree form's phases, by GDP
    """
    if "target_epsilon" in options or "noise_multiplier" in options:
        raise TypeError("calibrate: takes epsilon, not target_epsilon or noise_multiplier")
    return privacy(None, steps, delta, target_epsilon=epsilon, **options)["noise_multiplier"]
