"""dpsosp.Budget: a budget shared by fits (docs/budget.md). A grid search charges every fit and the total is
their exact composition; a fit past the budget is refused before any step; copies share it, pickled ones are
detached; the CLI and Python read one file."""
import copy
import json
import os
import pickle
import subprocess
import tempfile
import unittest

import numpy as np

import dpsosp

CLI = os.environ.get("DPSOSP_CLI")


def table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 100, 0.1] + [0, 50, 0, 1]
    y = (X[:, 0] + X[:, 1] / 10 - 5 + rng.normal(size=n) > 0).astype(int)
    return X, y


def curve_pld(c):
    """A ledger curve rebuilt from the package's PLD primitives (not the budget's code)."""
    if c["form"] == "gdp":
        return dpsosp.pld_gaussian(1 / c["mu"])
    # replace-one: neighbours' step sums at -C and +C, noise z C (C = 1)
    p = dpsosp.pld_poisson_gaussian(c["sampling_rate"], c["noise_multiplier"], 1.0, "replace-one")
    p = p.self_compose(int(c["steps"]))
    if c["prior_mu"] > 0:
        p = dpsosp.pld_gaussian(1 / c["prior_mu"]).compose(p)
    if c.get("cover_mu", 0) > 0:
        p = p.compose(dpsosp.pld_gaussian(1 / c["cover_mu"]))
    return p


class BudgetTest(unittest.TestCase):
    def test_a_grid_search_is_charged_for_every_fit(self):
        from sklearn.model_selection import GridSearchCV
        X, y = table()
        budget = dpsosp.Budget(8, 1e-5)
        search = GridSearchCV(dpsosp.DPClassifier(epsilon=1, delta=1e-6, classes=[0, 1], budget=budget),
                              {"learning_rate": [0.5, 1.0]}, cv=3).fit(X, y)
        self.assertIs(search.best_estimator_.budget, budget)
        ledger = budget.ledger
        self.assertEqual(len(ledger), 2 * 3 + 1)  # every fold of every setting, and the refit
        # The total is the exact composition of the fits' curves (rebuilt here from the PLD primitives) ...
        total = curve_pld(ledger[0]["curve"])
        for entry in ledger[1:]:
            total = total.compose(curve_pld(entry["curve"]))
        self.assertAlmostEqual(budget.spent(), total.epsilon(1e-5), delta=1e-6)
        # ... far below adding the fits' epsilons, each about its own guarantee at the budget's delta.
        self.assertLess(budget.spent(), 0.5 * sum(e["epsilon"] for e in ledger))
        for entry in ledger:
            self.assertIn("run(logistic) on", entry["label"])
        self.assertIn("7 runs charged", repr(budget))

    def test_a_fit_past_the_budget_is_refused_before_any_step(self):
        X, y = table()
        budget = dpsosp.Budget(1.2, 1e-6)
        dpsosp.run("logistic", X, y, epsilon=1, delta=1e-6, budget=budget)
        spent = budget.spent()
        steps = []
        with self.assertRaisesRegex(ValueError, r"^budget: run\(logistic\) on 600 records.* would take the budget's "
                                                r"spending to epsilon .* past its epsilon 1\.2 .*it was not run$"):
            dpsosp.run("logistic", X, y, epsilon=1, delta=1e-6, budget=budget,
                       callback=lambda step, info: steps.append(step))
        self.assertEqual(steps, [])
        self.assertEqual(len(budget.ledger), 1)
        self.assertEqual(budget.spent(), spent)
        # A Gaussian release of eps 0.61 composes with the eps-1 fit to the budget's 1.2 (fixed: public curves).
        self.assertAlmostEqual(budget.remaining(), 0.613, delta=0.01)
        with self.assertRaisesRegex(ValueError, "budget: .* is not private"):
            dpsosp.run("logistic", X, y, algo="spider", budget=budget)
        with self.assertRaisesRegex(TypeError, "budget: expected a dpsosp.Budget"):
            dpsosp.run("logistic", X, y, epsilon=1, budget=3)

    def test_copies_share_it_and_pickled_ones_are_detached(self):
        from sklearn.base import clone
        budget = dpsosp.Budget(3, 1e-5)
        self.assertIs(copy.deepcopy(budget), budget)
        self.assertIs(clone(dpsosp.DPRegressor(budget=budget)).budget, budget)
        X, y = table()
        dpsosp.run("logistic", X, y, epsilon=1, budget=budget)
        detached = pickle.loads(pickle.dumps(budget))
        self.assertEqual(detached.spent(), budget.spent())
        with self.assertRaisesRegex(ValueError, "budget: this Budget is a copy made by pickling"):
            dpsosp.run("logistic", X, y, epsilon=1, budget=detached)

    def test_the_cli_and_python_share_the_file(self):
        X, y = table()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "budget.json")
            budget = dpsosp.Budget(3, 1e-5)
            dpsosp.run("logistic", X, y, epsilon=1, budget=budget)
            budget.save(path)
            again = dpsosp.Budget.load(path)
            self.assertEqual(again.spent(), budget.spent())
            self.assertEqual(again.ledger, budget.ledger)
            if CLI:
                data = os.path.join(tmp, "t.csv")
                np.savetxt(data, np.column_stack([y, X]), delimiter=",")
                subprocess.run([CLI, "run", "--model", "logistic", "--data", data, "--epsilon", "1", "--quiet",
                                "--budget", path, "--out", os.path.join(tmp, "r.json")], check=True)
                loaded = dpsosp.Budget.load(path)
                self.assertEqual(len(loaded.ledger), 2)
                self.assertGreater(loaded.spent(), budget.spent())
                shown = subprocess.run([CLI, "budget", path], capture_output=True, text=True, check=True).stdout
                self.assertIn("spent     epsilon %.4g" % loaded.spent(), shown)
            with open(path, "w") as f:
                f.write("{}")
            with self.assertRaisesRegex(ValueError, "budget.json: not a budget"):
                dpsosp.Budget.load(path)

    def test_warm_start_and_partial_fit_start_from_the_last_fit_and_are_charged(self):
        from dpsosp import _estimator as estimators  # the estimators' fit calls run there
        X, y = table()
        budget = dpsosp.Budget(5, 1e-5)
        seen = []
        real = estimators.run

        def spy(*args, **kwargs):
            seen.append(kwargs)
            return real(*args, **kwargs)

        estimators.run = spy
        try:
            clf = dpsosp.DPClassifier(epsilon=1, classes=[0, 1], budget=budget, warm_start=True, random_state=0)
            first = clf.fit(X, y).report_
            second = clf.fit(X, y).report_
            clf.fit(X[:, :3], y)  # another width: a cold start
            reg = dpsosp.DPRegressor(epsilon=1, budget=budget, random_state=0)
            reg_first = reg.partial_fit(X[:300], X[:300, 1]).report_
            reg.partial_fit(X[300:], X[300:, 1])
        finally:
            estimators.run = real
        self.assertNotIn("x0", seen[0])
        np.testing.assert_array_equal(seen[1]["x0"], first["x"])
        # The released box of the first fit, declared: the second spends nothing on the scale.
        self.assertEqual(seen[1]["bounds"], list(zip(first["scaling"]["lower"], first["scaling"]["upper"])))
        self.assertEqual(second["scaling"]["features"], "declared")
        self.assertNotIn("x0", seen[2])
        self.assertNotIn("x0", seen[3])
        np.testing.assert_array_equal(seen[4]["x0"], reg_first["x"])
        target = reg_first["scaling"]["target"]
        self.assertEqual(seen[4]["y_bounds"], (target["lower"], target["upper"]))
        self.assertFalse(reg.warm_start)  # partial_fit leaves the parameter as it was
        self.assertEqual(len(budget.ledger), 5)
        # No classes anywhere: a binary model's public 0 and 1 (fit's default); softmax is refused by fit.
        np.testing.assert_array_equal(dpsosp.DPClassifier(epsilon=1).partial_fit(X, y).classes_, [0, 1])
        with self.assertRaisesRegex(ValueError, "^classes: a softmax model is sized by its class count"):
            dpsosp.DPClassifier(epsilon=1, model="softmax").partial_fit(X, y)
        late = dpsosp.DPClassifier(epsilon=1).partial_fit(X, y, classes=[0, 1])
        self.assertIsNone(late.classes)  # the parameter is left as given
        late.partial_fit(X, y)  # the last fit's classes
        np.testing.assert_array_equal(late.classes_, [0, 1])


if __name__ == "__main__":
    unittest.main()
