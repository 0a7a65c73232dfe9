"""sample_weight and class_weight: each weight in [0, 1] scales a record's clipped gradient in the library, so the
guarantee is unchanged; bad weights and class_weight='balanced' are refused in one line. Every fit here has a fixed
random_state and noise_key, so each test is deterministic (no false failures)."""
import unittest

import numpy as np

try:
    import sklearn  # noqa: F401
except ImportError:  # python3-sklearn (scripts/install-deps.sh)
    sklearn = None

import dpsosp

KEY = bytes(range(16))


def overlapping(n=20000, seed=0):
    """Two overlapping classes on a line (cat left of 0, dog right of it), and a grid across the overlap."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    X = np.column_stack([(2 * labels - 1) * 0.3 + rng.standard_normal(n), 0.5 * rng.standard_normal(n)])
    return X, np.array(["cat", "dog"])[labels]


class RunKeyword(unittest.TestCase):
    def test_bad_weights_are_refused_in_one_line_naming_the_first_bad_record(self):
        X, y = overlapping(200)
        labels = (y == "dog").astype(float)
        for bad in (-0.5, 1.5, np.nan):
            w = np.full(200, 0.5)
            w[[2, 9]] = bad
            with self.assertRaises(ValueError) as caught:
                dpsosp.run("logistic", X, labels, sample_weight=w, epsilon=1, noise_key=KEY, seed=0)
            message = str(caught.exception)
            self.assertIn("sample_weight: the weight of record 2 (0-based)", message)
            self.assertIn("[0, 1]", message)
            self.assertNotIn("\n", message)
        with self.assertRaisesRegex(ValueError, "one weight per record"):
            dpsosp.run("logistic", X, labels, sample_weight=np.ones(199), epsilon=1, noise_key=KEY, seed=0)

    def test_all_ones_is_the_unweighted_run_and_the_guarantee_does_not_move(self):
        X, y = overlapping(5000)
        labels = (y == "dog").astype(float)
        common = dict(epsilon=1, noise_key=KEY, seed=3, bounds=(-4, 4))
        plain = dpsosp.run("logistic", X, labels, **common)
        ones = dpsosp.run("logistic", X, labels, sample_weight=np.ones(5000), **common)
        np.testing.assert_array_equal(plain["x"], ones["x"])
        half = dpsosp.run("logistic", X, labels, sample_weight=np.where(labels > 0, 1.0, 0.5), **common)
        self.assertFalse(np.array_equal(plain["x"], half["x"]))
        self.assertEqual(plain["epsilon"], half["epsilon"])


@unittest.skipIf(sklearn is None, "scikit-learn not installed")
class Estimators(unittest.TestCase):
    def test_class_weight_shifts_predictions_towards_the_heavier_class(self):
        X, y = overlapping()
        grid = np.column_stack([np.linspace(-1.5, 1.5, 301), np.zeros(301)])
        dog_share = {}
        for light in ("cat", "dog"):
            clf = dpsosp.DPClassifier(epsilon=2, classes=["cat", "dog"], class_weight={light: 0.2}, random_state=0,
                                      noise_key=KEY, bounds=(-4, 4)).fit(X, y)
            dog_share[light] = float(np.mean(clf.predict(grid) == "dog"))
        # Unweighted the boundary sits near 0 (half the grid each side); a class weighed 0.2 loses ground.
        self.assertGreater(dog_share["cat"], 0.6)
        self.assertLess(dog_share["dog"], 0.4)

    def test_sample_weight_selects_the_records_a_regressor_follows(self):
        rng = np.random.default_rng(1)
        X = rng.uniform(-1, 1, (8000, 1))
        first = np.arange(8000) < 4000
        y = np.where(first, 2.0, -2.0) * X[:, 0]
        common = dict(epsilon=2, random_state=0, noise_key=KEY, bounds=(-1, 1), y_bounds=(-2, 2))
        up = dpsosp.DPRegressor(**common).fit(X, y, sample_weight=first.astype(float))
        down = dpsosp.DPRegressor(**common).fit(X, y, sample_weight=(~first).astype(float))
        self.assertGreater(up.coef_[0], 0.5)
        self.assertLess(down.coef_[0], -0.5)

    def test_bad_weights_and_balanced_are_refused(self):
        X, y = overlapping(200)
        clf = dpsosp.DPClassifier(classes=["cat", "dog"], noise_key=KEY, random_state=0)
        with self.assertRaisesRegex(ValueError, r"^sample_weight: the weight of record 4 \(0-based\) is 3.0"):
            w = np.ones(200)
            w[4] = 3.0
            clf.fit(X, y, sample_weight=w)
        with self.assertRaisesRegex(ValueError, "one weight per record"):
            clf.fit(X, y, sample_weight=np.ones((200, 2)))
        for bad, words in (("balanced", "class frequencies from the private records"),
                           ({"emu": 0.5}, "not one of the declared classes"),
                           ({"cat": 2.0}, r"weight of class 'cat' is 2.0, expected a number in \[0, 1\]")):
            with self.assertRaisesRegex(ValueError, words) as caught:
                dpsosp.DPClassifier(classes=["cat", "dog"], class_weight=bad, noise_key=KEY).fit(X, y)
            self.assertNotIn("\n", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
