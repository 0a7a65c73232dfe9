"""The public label set (SPEC section 9): a classifier's labels are declared, never read from the records, and a
label outside them is refused in words that name no record. The words are defined here once: dpsosp.run, the
estimators (dpsosp.sklearn) and DPSearchCV say the same."""
import numpy as np

from ._table import _codes, _isna, _names, _show

# A label that is not a number where no class names are declared (a record's value is never quoted): the words of
# the CLI's CSV loader, with the keyword for --classes.
TEXT_LABELS = ("y: a label is not a number; named classes must be declared (classes=[...]), every label then one of "
               "them; which record is not said, as a refusal must not depend on it")

# DPClassifier's classes=None: a binary model's public labels, 0 and 1 (the CLI's logistic reads them too, with -1
# as 0); softmax and mlp are sized by a declared class count.
BINARY_MODELS = ("auto", "logistic", "sigmoid")
_DEFAULT_CLASSES = np.array([0, 1])


def outside_classes(names):
    """The refusal of a label that is none of the declared class names (in their declared order)."""
    return (f"y: a label is not one of the {len(names)} declared classes ({_show(names, ',')}); every label must be "
            "one of them; which record is not said, as a refusal must not depend on it")


def label_numbers(y):
    """Labels without declared class names, as float64: TEXT_LABELS where one is not a number."""
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(TEXT_LABELS) from None


def label_indices(values, names):
    """Each label's index in the declared class names (compared with ==); a missing label is refused naming its row
    (as a missing value is: labels are never imputed), one outside the names in words that name no record."""
    missing = _isna(values)
    if missing.any():
        raise ValueError(f"y: row {int(np.argmax(missing))} (0-based): missing label; labels are never imputed")
    codes = _codes(values, names)
    if (codes < 0).any():
        raise ValueError(outside_classes(names))
    return codes


def declared_classes(estimator):
    """The public label set of a DPClassifier: its classes (each named once), sorted, or the binary default [0, 1]
    where classes is None and the model is binary (auto, logistic, sigmoid); None where none is declared."""
    if estimator.classes is None:
        return _DEFAULT_CLASSES if estimator.model in BINARY_MODELS else None
    if isinstance(estimator.classes, str):
        return None
    return np.unique(np.asarray(_names("classes", estimator.classes)))


def refuse_labels_outside(who, estimator, y):
    """One line, the same for any record, where a label of y is not one of the declared classes (SPEC section 9):
    dpsosp.run's words for declared names, and for the binary default where a label is not a number."""
    classes = declared_classes(estimator)
    if classes is None:
        return
    values = np.asarray(y.to_numpy(dtype=object) if hasattr(y, "to_numpy") else y, dtype=object)
    values = values.ravel() if values.ndim == 2 and values.shape[1] == 1 else values
    if estimator.classes is not None:
        label_indices(values, list(estimator.classes))
        return
    if np.isin(values, classes.astype(object)).all():
        return
    label_numbers(values)
    raise ValueError(f"{who}: a label of y is not 0 or 1, the default classes of a binary model (public); "
                     "declare the label set: classes=[...] (classes='observed' takes it from y, outside the "
                     "guarantee); which record is not said, as a refusal must not depend on it")
