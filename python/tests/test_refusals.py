"""One contract for refusals (SPEC section 9): dpsosp.run and the estimators refuse the same input in the same
one line, naming the keyword and its rule, and naming no record (nor a value read from one)."""
import unittest

import numpy as np
import pandas as pd

import dpsosp
from dpsosp import _labels

try:
    import sklearn  # noqa: F401
except ImportError:  # python3-sklearn (scripts/install-deps.sh)
    sklearn = None

OUTCOMES = ["approved", "denied"]
REGIONS = ["north", "south", "east", "west"]
FAST = dict(G=1, M=1, max_steps=2)


def table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    income = rng.normal(size=n)
    return pd.DataFrame({"income": income, "region": [REGIONS[i] for i in rng.integers(0, 4, n)],
                         "outcome": np.where(income + 0.3 * rng.normal(size=n) > 0, "approved", "denied")})


def refusal(test, fit, error=ValueError):
    """The one line a call is refused with."""
    with test.assertRaises(error) as raised:
        fit()
    message = str(raised.exception)
    test.assertNotIn("\n", message)
    return message


@unittest.skipIf(sklearn is None, "scikit-learn not installed")
class SameWordsFromRunAndTheEstimators(unittest.TestCase):
    def setUp(self):
        self.df = table()
        self.X, self.y = self.df.drop(columns=["outcome"]), self.df["outcome"]
        self.cat = {"region": REGIONS}

    def test_labels_in_words_need_the_class_names(self):
        # Before: run gave numpy's "could not convert string to float: 'denied'" (a record's value).
        from_label = refusal(self, lambda: dpsosp.run("logistic", self.df, label="outcome", categorical=self.cat))
        from_y = refusal(self, lambda: dpsosp.run("logistic", self.X, self.y, categorical=self.cat))
        from_softmax = refusal(self, lambda: dpsosp.run("softmax", self.X, self.y, classes=2, categorical=self.cat))
        from_estimator = refusal(self, lambda: dpsosp.DPClassifier(categorical=self.cat).fit(self.X, self.y))
        self.assertEqual({from_label, from_y, from_softmax, from_estimator}, {_labels.TEXT_LABELS})
        self.assertRegex(_labels.TEXT_LABELS, r"^y: .*classes=\[\.\.\.\]")
        for value in OUTCOMES:
            self.assertNotIn(value, from_label)

    def test_a_label_outside_the_classes(self):
        declared = ["approved", "rejected"]
        from_run = refusal(self, lambda: dpsosp.run("logistic", self.df, label="outcome", classes=declared,
                                                    categorical=self.cat))
        from_estimator = refusal(self, lambda: dpsosp.DPClassifier(classes=declared, categorical=self.cat)
                                 .fit(self.X, self.y))
        self.assertEqual(from_run, from_estimator)
        self.assertEqual(from_run, _labels.outside_classes(declared))
        self.assertNotIn("denied", from_run)

    def test_classes_named_twice(self):
        # Before: DPClassifier dropped the second 'approved' and fitted; run and the CLI refused.
        twice = ["approved", "denied", "approved"]
        from_run = refusal(self, lambda: dpsosp.run("softmax", self.df, label="outcome", classes=twice,
                                                    categorical=self.cat))
        from_estimator = refusal(self, lambda: dpsosp.DPClassifier(classes=twice, categorical=self.cat)
                                 .fit(self.X, self.y))
        self.assertEqual(from_run, "classes: 'approved' is named twice")
        self.assertEqual(from_estimator, from_run)

    def test_epsilon_inf(self):
        # Before: the estimators passed G = M = auto (their defaults) as given, and were refused for that.
        X, y = self.X[["income"]], (self.y == "denied").astype(int)
        from_run = refusal(self, lambda: dpsosp.run("logistic", X, y, epsilon=float("inf")))
        from_estimator = refusal(self, lambda: dpsosp.DPClassifier(epsilon=float("inf")).fit(X, y))
        self.assertEqual(from_run, from_estimator)
        self.assertRegex(from_run, r"^epsilon = inf: spider-mf-adaptive is a private algorithm")
        # A non-private algorithm at epsilon inf runs, with the library's defaults for G and M, as the CLI's.
        clf = dpsosp.DPClassifier(epsilon=float("inf"), algo="spider", max_steps=3, random_state=0).fit(X, y)
        self.assertFalse(clf.report_["private"])
        # The estimators' epsilon (default 1) is always given: a non-private algorithm with it is refused, as run's.
        from_run = refusal(self, lambda: dpsosp.run("logistic", X, y, algo="spider", epsilon=1))
        self.assertEqual(refusal(self, lambda: dpsosp.DPClassifier(algo="spider").fit(X, y)), from_run)

    def test_y_bounds_that_are_not_numbers(self):
        # Before: numpy's "could not convert string to float: 'abc'".
        X, y = self.X[["income"]], self.X["income"] * 2
        from_run = refusal(self, lambda: dpsosp.run("linear", X, y, y_bounds="abc"))
        from_estimator = refusal(self, lambda: dpsosp.DPRegressor(y_bounds="abc").fit(X, y))
        self.assertEqual(from_run, "y_bounds: expected (lo, hi), numbers, got 'abc'")
        self.assertEqual(from_estimator, from_run)
        self.assertEqual(refusal(self, lambda: dpsosp.run("linear", X, y, y_bounds=(0, 1, 2))),
                         "y_bounds: expected (lo, hi), numbers, got (0, 1, 2)")

    def test_nan_and_inf_in_x_and_y(self):
        # Before: the estimators gave scikit-learn's words ("Input X contains NaN.\nDPClassifier does not accept
        # missing values encoded as NaN natively. ..." over several lines; "Input y contains infinity ...").
        X = self.X[["income"]].to_numpy()
        y = (self.y == "denied").astype(float).to_numpy()
        for value in (np.nan, np.inf):
            bad_x = X.copy()
            bad_x[7, 0] = value
            from_run = refusal(self, lambda: dpsosp.run("logistic", bad_x, y))
            self.assertEqual(refusal(self, lambda: dpsosp.DPClassifier().fit(bad_x, y)), from_run)
            self.assertEqual(refusal(self, lambda: dpsosp.DPRegressor().fit(bad_x, y)), from_run)
            bad_y = y.copy()
            bad_y[7] = value
            from_run = refusal(self, lambda: dpsosp.run("linear", X, bad_y))
            self.assertEqual(refusal(self, lambda: dpsosp.DPRegressor().fit(X, bad_y)), from_run)
        # A DataFrame's missing value: encode_table's words from both.
        holes = self.X.copy()
        holes.loc[7, "income"] = np.nan
        from_run = refusal(self, lambda: dpsosp.run("logistic", holes, self.y, classes=OUTCOMES, categorical=self.cat))
        self.assertEqual(refusal(self, lambda: dpsosp.DPClassifier(classes=OUTCOMES, categorical=self.cat)
                                 .fit(holes, self.y)), from_run)

    def test_a_binary_defaults_label_that_is_not_0_or_1(self):
        # Before: scikit-learn's "Unknown label type: 'continuous'".
        X = self.X[["income"]]
        y = (self.y == "denied").astype(float).to_numpy()
        y[5] = 0.5
        message = refusal(self, lambda: dpsosp.DPClassifier().fit(X, y))
        self.assertRegex(message, r"^DPClassifier: a label of y is not 0 or 1, the default classes of a binary "
                                  r"model \(public\); declare the label set: classes=\[\.\.\.\]")
        self.assertNotIn("0.5", message)

    def test_no_records(self):
        # Before: "data: no records", the CLI's --data, from the library.
        for X in (np.zeros((0, 3)), pd.DataFrame({"a": [], "b": []}, dtype=float)):
            self.assertEqual(refusal(self, lambda: dpsosp.run("logistic", X, np.zeros(0), **FAST)), "X: no records")


@unittest.skipIf(sklearn is None, "scikit-learn not installed")
class EstimatorOptions(unittest.TestCase):
    def test_random_state_is_named_as_the_estimator_names_it(self):
        # Before: "seed: expected an integer >= 0, got -5" (the run's keyword, which the estimator does not take).
        X = np.random.default_rng(0).normal(size=(300, 2))
        y = (X[:, 0] > 0).astype(int)
        for est in (dpsosp.DPClassifier(random_state=-5), dpsosp.DPRegressor(random_state=-5)):
            self.assertEqual(refusal(self, lambda: est.fit(X, y)), "random_state: expected an integer >= 0, got -5")

    def test_impute_is_checked_whole_before_anything_else(self):
        df = table()
        X, y = df.drop(columns=["outcome"]), df["outcome"]
        cat = {"region": REGIONS}
        # No value is missing: a bad fill is refused all the same (before: accepted, refused only where the
        # records held a missing value in that column, so whether a fit ran depended on the records).
        for impute, words in (({"income": "abc"}, "impute['income']: expected a finite number"),
                              ({"region": "mars"}, "impute['region']: 'mars' is not one of the column's categories"),
                              ("mean", "impute: expected 'zero' or a dict")):
            for fit in (lambda: dpsosp.DPClassifier(classes=OUTCOMES, categorical=cat, impute=impute, **FAST)
                        .fit(X, y),
                        lambda: dpsosp.DPRegressor(categorical=cat, impute=impute, **FAST).fit(X, X["income"]),
                        lambda: dpsosp.run("logistic", df, label="outcome", classes=OUTCOMES, categorical=cat,
                                           impute=impute, **FAST),
                        lambda: dpsosp.encode_table(X, categorical=cat, impute=impute)):
                self.assertTrue(refusal(self, fit).startswith(words), impute)
        # A column the table does not have is named as such, before its fill is looked at.
        self.assertEqual(refusal(self, lambda: dpsosp.DPClassifier(classes=OUTCOMES, categorical=cat,
                                                                   impute={"outcome": "approved"}).fit(X, y)),
                         "impute: X has no column 'outcome' (its columns: income, region)")
        # Before the labels are looked at, as the other options are.
        self.assertRegex(refusal(self, lambda: dpsosp.DPClassifier(categorical=cat, impute="mean").fit(X, y)),
                         r"^impute: ")


if __name__ == "__main__":
    unittest.main()
