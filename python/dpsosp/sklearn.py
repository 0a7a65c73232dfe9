"""scikit-learn estimators over dpsosp.run: DPClassifier, DPRegressor, DPPCA.

    from dpsosp import DPClassifier
    clf = DPClassifier(epsilon=1, classes=[0, 1]).fit(X, y)
    clf.score(X_test, y_test), clf.epsilon_, clf.report_["guarantee"]

Every fit is one private run: its guarantee (epsilon_, delta_, report_) covers
coef_, intercept_ and every prediction, whatever the data. What sizes the
model is public (docs/privacy.md, "Public shape"): DPClassifier's classes
must be given (classes='observed' takes them from y, which the guarantee does
not cover: a PrivacyLeakWarning and a caveat in report_), and a sparse X needs
n_features=D (the matrix is widened to D columns; predict then takes D).
report_["diagnostics"] is not covered either, and says so. The privacy
noise is keyed by a fresh secret key for every fit (noise_key fixes it, for
tests); random_state seeds only the public randomness (the sample order), so
two fits differ unless both are given. fit also takes the path of a record
file (dpsosp.write_records, `dpsosp convert`) in place of X and y: read once,
front to back, in the file's order (stream=True, the default), or loaded whole
(stream=False); its labels must be the class indices (0 .. K-1, or 0/1 and
-1/+1 for two classes) of the public classes=[...].

The defaults are the CLI's (`dpsosp run`), from the library's option table:
spider-mf-adaptive, G and M estimated privately, the default run's passes (3 up
to 100,000 records, then floor(300000 / n)), an intercept, and the records' scale estimated
privately from scale_share of the budget (scale="auto": raw tables work as they
are; bounds=(lo, hi) or one pair per feature, and DPRegressor's y_bounds, are
public bounds that cost no budget). coef_, intercept_ and predict are in the
user's units (docs/own-table.md).
"""
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _estimator_docs
from ._api import PrivacyLeakWarning
from ._estimator import _D, _DPEstimator, _file_input, _is_path, _linear_parts
from ._labels import declared_classes, refuse_labels_outside
from ._warm import partial_fit
from ._weights import record_weights

__all__ = ["DPClassifier", "DPRegressor", "DPPCA"]

# classes='observed': the label set read from y, outside the guarantee.
_OBSERVED = ("DPClassifier: classes='observed' took the classes from y, so the set of labels present in the data "
             "(and with it the model's shape) is not covered by the privacy guarantee; pass classes=[...] (public) "
             "to avoid it")


class DPClassifier(ClassifierMixin, _DPEstimator):
    """Differentially private classifier fitted by one private run (docstring: _estimator_docs.py)."""

    def __init__(self, epsilon=_D["epsilon"], delta=_D["delta"], *, model="auto", algo=_D["algo"],
                 fit_intercept=True, classes=None, class_weight=None, hidden=None, G=_D["G"], M=_D["M"],
                 batch_size=None, epochs=None,
                 learning_rate=None, max_steps=_D["max_steps"], noise=_D["noise"], random_state=None, noise_key=None,
                 threads=_D["threads"], stream=True, bounds=None, scale=_D["scale"], scale_share=_D["scale_share"],
                 normalize=_D["normalize"], n_features=None, categorical=None, impute=None, sampling=None,
                 budget=None, warm_start=False):
        self.budget = budget
        self.warm_start = warm_start
        self.n_features = n_features
        self.categorical = categorical
        self.impute = impute
        self.epsilon = epsilon
        self.delta = delta
        self.model = model
        self.algo = algo
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.class_weight = class_weight
        self.hidden = hidden
        self.G = G
        self.M = M
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.max_steps = max_steps
        self.noise = noise
        self.random_state = random_state
        self.noise_key = noise_key
        self.threads = threads
        self.stream = stream
        self.sampling = sampling
        self.bounds = bounds
        self.scale = scale
        self.scale_share = scale_share
        self.normalize = normalize

    def fit(self, X, y=None, sample_weight=None):
        self._check_table_rule(X)
        from_file = _is_path(X)
        observed = isinstance(self.classes, str) and self.classes == "observed"
        if isinstance(self.classes, str) and not observed:
            raise ValueError(f"classes: expected a list of the labels or 'observed', got {self.classes!r}")
        classes = declared_classes(self)
        if classes is None and not observed:
            raise ValueError(f"classes: a {self.model} model is sized by its class count, which must be declared "
                             "public: pass classes=[...]; classes='observed' takes it from y, outside the guarantee")
        if from_file:
            _file_input("DPClassifier", X, y)
            if observed:
                raise ValueError("DPClassifier: a record file's labels are class indices; pass classes=[...] (the "
                                 "public labels, in the order of the indices)")
        else:  # y=None is refused here, in scikit-learn's words
            if not observed and y is not None:  # before scikit-learn's checks, in dpsosp.run's words
                refuse_labels_outside("DPClassifier", self, y)
            X, y = self._validated(X, y, reset=True)
            check_classification_targets(y)
            if observed:
                warnings.warn(_OBSERVED, PrivacyLeakWarning, stacklevel=2)
                classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"DPClassifier: needs 2 classes or more, got 1 class ({classes[0]!r}); pass "
                             "classes=[...] to name the others")
        model = self.model
        if model == "auto":
            model = "logistic" if classes.size == 2 else "softmax"
        if model in ("logistic", "sigmoid") and classes.size != 2:
            raise ValueError(f"DPClassifier: model {model} takes 2 classes, got {classes.size}; use softmax or mlp")
        if model not in ("logistic", "sigmoid", "softmax", "mlp"):
            raise ValueError(f"DPClassifier: model: expected auto, logistic, sigmoid, softmax or mlp, got {model!r}")
        extra = {}
        if model in ("softmax", "mlp"):
            extra["classes"] = int(classes.size)
        if model == "mlp":
            extra["hidden"] = self.hidden
        elif self.hidden is not None:
            raise ValueError(f"hidden: applies to the mlp model, not {model}")
        self.classes_ = classes
        labels = None if from_file else np.searchsorted(classes, y).astype(np.float64)
        extra["sample_weight"] = record_weights("DPClassifier", X, sample_weight, self.class_weight, labels, classes)
        self._run(model, X, labels, fit_intercept=self.fit_intercept and model != "mlp", **extra)
        self.model_.class_names = classes  # declared or seen, as classes_: save and load keep the labels
        if observed:
            self.report_["caveats"].append(_OBSERVED)
        if model != "mlp":
            rows = 1 if model in ("logistic", "sigmoid") else classes.size
            self.coef_, self.intercept_ = _linear_parts(self.model_, self.n_features_in_, self.fit_intercept, rows)
        return self

    def partial_fit(self, X, y, classes=None):  # docstring: _warm.PARTIAL_FIT_DOCS
        return partial_fit(self, X, y, classes)

    def predict(self, X):
        check_is_fitted(self)
        index = self.model_._values(self._records(X, reset=False)).astype(np.intp)
        return self.classes_[index]

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.model_._proba(self._records(X, reset=False))

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def decision_function(self, X):
        check_is_fitted(self)
        if not hasattr(self, "coef_"):
            raise AttributeError("decision_function: the mlp model has no linear decision function")
        X = self._records(X, reset=False)
        if self.model_.scaling:
            # As predict: the records mapped (clipped into the box) as the run mapped them, and x on that scale;
            # coef_ and intercept_ (the user's units) give the same scores for records inside the box.
            rows = self.coef_.shape[0]
            p = self.n_features_in_
            x = self.model_.x
            W, b = x[: rows * p].reshape(rows, p), (x[rows * p:] if self.fit_intercept else np.zeros(rows))
            scores = self.model_._unit(X.toarray() if hasattr(X, "toarray") else X) @ W.T + b
        else:
            scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores


class DPRegressor(RegressorMixin, _DPEstimator):
    """Differentially private regression fitted by one private run (docstring: _estimator_docs.py)."""

    def __init__(self, epsilon=_D["epsilon"], delta=_D["delta"], *, model="linear", algo=_D["algo"],
                 fit_intercept=True, G=_D["G"], M=_D["M"], batch_size=None, epochs=None, learning_rate=None,
                 max_steps=_D["max_steps"], noise=_D["noise"], random_state=None, noise_key=None,
                 threads=_D["threads"], stream=True, bounds=None, y_bounds=None, scale=_D["scale"],
                 scale_share=_D["scale_share"], normalize=_D["normalize"], n_features=None, categorical=None,
                 impute=None, sampling=None, budget=None, warm_start=False):
        self.budget = budget
        self.warm_start = warm_start
        self.n_features = n_features
        self.categorical = categorical
        self.impute = impute
        self.epsilon = epsilon
        self.delta = delta
        self.model = model
        self.algo = algo
        self.fit_intercept = fit_intercept
        self.G = G
        self.M = M
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.max_steps = max_steps
        self.noise = noise
        self.random_state = random_state
        self.noise_key = noise_key
        self.threads = threads
        self.stream = stream
        self.sampling = sampling
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.scale = scale
        self.scale_share = scale_share
        self.normalize = normalize

    def fit(self, X, y=None, sample_weight=None):
        self._check_table_rule(X)
        if _is_path(X):
            _file_input("DPRegressor", X, y)
        else:  # y=None is refused here, in scikit-learn's words
            X, y = self._validated(X, y, reset=True, y_numeric=True)
        if self.model not in ("linear", "cauchy"):
            raise ValueError(f"DPRegressor: model: expected linear or cauchy, got {self.model!r}")
        weights = record_weights("DPRegressor", X, sample_weight)
        self._run(self.model, X, y, fit_intercept=self.fit_intercept, sample_weight=weights)
        coef, intercept = _linear_parts(self.model_, self.n_features_in_, self.fit_intercept, 1)
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        return self

    def partial_fit(self, X, y):  # docstring: _warm.PARTIAL_FIT_DOCS
        return partial_fit(self, X, y)

    def predict(self, X):
        check_is_fitted(self)
        return self.model_._values(self._records(X, reset=False))


class DPPCA(TransformerMixin, _DPEstimator):
    """Differentially private principal subspace (docstring: _estimator_docs.py)."""

    def __init__(self, n_components=1, epsilon=_D["epsilon"], delta=_D["delta"], *, algo="dpsgd", G=1.0, M=1.0,
                 batch_size=None, max_steps=_D["max_steps"], noise=_D["noise"], random_state=None, noise_key=None,
                 threads=_D["threads"], stream=True, n_features=None, budget=None):
        self.budget = budget
        self.n_features = n_features
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.algo = algo
        self.G = G
        self.M = M
        self.batch_size = batch_size
        self.max_steps = max_steps
        self.noise = noise
        self.random_state = random_state
        self.noise_key = noise_key
        self.threads = threads
        self.stream = stream

    def fit(self, X, y=None):
        if not _is_path(X):
            X = self._records(X, reset=True)
        self._run("pca", X, None, rank=self.n_components)
        u = self.model_.x.reshape(self.n_components, self.n_features_in_).T  # U is p x r, column-major in x
        q, _ = np.linalg.qr(u)
        self.components_ = q.T
        self.n_components_ = self.n_components
        return self

    def transform(self, X):
        check_is_fitted(self)
        return np.asarray(self._records(X, reset=False) @ self.components_.T)


# The numpydoc docstrings, their Parameters from the option table (_estimator_docs.py).
_estimator_docs.document(DPClassifier, DPRegressor, DPPCA)
