"""The Python module: results equal the library's, errors arrive as ValueError."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import dpsosp


class PythonModule(unittest.TestCase):
    def test_private_run_from_the_saddle(self):
        p = dpsosp.synthetic("phase-retrieval:n=200000,d=8,seed=4")
        self.assertEqual(p["X"].shape, (200000, 8))
        r = dpsosp.run("phase-retrieval", p["X"], p["y"], epsilon=2, delta=1e-6, G=6, M=20, rho=6, B=1,
                       seed=3, x0=p["saddle"])
        self.assertLessEqual(r["epsilon"], 2 + 1e-9)
        again = dpsosp.privacy_tree(r["sigma"] / r["sensitivity"], r["phase_lengths"], r["delta"])
        self.assertEqual(again["epsilon_gdp"], r["epsilon"])
        c = dpsosp.certify_population("phase-retrieval:n=10,d=8,seed=4", r["x"], rho=6)
        self.assertGreater(c["lambda_min"], 0)  # escaped the saddle (lambda_min = -2 there)
        same = dpsosp.run("phase-retrieval", p["X"], p["y"], epsilon=2, delta=1e-6, G=6, M=20, rho=6, B=1,
                          seed=3, x0=p["saddle"], threads=1)
        np.testing.assert_array_equal(same["x"], r["x"])

    def test_logistic_on_numpy_data_and_certificate(self):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((20000, 5))
        y = (X @ np.array([1.0, -1, 0.5, 0, 0]) > 0).astype(float)
        r = dpsosp.run("logistic", X, y, algo="dpsgd", epsilon=1, delta=1e-6, seed=1, batch_size=200)
        self.assertEqual(r["accounting"], "gdp-gaussian")
        self.assertEqual(r["samples_used"], 20000)
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
                                ("dpsgd", {"batch_size": 250, "epochs": 0.5})):
                out = os.path.join(tmp, "report.json")
                cmd = [os.environ["DPSOSP_CLI"], "run", "--model", "phase-retrieval", "--data", csv, "--algo", algo,
                       "--epsilon", "2", "--delta", "1e-6", "--G", "6", "--M", "20", "--rho", "6", "--seed", "5",
                       "--no-certificate", "--out", out]
                if "batch_size" in extra:
                    cmd += ["--batch-size", str(extra["batch_size"])]
                if "epochs" in extra:
                    cmd += ["--epochs", str(extra["epochs"])]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                with open(out) as f:
                    cli = json.load(f)
                r = dpsosp.run("phase-retrieval", X, y, algo=algo, epsilon=2, delta=1e-6, G=6, M=20, rho=6, seed=5,
                               **extra)
                self.assertEqual(r["steps"], cli["steps"], algo)
                np.testing.assert_array_equal(r["x"], np.array(cli["x"], dtype=float), err_msg=algo)

    def test_privacy_figures_match_spec(self):
        self.assertAlmostEqual(dpsosp.privacy_tree(5, [1000, 500, 256], 1e-6)["epsilon_gdp"], 2.92160, places=5)
        self.assertAlmostEqual(dpsosp.privacy_poisson(0.01, 1.1, 1000, 1e-5), 1.71177, places=3)

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
