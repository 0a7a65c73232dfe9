"""The Python module: results equal the library's, errors arrive as ValueError."""
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

import dpsosp

# The tests' own noise key (public, so no test run is private): reproducible runs.
KEY = bytes(range(16))
KEY_FILE = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "noise.key")


class PythonModule(unittest.TestCase):
    def test_private_run_from_the_saddle(self):
        p = dpsosp.synthetic("phase-retrieval:n=200000,d=8,seed=4")
        self.assertEqual(p["X"].shape, (200000, 8))
        r = dpsosp.run("phase-retrieval", p["X"], p["y"], algo="spider-tree-adaptive", epsilon=2, delta=1e-6, G=6,
                       M=20, rho=6, B=1, seed=3, x0=p["saddle"], noise_key=KEY)
        # The guarantee fixed before the run: the target, for phases of up to L_max steps.
        self.assertAlmostEqual(r["epsilon"], 2, places=9)
        again = dpsosp.privacy_tree(r["sigma"] / r["sensitivity"], [int(r["params"]["max_phase_length"])],
                                    r["delta"])
        self.assertEqual(again["epsilon_gdp"], r["epsilon"])
        c = dpsosp.certify_population("phase-retrieval:n=10,d=8,seed=4", r["x"], rho=6)
        self.assertGreater(c["lambda_min"], 0)  # escaped the saddle (lambda_min = -2 there)
        same = dpsosp.run("phase-retrieval", p["X"], p["y"], algo="spider-tree-adaptive", epsilon=2, delta=1e-6, G=6,
                          M=20, rho=6, B=1,
                          seed=3, x0=p["saddle"], threads=1, noise_key=KEY)
        np.testing.assert_array_equal(same["x"], r["x"])

    def test_the_seed_alone_does_not_reproduce_the_noise(self):
        p = dpsosp.synthetic("phase-retrieval:n=50000,d=4,seed=2")
        common = dict(epsilon=2, G=6, M=20, rho=6, seed=3, max_steps=20)
        fresh = [dpsosp.run("phase-retrieval", p["X"], p["y"], **common) for _ in range(2)]
        self.assertEqual(fresh[0]["noise_key"], "generated")
        self.assertFalse(np.array_equal(fresh[0]["x"], fresh[1]["x"]))
        keyed = [dpsosp.run("phase-retrieval", p["X"], p["y"], noise_key=KEY, **common),
                 dpsosp.run("phase-retrieval", p["X"], p["y"], noise_key=KEY, **common)]
        np.testing.assert_array_equal(keyed[0]["x"], keyed[1]["x"])
        self.assertEqual(keyed[0]["noise_key"], "supplied")
        from_file = dpsosp.run("phase-retrieval", p["X"], p["y"], noise_key_file=KEY_FILE, **common)
        self.assertFalse(np.array_equal(from_file["x"], keyed[0]["x"]))
        self.assertEqual(len(dpsosp.generate_noise_key()), 16)
        self.assertNotEqual(dpsosp.generate_noise_key(), dpsosp.generate_noise_key())
        with self.assertRaisesRegex(ValueError, "16 bytes"):
            dpsosp.run("phase-retrieval", p["X"], p["y"], noise_key=b"short", **common)

    def test_diagnostics_are_apart_and_release_only_leaves_them_out(self):
        p = dpsosp.synthetic("phase-retrieval:n=50000,d=4,seed=2")
        r = dpsosp.run("phase-retrieval", p["X"], p["y"], epsilon=2, G=1, M=20, rho=6, seed=3, noise_key=KEY)
        for key in ("clipped", "seconds"):
            self.assertNotIn(key, r)
            self.assertIn(key, r["diagnostics"])
        self.assertIn("NOT covered", r["diagnostics"]["note"])
        self.assertGreater(r["diagnostics"]["clipped"]["o1"], 0)
        bare = dpsosp.run("phase-retrieval", p["X"], p["y"], epsilon=2, G=1, M=20, rho=6, seed=3, noise_key=KEY,
                          release_only=True)
        self.assertNotIn("diagnostics", bare)
        np.testing.assert_array_equal(bare["x"], r["x"])

    def test_secure_noise(self):
        p = dpsosp.synthetic("phase-retrieval:n=50000,d=4,seed=2")
        common = dict(epsilon=2, G=6, M=20, rho=6, seed=3, noise_key=KEY)
        r = dpsosp.run("phase-retrieval", p["X"], p["y"], noise="secure", **common)
        self.assertEqual(r["noise"], "secure")
        self.assertEqual(r["accounting"], "zcdp-mf-discrete")  # the default algorithm's mechanism
        tree = dpsosp.run("phase-retrieval", p["X"], p["y"], noise="secure", algo="spider-tree-adaptive", **common)
        self.assertEqual(tree["accounting"], "zcdp-tree-discrete")
        self.assertLessEqual(r["epsilon"], 2.0)
        self.assertGreater(r["grid"], 0)
        again = dpsosp.run("phase-retrieval", p["X"], p["y"], noise="secure", threads=1, **common)
        np.testing.assert_array_equal(again["x"], r["x"])
        self.assertEqual(dpsosp.run("phase-retrieval", p["X"], p["y"], **common)["noise"], "float")
        with self.assertRaisesRegex(ValueError, "noise: expected float or secure, got 'exact'"):
            dpsosp.run("phase-retrieval", p["X"], p["y"], noise="exact", **common)
        with self.assertRaisesRegex(ValueError, "^noise = secure: Poisson sampling \\(dpsgd"):
            dpsosp.run("phase-retrieval", p["X"], p["y"], algo="dpsgd", epochs=2, noise="secure", **common)

    def test_refuses_what_the_cli_refuses_in_the_same_words(self):
        X = np.random.default_rng(1).standard_normal((2000, 3))
        y = (X[:, 0] > 0).astype(float)
        with self.assertRaisesRegex(ValueError, "spider is non-private"):
            dpsosp.run("logistic", X, y, algo="spider", epsilon=1.0)
        with self.assertRaisesRegex(ValueError, "batch_size: applies to .*not spider-tree-adaptive"):
            dpsosp.run("logistic", X, y, algo="spider-tree-adaptive", batch_size=64)
        with self.assertRaisesRegex(ValueError, "epochs: applies to spider-mf-adaptive, dpsgd, not spider-gauss-fixed"):
            dpsosp.run("logistic", X, y, algo="spider-gauss-fixed", epochs=2)
        r = dpsosp.run("logistic", X, y, algo="sgd", batch_size=64, noise_key=None)
        self.assertEqual(r["accounting"], "none (non-private)")
        table = {row["name"]: row for row in dpsosp.algorithm_table()}
        self.assertIn("epochs", table["dpsgd"]["options"])
        self.assertNotIn("batch_size", table["spider-tree-adaptive"]["options"])

    def test_not_numbers_are_refused_naming_the_entry(self):
        X = np.ones((20, 3))
        X[7, 2] = np.inf
        with self.assertRaisesRegex(ValueError, r"X\[7, 2\] is inf"):
            dpsosp.run("cauchy", X, np.zeros(20))
        X[7, 2] = 1
        y = np.zeros(20)
        y[4] = np.nan
        with self.assertRaisesRegex(ValueError, r"y\[4\] is nan"):
            dpsosp.run("cauchy", X, y)

    def test_logistic_on_numpy_data_and_certificate(self):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((20000, 5))
        y = (X @ np.array([1.0, -1, 0.5, 0, 0]) > 0).astype(float)
        # Records as they are (scale="none") and no intercept: the estimate's and the optimizer's counts alone.
        r = dpsosp.run("logistic", X, y, algo="dpsgd", epsilon=1, delta=1e-6, seed=1, batch_size=200, noise_key=KEY,
                       G=1.0, M=1.0, scale="none", fit_intercept=False)
        self.assertEqual(r["accounting"], "gdp-gaussian")
        self.assertEqual(r["samples_used"], 20000)
        # By default G and M are estimated privately on 2% of the records
        # (at least 500), which the optimizer then leaves alone.
        a = dpsosp.run("logistic", X, y, algo="dpsgd", epsilon=1, delta=1e-6, seed=1, batch_size=200, noise_key=KEY,
                       scale="none")
        self.assertEqual(a["estimate"]["records"], 500)
        self.assertEqual(a["samples_used"], 500 + 97 * 200)
        self.assertEqual(a["constants"]["G"], a["estimate"]["G"])
        self.assertAlmostEqual(a["epsilon"], 1.0, places=9)
        with self.assertRaises(ValueError):
            dpsosp.run("logistic", X, y, G="median", noise_key=KEY)
        c = dpsosp.certify("logistic", X, y, r["x"], rho=1)
        # logistic loss is convex: its Hessian is positive semidefinite
        self.assertGreaterEqual(c["lambda_min"], -1e-9)

    @unittest.skipUnless(os.environ.get("DPSOSP_CLI"), "DPSOSP_CLI (the dpsosp binary) not set")
    def test_same_bits_as_the_cli_on_the_same_records(self):
        # run() copies the records into the run's sample order; `dpsosp run
        # --data` reads a file in its own order. The results must not differ.
        p = dpsosp.synthetic("phase-retrieval:n=30000,d=6,seed=8")
        X, y = p["X"], p["y"]
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "records.csv")
            with open(csv, "w") as f:
                for label, row in zip(y, X):
                    f.write(",".join(repr(float(v)) for v in [label, *row]) + "\n")
            for algo, extra in (("spider-tree-adaptive", {}), ("dpsgd", {"batch_size": 250}),
                                ("dpsgd", {"batch_size": 250, "epochs": 0.5}),
                                ("spider-mf-adaptive", {"epochs": 3}),
                                ("spider-mf-adaptive", {"epochs": 2, "sampling": "order"}),
                                ("spider-mf-adaptive", {"epochs": 1.5, "sampling": "poisson", "bands": 4})):
                out = os.path.join(tmp, "report.json")
                cmd = [os.environ["DPSOSP_CLI"], "run", "--model", "phase-retrieval", "--data", csv, "--algo", algo,
                       "--epsilon", "2", "--delta", "1e-6", "--G", "6", "--M", "20", "--rho", "6", "--seed", "5",
                       "--noise-key-file", KEY_FILE, "--no-certificate", "--out", out]
                if "batch_size" in extra:
                    cmd += ["--batch-size", str(extra["batch_size"])]
                if "epochs" in extra:
                    cmd += ["--epochs", str(extra["epochs"])]
                if "sampling" in extra:
                    cmd += ["--sampling", extra["sampling"]]
                if "bands" in extra:
                    cmd += ["--bands", str(extra["bands"])]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                with open(out) as f:
                    cli = json.load(f)
                r = dpsosp.run("phase-retrieval", X, y, algo=algo, epsilon=2, delta=1e-6, G=6, M=20, rho=6, seed=5,
                               noise_key_file=KEY_FILE, **extra)
                self.assertEqual(r["steps"], cli["steps"], algo)
                np.testing.assert_array_equal(r["x"], np.array(cli["x"], dtype=float), err_msg=algo)
                # One report builder (report.hpp): the same release, key for key, value for value.
                cli_only = ("x", "diagnostics", "certificate_skipped")  # --no-certificate: the CLI's option
                release = {k: v for k, v in r.items() if k not in cli_only}
                self.maxDiff = None
                self.assertEqual(release, {k: v for k, v in cli.items() if k not in cli_only}, algo)
                self.assertEqual(set(r["diagnostics"]), set(cli["diagnostics"]) - {"load_seconds"}, algo)

    def test_record_files_stream_with_the_bits_of_arrays(self):
        rng = np.random.default_rng(5)
        X = rng.standard_normal((6000, 5))
        y = (X[:, 0] + 0.3 * rng.standard_normal(6000) > 0).astype(float)
        common = dict(epsilon=2, seed=9, noise_key=KEY)
        with tempfile.TemporaryDirectory() as d:
            plain, shuffled = os.path.join(d, "plain.dpsr"), os.path.join(d, "shuffled.dpsr")
            dpsosp.write_records(plain, X, y)
            dpsosp.write_records(shuffled, X, y, shuffle_seed=9)
            # A record file is prepared data, run as it is (scale='auto' maps arrays, not record files).
            arrays = dpsosp.run("logistic", X, y, scale="none", **common)
            # Loaded whole: the seed's order, as for arrays.
            np.testing.assert_array_equal(dpsosp.run("logistic", data=plain, **common)["x"], arrays["x"])
            # Streamed in the file's order, which the shuffle seed made the seed's: the pass over the seed's
            # order (in memory the default samples by Poisson, which a stream cannot).
            streamed = dpsosp.run("logistic", data=shuffled, stream=True, **common)
            ordered = dpsosp.run("logistic", X, y, scale="none", sampling="order", **common)
            np.testing.assert_array_equal(streamed["x"], ordered["x"])
            self.assertEqual((arrays["adjacency"], arrays["accounting"]), ("replace-one", "pld-banded-mf"))
            with self.assertRaisesRegex(ValueError, "not both"):
                dpsosp.run("logistic", X, y, data=plain)
            with self.assertRaisesRegex(ValueError, "stream=True reads a record file"):
                dpsosp.run("logistic", X, y, stream=True)
            with self.assertRaisesRegex(ValueError, "not neither"):
                dpsosp.run("logistic", epsilon=1)
            with self.assertRaisesRegex(ValueError, "a record file holds its labels"):
                dpsosp.run("logistic", y=y, data=plain)

    def test_a_private_class_count_is_declared_not_read_from_the_labels(self):
        rng = np.random.default_rng(2)
        X = rng.standard_normal((3000, 3)) / 3
        y = rng.integers(0, 3, 3000).astype(float)
        with self.assertRaisesRegex(ValueError, r"^classes: a private softmax run .* pass classes=K \(labels 0 .. K-1\)$"):
            dpsosp.run("softmax", X, y, epsilon=1, G=1, M=1, seed=1, noise_key=KEY)
        with warnings.catch_warnings():
            warnings.simplefilter("error", dpsosp.PrivacyLeakWarning)
            r = dpsosp.run("softmax", X, y, epsilon=1, G=1, M=1, seed=1, noise_key=KEY, classes=3)
        self.assertEqual(r["shape"]["classes"], 3)
        self.assertFalse(any("class count" in c for c in r["caveats"]))
        # A non-private run may still take it from the labels (nothing is released under a guarantee).
        self.assertEqual(dpsosp.run("softmax", X, y, algo="sgd", max_steps=3)["shape"]["classes"], 3)

    def test_privacy_figures_match_spec(self):
        self.assertAlmostEqual(dpsosp.privacy_tree(5, [1000, 500, 256], 1e-6)["epsilon_gdp"], 2.92160, places=5)
        self.assertAlmostEqual(dpsosp.privacy_poisson(0.01, 1.1, 1000, 1e-5), 1.71177, places=3)

    def test_pld_accountant(self):
        # The example (dp_accounting's PLDAccountant: 1.828244), below RDP's 2.10.
        eps = dpsosp.privacy_poisson_pld(0.01, 1.0, 1000, 1e-5)
        self.assertAlmostEqual(eps, 1.828244, delta=1e-5)
        self.assertLess(eps, dpsosp.privacy_poisson(0.01, 1.0, 1000, 1e-5))
        self.assertLess(dpsosp.privacy_poisson_pld(0.01, 1.0, 1000, 1e-5, pessimistic=False), eps)
        self.assertLessEqual(dpsosp.privacy_poisson_pld_delta(0.01, 1.0, 1000, eps), 1e-5 * (1 + 1e-9))
        z = dpsosp.calibrate_poisson(0.01, 1000, eps, 1e-5)
        self.assertAlmostEqual(z, 1.0, delta=1e-5)
        self.assertGreater(dpsosp.calibrate_poisson(0.01, 1000, eps, 1e-5, accountant="rdp"), 1.05)
        # The object: composed releases of different sensitivities (e.g. a matrix mechanism's columns).
        pld = dpsosp.pld_poisson_gaussian(0.01, 1.0).self_compose(1000)
        self.assertIsInstance(pld, dpsosp.PrivacyLossDistribution)
        self.assertEqual(pld.epsilon(1e-5), eps)
        self.assertFalse(pld.symmetric)
        mixed = dpsosp.pld_gaussian(2.0, 1.0).compose(dpsosp.pld_gaussian(2.0, 0.5))
        self.assertAlmostEqual(mixed.epsilon(1e-6), dpsosp.gdp_epsilon(1.25 ** 0.5 / 2, 1e-6), delta=2e-4)
        self.assertGreaterEqual(dpsosp.privacy_tree(5, [1000, 500, 256], 1e-6)["epsilon_pld"], 2.92160)
        with self.assertRaisesRegex(ValueError, "adjacency must be 'add-remove' or 'replace-one'"):
            dpsosp.privacy_poisson_pld(0.01, 1.0, 10, 1e-5, adjacency="swap")
        with self.assertRaisesRegex(ValueError, "same discretization"):
            dpsosp.pld_gaussian(1.0).compose(dpsosp.pld_gaussian(1.0, discretization=1e-3))

    def test_poisson_dpsgd_accountant(self):
        X = np.random.default_rng(2).standard_normal((4000, 3))
        y = (X[:, 0] > 0).astype(float)
        common = dict(algo="dpsgd", epochs=1, batch_size=100, epsilon=2, delta=1e-5, seed=1, noise_key=KEY)
        pld = dpsosp.run("logistic", X, y, **common)
        rdp = dpsosp.run("logistic", X, y, accountant="rdp", **common)
        self.assertEqual(pld["accounting"], "pld-poisson")
        self.assertEqual(rdp["accounting"], "rdp-poisson")
        # epsilon: the worse of the accountant's figure and the G/M estimate's (the target's mu).
        self.assertEqual(pld["epsilon"], max(pld["epsilon_pld"], pld["epsilon_zero_out"]))
        self.assertEqual(rdp["epsilon"], max(rdp["epsilon_rdp"], rdp["epsilon_zero_out"]))
        self.assertLessEqual(pld["epsilon"], 2.0)
        self.assertLess(pld["noise_multiplier"], rdp["noise_multiplier"])
        self.assertIn("accountant", {row["name"]: row for row in dpsosp.algorithm_table()}["dpsgd"]["options"])
        with self.assertRaisesRegex(ValueError, "accountant = rdp: applies to Poisson-sampled runs only"):
            dpsosp.run("logistic", X, y, algo="dpsgd", accountant="rdp")
        with self.assertRaisesRegex(ValueError, "accountant: expected pld or rdp, got 'gdp'"):
            dpsosp.run("logistic", X, y, accountant="gdp", **common)

    def test_errors_are_value_errors(self):
        X = np.zeros((10, 3))
        with self.assertRaisesRegex(ValueError, "unknown"):
            dpsosp.run("nonsense", X)
        with self.assertRaisesRegex(ValueError, "epsilon"):
            dpsosp.run("pca", X, epsilon=-1)
        with self.assertRaises(ValueError):
            dpsosp.synthetic("phase-retrieval:n=abc")
        with self.assertRaisesRegex(ValueError, "2 labels for 10 records"):
            dpsosp.run("logistic", X, np.zeros(2))


if __name__ == "__main__":
    unittest.main()
