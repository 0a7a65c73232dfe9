"""Per-record weights for the estimators' fit: sample_weight times the public class_weight of each record's class,
each in [0, 1]. The library multiplies each record's clipped gradient by its weight, so the sensitivity, and with
it the guarantee, are unchanged (docs/privacy.md, "Sample weights")."""
import os

import numpy as np

_BALANCED = ("class_weight='balanced' would read the class frequencies from the private records, which the "
             "guarantee does not cover; declare the weights instead: class_weight={label: weight in [0, 1]}")

_ABOVE_ONE = ("weights above 1 are refused: each weight is in [0, 1], so no record moves a release by more than "
              "the bound")
# scikit-learn's checks that weigh records or classes above 1, ask for 'balanced', or compare a fit with zero-weight
# records added to one without them (those records keep their places in the batches, whose sizes follow n, public).
XFAIL_WEIGHTS = {"check_sample_weights_list": _ABOVE_ONE, "check_sample_weights_not_overwritten": _ABOVE_ONE,
                 "check_class_weight_classifiers": _ABOVE_ONE,
                 "check_sample_weights_invariance": "records of weight 0 still take places in the batches, whose sizes "
                                                    "follow n (public): adding them changes the run",
                 "check_class_weight_balanced_classifiers": _BALANCED,
                 "check_class_weight_balanced_linear_classifier": _BALANCED}


def _check_range(what, w):
    bad = np.flatnonzero(~((w >= 0.0) & (w <= 1.0)))  # NaN fails too
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{what}: the weight of record {i} (0-based) is {float(w[i])!r}, expected a number in "
                         "[0, 1] (a weight above 1 would let one record move a release by more than the clip bound)")


def _class_factors(class_weight, classes):
    """One factor per declared class (1 for a class class_weight leaves out)."""
    if isinstance(class_weight, str) and class_weight == "balanced":
        raise ValueError(_BALANCED)
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight: expected a dict {{label: weight in [0, 1]}} of the declared classes, got "
                         f"{class_weight!r}")
    names = list(np.asarray(classes).tolist())
    factors = np.ones(len(names))
    for label, weight in class_weight.items():
        where = [k for k, c in enumerate(names) if c == label]
        if not where:
            raise ValueError(f"class_weight: {label!r} is not one of the declared classes {names}")
        v = float(weight)
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"class_weight: the weight of class {label!r} is {v!r}, expected a number in [0, 1]")
        factors[where[0]] = v
    return factors


def record_weights(who, X, sample_weight=None, class_weight=None, labels=None, classes=None):
    """The run's sample_weight (None: unweighted). labels: the records' class indices into classes."""
    if sample_weight is None and class_weight is None:
        return None
    if isinstance(X, (str, os.PathLike)):
        raise ValueError(f"{who}: sample_weight and class_weight apply to an array X; a record file holds no weights")
    n = X.shape[0]
    w = None
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"sample_weight: expected one weight per record ({n}), got shape {w.shape}")
        _check_range("sample_weight", w)
    if class_weight is not None:
        per_record = _class_factors(class_weight, classes)[np.asarray(labels).astype(np.intp)]
        w = per_record if w is None else w * per_record
    return w
