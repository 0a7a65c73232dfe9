"""The package's run(): keywords, the CLI's words for bad options, callback, Ctrl-C, warnings, input types,
the intercept, predictions and model files (shared with `dpsosp predict`)."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import unittest
import warnings

import numpy as np

import dpsosp

KEY = bytes(range(16))
CLI = os.environ.get("DPSOSP_CLI")
WIDE = 1000  # the sparse neighbour's width (PublicShape)


def logistic_data(n=2000, p=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) / np.sqrt(p)
    return X, (X[:, 0] > 0).astype(float)


class Keywords(unittest.TestCase):
    def test_an_unknown_keyword_is_a_type_error_naming_it(self):
        X, y = logistic_data()
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'batchsize'"):
            dpsosp.run("logistic", X, y, batchsize=10)
        with self.assertRaisesRegex(TypeError, "epsilon: expected a number, got 'one'"):
            dpsosp.run("logistic", X, y, epsilon="one")
        with self.assertRaisesRegex(TypeError, "callback: expected a callable"):
            dpsosp.run("logistic", X, y, callback=3)

    def test_what_the_cli_refuses_python_refuses(self):
        X, y = logistic_data()
        for kwargs, words in [(dict(algo="spider", epsilon=1.0), "epsilon = 1: spider is non-private"),
                              (dict(algo="spider-tree-adaptive", batch_size=64), "batch_size: applies to "),
                              (dict(hidden=5), "hidden: applies to the mlp model, not logistic"),
                              (dict(classes=3), "classes: applies to the softmax and mlp models, not logistic"),
                              (dict(algo="dpsgd", batch_size=5000), "batch_size = 5000: more than the 2000 records"),
                              (dict(algo="dpsgd", overrides={"sigma": 1}), "overrides.sigma: dpsgd reads only")]:
            with self.assertRaisesRegex(ValueError, words, msg=str(kwargs)):
                dpsosp.run("logistic", X, y, **kwargs)

    @unittest.skipUnless(CLI, "DPSOSP_CLI (the dpsosp binary) not set")
    def test_the_same_words_as_the_cli(self):
        X, y = logistic_data()
        # (Python keywords, CLI options, the option's name in each): after the
        # name, the messages agree (up to how the value is spelled after "got").
        cases = [
            (dict(algo="spider", epsilon=1.0), ["--algo", "spider", "--epsilon", "1"], "epsilon", "--epsilon"),
            (dict(algo="spider-tree-adaptive", batch_size=64), ["--algo", "spider-tree-adaptive", "--batch-size", "64"],
             "batch_size", "--batch-size"),
            (dict(algo="sgd", G="auto"), ["--algo", "sgd", "--G", "auto"], "G", "--G"),
            (dict(G="median"), ["--G", "median"], "G", "--G"),
            (dict(accountant="gdp"), ["--accountant", "gdp"], "accountant", "--accountant"),
            (dict(algo="spider-gauss-fixed", epochs=2), ["--algo", "spider-gauss-fixed", "--epochs", "2"], "epochs",
             "--epochs"),
            (dict(epsilon=-1), ["--epsilon", "-1"], "epsilon", "--epsilon"),
            (dict(delta=2), ["--delta", "2"], "delta", "--delta"),
            (dict(G=0), ["--G", "0"], "G", "--G"),
            (dict(hidden=5), ["--hidden", "5"], "hidden", "--hidden"),
            (dict(classes=3), ["--classes", "3"], "classes", "--classes"),
            (dict(algo="dpsgd", batch_size=0), ["--algo", "dpsgd", "--batch-size", "0"], "batch_size",
             "--batch-size"),
            (dict(algo="dpsgd", batch_size=5000), ["--algo", "dpsgd", "--batch-size", "5000"], "batch_size",
             "--batch-size"),
            (dict(noise="exact"), ["--noise", "exact"], "noise", "--noise"),
            (dict(algo="sgd", noise="secure"), ["--algo", "sgd", "--noise", "secure"], "noise", "--noise"),
            (dict(algo="dpsgd", overrides={"sigma": 1}), ["--algo", "dpsgd", "--set", "sigma=1"], "overrides.",
             "--set "),
            (dict(algo="dpsgd", max_phase_length=5), ["--algo", "dpsgd", "--max-phase-length", "5"],
             "max_phase_length", "--max-phase-length"),
            (dict(algo="adam"), ["--algo", "adam"], "", ""),
            (dict(delta=0.01), ["--delta", "0.01"], "delta", "--delta"),  # not below 1/n (n = 2000)
        ]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.csv")
            np.savetxt(path, np.column_stack([y, X]), delimiter=",")
            for kwargs, options, name, option in cases:
                cli = subprocess.run([CLI, "run", "--model", "logistic", "--data", path, *options],
                                     capture_output=True, text=True).stderr.strip()
                self.assertTrue(cli.startswith("dpsosp: error: " + option), cli)
                cli = cli[len("dpsosp: error: " + option):]
                with self.assertRaises(ValueError, msg=str(kwargs)) as raised:
                    dpsosp.run("logistic", X, y, **kwargs)
                py = str(raised.exception)
                self.assertTrue(py.startswith(name), py)
                py = py[len(name):]
                self.assertEqual(py.split(", got ")[0], cli.split(", got ")[0], kwargs)
            # The model's own options refused in one way too.
            cli = subprocess.run([CLI, "run", "--synthetic", "pca:n=500,d=3", "--fit-intercept"],
                                 capture_output=True, text=True).stderr.strip()
            with self.assertRaises(ValueError) as raised:
                dpsosp.run("pca", np.ones((500, 3)), fit_intercept=True)
            self.assertEqual(cli, "dpsosp: error: --" + str(raised.exception).replace("_", "-", 1))


class Hooks(unittest.TestCase):
    def test_callback_sees_every_step_and_can_stop_the_run(self):
        X, y = logistic_data(n=5000)
        seen = []
        r = dpsosp.run("logistic", X, y, algo="dpsgd", batch_size=50, seed=1, noise_key=KEY, G=1, M=1,
                       callback=lambda step, info: seen.append((step, info["batch"], info["records_used"])))
        self.assertEqual([s for s, _, _ in seen], list(range(1, r["steps"] + 1)))
        self.assertEqual(seen[-1][2], r["samples_used"])
        stopped = dpsosp.run("logistic", X, y, algo="dpsgd", batch_size=50, seed=1, noise_key=KEY,
                             callback=lambda step, info: step < 7)
        self.assertEqual(stopped["steps"], 7)
        self.assertEqual(stopped["termination"], "callback")

        def fails(step, info):
            if step == 3:
                raise RuntimeError("from the callback")
        with self.assertRaisesRegex(RuntimeError, "from the callback") as raised:
            dpsosp.run("logistic", X, y, algo="dpsgd", batch_size=50, callback=fails)
        self.assertEqual(raised.exception.result["steps"], 3)

    def test_ctrl_c_stops_the_run_and_keeps_the_report(self):
        X, y = logistic_data(n=3000000, p=2)
        # SIGINT while the library runs (the GIL released): seen between steps within 50 ms.
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt) as raised:
                dpsosp.run("logistic", X, y, algo="sgd", batch_size=1)  # 3 million steps: seconds
        finally:
            timer.cancel()
        partial = raised.exception.result
        self.assertTrue(partial["interrupted"])
        self.assertEqual(partial["termination"], "interrupted")
        self.assertLess(partial["steps"], 3000000)
        # SIGINT inside the callback: at a known step.
        X, y = logistic_data(n=5000)
        with self.assertRaises(KeyboardInterrupt) as raised:
            dpsosp.run("logistic", X, y, algo="sgd", batch_size=1,
                       callback=lambda step, info: step != 40 or os.kill(os.getpid(), signal.SIGINT))
        self.assertEqual(raised.exception.result["steps"], 40)
        self.assertTrue(raised.exception.result["interrupted"])

    def test_few_steps_warn(self):
        X, y = logistic_data(n=300)
        with self.assertWarnsRegex(dpsosp.RunWarning, "dpsgd took 1 step, fewer than 10"):
            r = dpsosp.run("logistic", X, y, algo="dpsgd", batch_size=200)
        self.assertEqual(len(r["warnings"]), 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dpsosp.run("logistic", X, y, algo="dpsgd")  # 30 per batch: ten steps, no warning


class Inputs(unittest.TestCase):
    def test_pandas_and_sparse_records_give_the_numpy_result(self):
        import pandas as pd
        import scipy.sparse as sp
        X, y = logistic_data()
        X[np.abs(X) < 0.3] = 0
        # scale="none": a sparse X runs as it is by default, a dense one is scaled (docs/own-table.md).
        common = dict(algo="dpsgd", seed=2, noise_key=KEY, scale="none")
        plain = dpsosp.run("logistic", X, y, **common)
        frame = dpsosp.run("logistic", pd.DataFrame(X, columns=["a", "b", "c"]), pd.Series(y), **common)
        np.testing.assert_array_equal(frame["x"], plain["x"])
        # A sparse X declares its width (n_features): its shape may come from its largest index.
        with self.assertRaisesRegex(ValueError, "^n_features: a private run on sparse X .* pass n_features=D$"):
            dpsosp.run("logistic", sp.csr_matrix(X), y, **common)
        sparse = dpsosp.run("logistic", sp.csr_matrix(X), y, n_features=3, **common)
        # CSR and dense dot products may sum in another order (docs/models.md): ~1e-16 relative per step.
        np.testing.assert_allclose(sparse["x"], plain["x"], rtol=1e-9)
        with self.assertRaisesRegex(ValueError, r"^n_features=4: X has 3 columns"):
            dpsosp.run("logistic", X, y, n_features=4, **common)
        with self.assertRaisesRegex(ValueError, "column 'b' is not numeric"):
            dpsosp.run("logistic", pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), [0, 1])
        with self.assertRaisesRegex(ValueError, "expected a 2-d array"):
            dpsosp.run("logistic", np.ones(5), np.ones(5))


# What a run releases (and may differ between neighbours): the iterates and what is computed from them.
RELEASED = {"x", "trajectory", "steps", "o1_calls", "perturbations", "samples_used", "gradient_evaluations",
            "phase_lengths", "termination", "certificate", "estimate", "warnings", "diagnostics", "scaling"}


class CertifyAReport(unittest.TestCase):
    def test_a_report_is_certified_on_the_records_as_its_run_saw_them(self):
        X, y = logistic_data(n=3000)
        X = 100 * X + 50  # raw units: the default run scales them privately
        r = dpsosp.run("logistic", X, y, epsilon=2, seed=1, noise_key=KEY)
        self.assertEqual(r["scaling"]["features"], "private")
        got = dpsosp.certify("logistic", X, y, r)
        unit = dpsosp.Model.from_result(r)._unit(X)  # the library's map onto the unit box
        want = dpsosp.certify("logistic", unit, y, r["x"], fit_intercept=True)
        self.assertEqual(got, want)
        raw = dpsosp.certify("logistic", X, y, r["x"], fit_intercept=True)  # the wrong problem: another answer
        self.assertNotEqual(raw["grad_norm"], got["grad_norm"])


class PublicShape(unittest.TestCase):
    """docs/privacy.md, "Public shape": neighbouring datasets that differ in one record, changed in an extreme way
    (a huge sparse index, a new class label), give the same report outside the release, or the same refusal."""

    def neighbours_sparse(self, at):
        import scipy.sparse as sp
        X, y = logistic_data(n=3000, p=5)
        X[np.abs(X) < 0.2] = 0
        base = sp.csr_matrix(X)
        # The neighbour's one record has index WIDE - 1, 200 times the others' largest (4);
        # the declared count is 2 * WIDE (x of 2 * WIDE + 1 entries: wide enough, and cheap).
        other = sp.lil_matrix((3000, WIDE))
        other[:, :5] = X
        other[at, :] = 0
        other[at, WIDE - 1] = 0.5
        return base, other.tocsr(), y  # scipy takes each matrix's width from its construction

    def assert_same_outside_the_release(self, a, b):
        self.assertEqual(set(a), set(b))
        for key in sorted(set(a) - RELEASED):
            self.assertEqual(a[key], b[key], f"{key} differs between neighbouring datasets")
        self.assertNotEqual(list(a["x"]), list(b["x"]), "the test has no power")

    def test_sparse_x_declares_its_width(self):
        base, other, y = self.neighbours_sparse(2999)
        # The pass over the seed's order, so that the changed record enters a release for sure (a Poisson
        # pass, the default, samples it with probability b1 / n).
        common = dict(epsilon=1, G=1, M=1, seed=3, noise_key=KEY, sampling="order")
        said = set()
        for X in (base, other):
            with self.assertRaises(ValueError) as e:
                dpsosp.run("logistic", X, y, **common)
            said.add(str(e.exception))
        self.assertEqual(said, {"n_features: a private run on sparse X is sized by its feature count, which must be "
                                "declared (public; a sparse matrix's width may come from its largest index): pass "
                                "n_features=D"})
        a, b = (dpsosp.run("logistic", X, y, n_features=2 * WIDE, **common) for X in (base, other))
        self.assertEqual((a["shape"]["features"], a["d"]), (2 * WIDE, 2 * WIDE + 1))  # and the intercept
        self.assert_same_outside_the_release(a, b)
        # An index at or above the declared count: refused, in the same words whichever record holds it.
        said = set()
        for at in (0, 2999):
            with self.assertRaises(ValueError) as e:
                dpsosp.run("logistic", self.neighbours_sparse(at)[1], y, n_features=5, **common)
            said.add(str(e.exception))
        self.assertEqual(said, {"X: a record has a feature index at or above n_features=5; which record is not said, "
                                "as a refusal must not depend on it"})

    def test_the_class_set_is_declared(self):
        rng = np.random.default_rng(4)
        X = rng.standard_normal((3000, 3)) / 3
        y = rng.integers(0, 3, 3000).astype(float)
        y2 = y.copy()
        y2[1234] = 9  # a new class label
        # The pass over the seed's order, so that the changed record enters a release for sure (a Poisson
        # pass, the default, samples it with probability b1 / n).
        common = dict(epsilon=1, G=1, M=1, seed=3, noise_key=KEY, sampling="order")
        for labels in (y, y2):
            with self.assertRaisesRegex(ValueError, "^classes: a private softmax run is sized by its class count"):
                dpsosp.run("softmax", X, labels, **common)
        a, b = (dpsosp.run("softmax", X, labels, classes=10, **common) for labels in (y, y2))
        self.assertEqual(a["shape"]["classes"], 10)
        self.assert_same_outside_the_release(a, b)
        said = set()
        for at in (0, 2999):
            y3 = y.copy()
            y3[at] = 9
            with self.assertRaises(ValueError) as e:
                dpsosp.run("softmax", X, y3, classes=3, **common)
            said.add(str(e.exception))
        self.assertEqual(len(said), 1, said)
        self.assertIn("a record's label is not an integer in [0, 3) (the classes); which record is not said",
                      said.pop())

    def test_a_key_file_others_can_read_is_refused(self):
        X, y = logistic_data()
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "k")
            with open(key, "w") as f:
                f.write(KEY.hex() + "\n")
            os.chmod(key, 0o644)
            with self.assertRaises(ValueError) as e:
                dpsosp.run("logistic", X, y, noise_key_file=key)
            self.assertEqual(str(e.exception), f"noise key file {key} is readable by others (mode 0644); chmod 600 {key}")
            os.chmod(key, 0o600)
            a = dpsosp.run("logistic", X, y, noise_key_file=key, seed=1)
            self.assertEqual(list(a["x"]), list(dpsosp.run("logistic", X, y, noise_key=KEY, seed=1)["x"]))


class Models(unittest.TestCase):
    def test_intercept_predict_save_load(self):
        rng = np.random.default_rng(3)
        X = rng.standard_normal((20000, 2))
        y = (X[:, 0] > 1).astype(float)  # a boundary off the origin
        r = dpsosp.run("logistic", X, y, algo="dpsgd", fit_intercept=True, seed=1, noise_key=KEY, epsilon=2)
        self.assertEqual(r["shape"]["fit_intercept"], True)
        self.assertEqual(len(r["x"]), 3)
        model = dpsosp.Model.from_result(r)
        predicted = model.predict(X)
        self.assertGreater(np.mean(predicted == y), 0.95)
        proba = model.predict_proba(X[:100])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
        np.testing.assert_array_equal(predicted[:100], (proba[:, 1] > 0.5).astype(float))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.json")
            dpsosp.save(path, r)
            with open(path) as f:
                saved = json.load(f)
            self.assertEqual(saved["format"], "dpsosp-model")
            self.assertEqual(saved["privacy"]["epsilon"], r["epsilon"])
            self.assertNotIn("diagnostics", saved)
            again = dpsosp.load(path)
            np.testing.assert_array_equal(again.predict(X), predicted)
            if CLI:  # the CLI reads the same file
                data = os.path.join(tmp, "x.csv")
                np.savetxt(data, X, delimiter=",", fmt="%.17g")
                out = subprocess.run([CLI, "predict", "--point", path, "--data", data, "--no-labels"],
                                     capture_output=True, text=True, check=True).stdout.splitlines()
                np.testing.assert_array_equal(np.array(out[1:], dtype=float), predicted)

    @unittest.skipUnless(CLI, "DPSOSP_CLI (the dpsosp binary) not set")
    def test_load_reads_a_cli_report(self):
        X, y = logistic_data()
        with tempfile.TemporaryDirectory() as tmp:
            data, out = os.path.join(tmp, "d.csv"), os.path.join(tmp, "r.json")
            np.savetxt(data, np.column_stack([y, X]), delimiter=",", fmt="%.17g")
            subprocess.run([CLI, "run", "--model", "logistic", "--data", data, "--fit-intercept", "--out", out],
                           check=True, capture_output=True)
            model = dpsosp.load(out)
            self.assertEqual(model.shape["fit_intercept"], True)
            with open(out) as f:
                self.assertEqual(model.privacy["mechanism"], json.load(f)["mechanism"])
            self.assertTrue(model.privacy["private"])
            cli = subprocess.run([CLI, "predict", "--point", out, "--data", data], capture_output=True, text=True,
                                 check=True).stdout.splitlines()
            np.testing.assert_array_equal(np.array(cli[1:], dtype=float), model.predict(X))


if __name__ == "__main__":
    unittest.main()
