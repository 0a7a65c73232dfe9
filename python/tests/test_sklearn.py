"""dpsosp's scikit-learn estimators: sklearn's own estimator checks, clone, Pipeline, cross_val_score, the
fitted attributes, and numpy, pandas and scipy.sparse input."""
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

try:
    import sklearn  # noqa: F401
except ImportError:  # python3-sklearn (scripts/install-deps.sh)
    sklearn = None

import dpsosp
from dpsosp._weights import XFAIL_WEIGHTS

if sklearn is not None:
    from dpsosp import _estimator  # the estimators' skipped checks, each with its reason

# The tests' public noise key: every fit whose quality a test asserts is reproducible.
KEY = bytes(range(16))
CLI = os.environ.get("DPSOSP_CLI")


def blobs(n=5000, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, 4))
    labels = rng.integers(0, classes, n)
    X = (centers[labels] + 0.5 * rng.standard_normal((n, 4))) / 2
    return X, np.array(["cat", "dog", "emu", "fox"])[labels]


@unittest.skipIf(sklearn is None, "scikit-learn not installed")
class EstimatorChecks(unittest.TestCase):
    def test_sklearn_checks(self):
        from sklearn.utils.estimator_checks import check_estimator
        from dpsosp import DPPCA, DPClassifier, DPRegressor
        # With the noise key and the seed fixed, a fit is a function of its data: every check passes.
        # classes='observed': the checks fit on labels of their own; a sparse X without n_features is refused
        # in words that say "sparse" (which the checks accept).
        for est in (DPClassifier(noise_key=KEY, random_state=0, classes="observed"),
                    DPRegressor(noise_key=KEY, random_state=0),
                    DPPCA(noise_key=KEY, random_state=0)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_estimator(est)
            skipped = {str(w.message).split(" for ")[0][len("Skipping "):] for w in caught
                       if str(w.message).startswith("Skipping")}
            # ... but those that weigh above 1, ask for 'balanced' or add records of weight 0 (dpsosp._weights).
            self.assertLessEqual(skipped, set(_estimator._XFAIL_SMALL_N) | set(XFAIL_WEIGHTS), type(est).__name__)
        # Unit weights are no weights: the half of check_sample_weights_invariance that asks it passes.
        from sklearn.utils.estimator_checks import check_sample_weights_invariance
        for est in (DPClassifier(noise_key=KEY, random_state=0, classes="observed"),
                    DPRegressor(noise_key=KEY, random_state=0)):
            check_sample_weights_invariance(type(est).__name__, est, kind="ones")
        # With fresh secret noise for every fit (the default), the checks that compare two fits are skipped,
        # each with its reason (_estimator._XFAIL_FRESH_NOISE), and every other check passes.
        for est in (DPClassifier(classes="observed"), DPRegressor(), DPPCA()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_estimator(est)
            skipped = {str(w.message).split(" for ")[0][len("Skipping "):] for w in caught
                       if str(w.message).startswith("Skipping")}
            self.assertIn("check_fit_idempotent", skipped)
            self.assertLessEqual(skipped, set(_estimator._XFAIL_FRESH_NOISE) | set(_estimator._XFAIL_SMALL_N)
                                 | set(XFAIL_WEIGHTS))

    def test_sklearn_checks_for_seeds_0_to_9(self):
        # Fresh secret noise, the public seed 0 .. 9: every check but the skipped ones passes for each.
        from sklearn.utils.estimator_checks import check_estimator
        from dpsosp import DPPCA, DPClassifier, DPRegressor
        allowed = set(_estimator._XFAIL_FRESH_NOISE) | set(_estimator._XFAIL_SMALL_N) | set(XFAIL_WEIGHTS)
        for seed in range(10):
            for est in (DPClassifier(classes="observed", random_state=seed), DPRegressor(random_state=seed),
                        DPPCA(random_state=seed)):
                with self.subTest(seed=seed, estimator=type(est).__name__), warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    check_estimator(est)
                    skipped = {str(m.message).split(" for ")[0][len("Skipping "):] for m in w
                               if str(m.message).startswith("Skipping")}
                    self.assertLessEqual(skipped, allowed)


@unittest.skipIf(sklearn is None, "scikit-learn not installed")
class Estimators(unittest.TestCase):
    def test_fit_score_clone_pipeline_cross_val_score(self):
        from sklearn.base import clone
        from sklearn.model_selection import cross_val_score
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from dpsosp import DPClassifier
        X, y = blobs()
        clf = DPClassifier(epsilon=1, classes=["cat", "dog"], random_state=1, noise_key=KEY)
        # Non-private logistic regression scores 0.910 on these blobs; this private fit 0.896 (fresh keys:
        # 0.88-0.91).
        self.assertGreater(clf.fit(X, y).score(X, y), 0.87)
        self.assertEqual(list(clf.classes_), ["cat", "dog"])
        self.assertLessEqual(clf.epsilon_, 1.0)  # the target, the PLD calibration within 1e-6 below it
        self.assertGreater(clf.epsilon_, 1.0 - 1e-6)
        self.assertEqual(clf.report_["algo"], "spider-mf-adaptive")  # the CLI's default
        self.assertEqual(clf.coef_.shape, (1, 4))
        self.assertEqual(clf.intercept_.shape, (1,))
        # coef_ and intercept_ are in the user's units: the predictions of the records inside the run's box.
        s = clf.report_["scaling"]
        inside = np.all((X >= s["lower"]) & (X <= s["upper"]), axis=1)
        self.assertGreater(inside.mean(), 0.5)
        np.testing.assert_array_equal(clf.predict(X)[inside],
                                      np.where(X[inside] @ clf.coef_[0] + clf.intercept_[0] > 0, "dog", "cat"))
        twin = clone(clf)
        self.assertEqual(twin.get_params(), clf.get_params())
        self.assertFalse(hasattr(twin, "coef_"))
        scores = cross_val_score(make_pipeline(StandardScaler(), DPClassifier(classes=["cat", "dog"], noise_key=KEY)),
                                 X, y, cv=3)
        self.assertEqual(len(scores), 3)
        self.assertGreater(min(scores), 0.8)
        clf.set_params(epsilon=2, algo="spider-tree-adaptive")
        self.assertEqual(clf.fit(X, y).report_["algo"], "spider-tree-adaptive")

    def test_a_binary_model_takes_0_and_1_by_default_as_the_cli_does(self):
        from dpsosp import DPClassifier, run
        X, names = blobs()
        y = (names == "dog").astype(int)
        clf = DPClassifier(epsilon=1, random_state=1, noise_key=KEY).fit(X, y)  # no classes: [0, 1], public
        np.testing.assert_array_equal(clf.classes_, [0, 1])
        self.assertEqual(clf.report_["model"], "logistic")
        self.assertGreater(clf.score(X, y), 0.87)  # non-private logistic regression: 0.910 on these blobs
        self.assertNotIn("classes='observed'", " ".join(clf.report_["caveats"]))
        # The same records through dpsosp.run's logistic model (the CLI's defaults): the same run, bit for bit.
        same = run("logistic", X, y.astype(float), epsilon=1, seed=clf.report_["seed"], noise_key=KEY)
        np.testing.assert_array_equal(same["x"], clf.report_["x"])
        # Booleans are 0 and 1; a label set in other words is refused with one line naming no record.
        self.assertEqual(list(DPClassifier(noise_key=KEY).fit(X, y == 1).classes_), [0, 1])
        for labels in (y + 1, 2 * y - 1, y * 0.5):
            with self.assertRaisesRegex(ValueError, "^DPClassifier: a label of y is not 0 or 1, the default classes "
                                                    "of a binary model \\(public\\); declare the label set: "
                                                    "classes=\\[\\.\\.\\.\\]"):
                DPClassifier(noise_key=KEY).fit(X, labels)
        # Labels in words need their names declared: dpsosp.run's refusal (_labels.TEXT_LABELS).
        with self.assertRaisesRegex(ValueError, "^y: a label is not a number; .*classes=\\[\\.\\.\\.\\]"):
            DPClassifier(noise_key=KEY).fit(X, names)
        # The refusal reads no noise: it is the same for every record that is out (the public-shape rule).
        for i in (0, 7, len(y) - 1):
            out = y.copy()
            out[i] = 2
            with self.assertRaisesRegex(ValueError, "^DPClassifier: a label of y is not 0 or 1"):
                DPClassifier(noise_key=KEY).fit(X, out)

    def test_multiclass_softmax_and_the_label_set_warning(self):
        from dpsosp import DPClassifier, PrivacyLeakWarning
        X, y = blobs(classes=4, n=20000)
        # Four string labels and no class names: refused, in words that name no record.
        with self.assertRaisesRegex(ValueError, "^y: a label is not a number; named classes must be declared "
                                                "\\(classes=.*which record is not said"):
            DPClassifier(epsilon=2, random_state=0, noise_key=KEY).fit(X, y)
        with self.assertRaisesRegex(ValueError, "^classes: a softmax model is sized by its class count, which must "
                                                "be declared public"):
            DPClassifier(epsilon=2, model="softmax", noise_key=KEY).fit(X, y)
        with self.assertWarnsRegex(PrivacyLeakWarning, "not covered by the privacy guarantee"):
            clf = DPClassifier(epsilon=2, random_state=0, noise_key=KEY, classes="observed").fit(X, y)
        self.assertTrue(any("classes='observed'" in c for c in clf.report_["caveats"]))
        self.assertEqual(clf.report_["model"], "softmax")
        self.assertEqual(clf.coef_.shape, (4, 4))
        proba = clf.predict_proba(X[:50])
        np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-12)
        np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X[:50]))
        self.assertGreater(clf.score(X, y), 0.7)
        with self.assertRaisesRegex(ValueError, r"^y: a label is not one of the 2 declared classes \(cat,dog\); .*"
                                                "which record is not said"):
            DPClassifier(classes=["cat", "dog"]).fit(X, y)
        # "auto" picks the model from the declared classes, not from the labels y holds.
        two = DPClassifier(classes=["cat", "dog", "emu", "fox", "gnu"], random_state=0, noise_key=KEY).fit(X, y)
        self.assertEqual((two.report_["model"], two.report_["shape"]["classes"]), ("softmax", 5))

    def test_pandas_and_sparse_input(self):
        import pandas as pd
        import scipy.sparse as sp
        from dpsosp import DPClassifier
        X, y = blobs()
        # scale="none": a sparse X runs as it is by default, a dense one is scaled (docs/own-table.md).
        common = dict(classes=["cat", "dog"], noise_key=KEY, random_state=3, scale="none")
        dense = DPClassifier(**common).fit(X, y)
        frame = DPClassifier(**common).fit(pd.DataFrame(X, columns=list("abcd")), pd.Series(y))
        np.testing.assert_array_equal(frame.coef_, dense.coef_)
        self.assertEqual(list(frame.feature_names_in_), list("abcd"))
        with self.assertRaisesRegex(ValueError, "sparse X .* pass n_features=D"):
            DPClassifier(**common).fit(sp.csr_matrix(X), y)
        sparse = DPClassifier(n_features=4, **common).fit(sp.csr_matrix(X), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9)
        np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))

    def test_a_skewed_target_on_many_records_is_fitted_for_its_mean(self):
        # Over-dispersed counts (median 1, mean 3.5, up to 161), 12000 records: the noise is small, so G is a
        # higher quantile of the gradient norms (docs/parameters.md, "A regression's clip"). At the median the fit
        # followed the median and scored R^2 -0.04 to 0.01 here (non-private least squares: 0.107).
        from dpsosp import DPRegressor
        rng = np.random.default_rng(5)
        X = rng.normal(size=(16000, 3)) * [1.0, 2.0, 0.5] + [0, 5, 1]
        y = rng.poisson(np.exp(1 + 0.7 * X[:, 0]) * rng.gamma(0.5, 2.0, 16000)).astype(float)
        scores = []
        for seed in range(3):
            reg = DPRegressor(epsilon=3, random_state=seed, noise_key=KEY).fit(X[:12000], y[:12000])
            self.assertEqual(reg.report_["estimate"]["quantile"], 0.9)
            scores.append(reg.score(X[12000:], y[12000:]))
        self.assertGreater(np.median(scores), 0.05, scores)

    def test_regressor_and_pca(self):
        from dpsosp import DPPCA, DPRegressor
        rng = np.random.default_rng(5)
        X = rng.standard_normal((20000, 3)) / 2
        y = X @ np.array([1.0, -0.5, 0.25]) + 0.3 + 0.05 * rng.standard_normal(20000)
        reg = DPRegressor(epsilon=2, random_state=0, noise_key=KEY).fit(X, y)
        self.assertGreater(reg.score(X, y), 0.9)
        s = reg.report_["scaling"]
        linear = X @ reg.coef_ + reg.intercept_
        inside = (np.all((X >= s["lower"]) & (X <= s["upper"]), axis=1) & (linear >= s["target"]["lower"])
                  & (linear <= s["target"]["upper"]))
        self.assertGreater(inside.mean(), 0.5)
        np.testing.assert_allclose(reg.predict(X)[inside], linear[inside], rtol=1e-9, atol=1e-9)
        p = dpsosp.synthetic("pca:n=50000,d=6,seed=2")
        top = np.linalg.eigh(p["X"].T @ p["X"])[1][:, -1]
        pca = DPPCA(n_components=1, epsilon=2, random_state=0, noise_key=KEY).fit(p["X"])
        self.assertGreater(abs(pca.components_[0] @ top), 0.95)
        self.assertEqual(pca.transform(p["X"][:10]).shape, (10, 1))

    def test_record_files_fit_as_arrays_do(self):
        from dpsosp import DPPCA, DPClassifier, DPRegressor
        X, names = blobs()
        classes = ["cat", "dog"]
        y = np.searchsorted(classes, names).astype(float)
        rng = np.random.default_rng(3)
        t = X @ np.array([1.0, -0.5, 0.25, 0.0]) + 0.05 * rng.standard_normal(X.shape[0])
        p = dpsosp.synthetic("pca:n=20000,d=6,seed=2")["X"]
        with tempfile.TemporaryDirectory() as tmp:
            labeled, targets, unlabeled = (os.path.join(tmp, f) for f in ("c.dpsr", "r.dpsr", "p.dpsr"))
            # Stored in the sample order of seed 4, so a streamed run reads what a run on arrays with seed 4 reads.
            dpsosp.write_records(labeled, X, y, shuffle_seed=4)
            dpsosp.write_records(targets, X, t, shuffle_seed=4)
            dpsosp.write_records(unlabeled, p, shuffle_seed=4)
            same = dict(random_state=4, noise_key=KEY)
            for stream in (True, False):
                clf = DPClassifier(classes=classes, stream=stream, **same).fit(labeled)
                # A record file is run as it is: compared with arrays as they are.
                # The file's order is the seed's; in memory the default would sample by Poisson.
                want = DPClassifier(classes=classes, scale="none", sampling="order", **same).fit(X, names)
                if stream:  # the file's order is the seed's: the same bits
                    np.testing.assert_array_equal(clf.coef_, want.coef_)
                self.assertEqual(clf.n_features_in_, 4)
                self.assertGreater(clf.score(X, names), 0.8)
                reg = DPRegressor(stream=stream, **same).fit(targets)
                self.assertEqual(reg.coef_.shape, (4,))
                self.assertGreater(reg.score(X, t), 0.5)
                pca = DPPCA(stream=stream, **same).fit(unlabeled)
                self.assertEqual(pca.components_.shape, (1, 6))
            # No classes: the binary model's public 0 and 1, the file's label indices (the CLI's logistic too).
            np.testing.assert_array_equal(DPClassifier(**same).fit(labeled).classes_, [0, 1])
            for refused in (DPClassifier(model="softmax"), DPClassifier(classes="observed")):
                with self.assertRaisesRegex(ValueError, "pass classes"):
                    refused.fit(labeled)
            with self.assertRaisesRegex(ValueError, "a record file holds its labels"):
                DPClassifier(classes=classes).fit(labeled, names)
            with self.assertRaisesRegex(ValueError, "^stream: a streamed run reads the file in order; sampling='poisson'"):
                DPClassifier(classes=classes, epochs=2).fit(labeled)

    def test_defaults_are_the_clis(self):
        # The estimators run what dpsosp.run and `dpsosp run` run by default (issue 33's one contract).
        import inspect
        import re
        import subprocess
        from dpsosp import DPClassifier, DPRegressor
        run = inspect.signature(dpsosp.run).parameters
        for est in (DPClassifier(), DPRegressor()):
            p = est.get_params()
            self.assertEqual(p["algo"], run["algo"].default)
            self.assertEqual(p["delta"], run["delta"].default)
            self.assertEqual(p["scale"], run["scale"].default)
            self.assertEqual(p["scale_share"], run["scale_share"].default)
            self.assertIsNone(p["epochs"])
            self.assertIsNone(run["epochs"].default)
            self.assertEqual((p["G"], p["M"]), ("auto", "auto"))  # run: None = auto for a private run
            self.assertTrue(p["fit_intercept"])  # run: None = on for these models
        if CLI:
            help_text = subprocess.run([CLI, "run", "--help"], capture_output=True, text=True).stdout
            def default(option):
                m = re.search(r"--" + re.escape(option) + r" TEXT=(\S+)", help_text)
                return m.group(1) if m else None
            self.assertEqual(default("algo"), run["algo"].default)
            self.assertEqual(float(default("delta")), run["delta"].default)
            self.assertEqual(default("G"), "auto")
            self.assertEqual(default("M"), "auto")
            self.assertEqual(default("scale"), run["scale"].default)
            self.assertEqual(default("scale-share"), run["scale_share"].default)  # auto

    @unittest.skipUnless(CLI, "DPSOSP_CLI (the dpsosp binary) not set")
    def test_save_a_fitted_estimator_for_the_cli(self):
        from dpsosp import DPClassifier
        X, y = blobs()
        clf = DPClassifier(classes=["cat", "dog"], random_state=1, noise_key=KEY).fit(X, y)
        with tempfile.TemporaryDirectory() as tmp:
            path, data = os.path.join(tmp, "m.json"), os.path.join(tmp, "x.csv")
            dpsosp.save(path, clf)
            np.savetxt(data, X, delimiter=",", fmt="%.17g")
            out = subprocess.run([CLI, "predict", "--point", path, "--data", data, "--no-labels"], check=True,
                                 capture_output=True, text=True).stdout.splitlines()
            index = subprocess.run([CLI, "predict", "--point", path, "--data", data, "--no-labels", "--classes", "2"],
                                   check=True, capture_output=True, text=True).stdout.splitlines()
        # The model file keeps the labels: the CLI answers in them, or in indices where --classes K says so.
        np.testing.assert_array_equal(np.array(out[1:]), clf.predict(X))
        np.testing.assert_array_equal(clf.classes_[np.array(index[1:], dtype=int)], clf.predict(X))

    def test_save_and_load_keep_the_labels_and_the_columns(self):
        import pickle
        import pandas as pd
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from dpsosp import DPClassifier
        X, y = blobs()
        frame = pd.DataFrame(X, columns=["height", "weight", "age", "size"])
        clf = DPClassifier(classes=["cat", "dog"], random_state=1, noise_key=KEY).fit(frame, y)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            dpsosp.save(path, clf)
            model = dpsosp.load(path)
        self.assertEqual(list(model.class_names), ["cat", "dog"])
        self.assertEqual(model.feature_names, ["height", "weight", "age", "size"])
        np.testing.assert_array_equal(model.predict(frame), clf.predict(frame))
        with self.assertRaisesRegex(ValueError, r"^X: its columns \(weight,height,age,size\) are not the model's"):
            model.predict(frame[["weight", "height", "age", "size"]])
        # A Pipeline's other steps are not in a model file: refused, pointing to pickle, which keeps them.
        pipe = make_pipeline(StandardScaler(), DPClassifier(classes=["cat", "dog"], random_state=1,
                                                            noise_key=KEY)).fit(frame, y)
        with self.assertRaisesRegex(ValueError, r"^save: a Pipeline's other steps .*pickle"):
            dpsosp.save("p.json", pipe)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(pipe)).predict(frame), pipe.predict(frame))


if __name__ == "__main__":
    unittest.main()
