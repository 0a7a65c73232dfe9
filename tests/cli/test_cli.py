"""The command-line contract (SPEC section 7): JSON keys, exit codes, one-line errors."""
import json
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
ISSUE = ["--G", "6", "--M", "20", "--rho", "6", "--B", "1"]
# The tests' own noise key (public, so no test run is private): reproducible runs.
KEY = ["--noise-key-file", os.path.join(DATA, "noise.key")]


def dpsosp(*args, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


class RunContract(unittest.TestCase):
    def test_run_report_has_every_spec_key(self):
        r = dpsosp("run", "--synthetic", "phase-retrieval:n=100000,d=8,seed=3", "--x0", "saddle",
                   "--epsilon", "2", "--delta", "1e-6", "--seed", "5", "--algo", "spider-tree-adaptive", *ISSUE)
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        # SPEC 7's keys, with section 8's split: what the guarantee does not
        # cover (clipped counts, timings) lives in diagnostics.
        for key in ["x", "algo", "epsilon", "delta", "mu", "sigma", "samples_used", "gradient_evaluations",
                    "steps", "o1_calls", "perturbations", "params", "certificate", "diagnostics"]:
            self.assertIn(key, j)
        for key in ["clipped", "seconds", "load_seconds"]:
            self.assertNotIn(key, j)
            self.assertIn(key, j["diagnostics"])
        self.assertIn("NOT covered by the privacy guarantee", j["diagnostics"]["note"])
        for key in ["grad_norm", "lambda_min", "sosp_gap"]:
            self.assertIn(key, j["certificate"])
        self.assertEqual(j["certificate_source"], "known population")
        self.assertEqual(j["algo"], "spider-tree-adaptive")
        self.assertAlmostEqual(j["epsilon"], 2.0, places=9)
        self.assertEqual(len(j["x"]), 8)
        self.assertEqual(j["seed"], 5)
        self.assertEqual(j["noise_key"], "generated")
        self.assertTrue(any("Mironov" in c for c in j["caveats"]))

    def test_same_seed_same_bits_with_one_and_two_threads(self):
        common = ["run", "--synthetic", "phase-retrieval:n=60000,d=8,seed=2", "--x0", "saddle",
                  "--epsilon", "2", "--seed", "9", *ISSUE, *KEY]
        a = json.loads(dpsosp(*common, "--threads", "1").stdout)
        b = json.loads(dpsosp(*common, "--threads", "2").stdout)
        self.assertEqual(a["x"], b["x"])
        self.assertEqual(a["epsilon"], b["epsilon"])

    def test_bands_keep_the_default_poisson_pass(self):
        # The default pass's report states its bands; giving them back fixes them and keeps the pass (Poisson at a
        # replace-one target), at the same guarantee.
        common = ["run", "--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--seed", "1", "--epochs", "1",
                  "--epsilon", "1", "--no-certificate", *ISSUE, *KEY]
        auto = json.loads(dpsosp(*common).stdout)
        r = dpsosp(*common, "--bands", str(int(auto["params"]["bands"])))
        self.assertEqual(r.returncode, 0, r.stderr)
        fixed = json.loads(r.stdout)
        for j in (auto, fixed):
            self.assertEqual(j["adjacency"], "replace-one")
            self.assertIn("sampling_rate", j["params"])
        self.assertEqual(fixed["params"]["bands"], auto["params"]["bands"])
        self.assertAlmostEqual(fixed["epsilon"], 1.0, places=6)
        # Calibrated from another start: the same multiplier within the calibration's tolerance (1e-6).
        z, z_auto = fixed["params"]["noise_multiplier"], auto["params"]["noise_multiplier"]
        self.assertLess(abs(z - z_auto), 2e-6 * z_auto)

    def test_certify_reads_a_result(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            r = dpsosp("run", "--synthetic", "phase-retrieval:n=100000,d=8,seed=3", "--x0", "saddle",
                       "--epsilon", "2", "--seed", "5", *ISSUE, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            run_cert = json.load(open(out))["certificate"]
            c = dpsosp("certify", "--synthetic", "phase-retrieval:n=1000,d=8,seed=3", "--point", out)
            self.assertEqual(c.returncode, 0, c.stderr)
            cert = json.loads(c.stdout)
            self.assertAlmostEqual(cert["sosp_gap"], run_cert["sosp_gap"], places=12)

    def test_privacy_tree_form_matches_spec_figures(self):
        r = dpsosp("privacy", "--noise-multiplier", "5", "--steps", "1000,500,256", "--delta", "1e-6")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertAlmostEqual(j["epsilon_rdp"], 3.13109, places=5)
        self.assertAlmostEqual(j["epsilon_gdp"], 2.92160, places=5)
        self.assertEqual(j["depth"], 10)
        for key in ["epsilon_gdp", "epsilon_rdp", "mu", "rho", "depth"]:
            self.assertIn(key, j)

    def test_privacy_poisson_form(self):
        r = dpsosp("privacy", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "1000",
                   "--delta", "1e-5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertAlmostEqual(json.loads(r.stdout)["epsilon_rdp"], 1.71177, delta=1.71177 * 0.02)

    def test_privacy_accountants(self):
        # The issue's example: RDP 2.10, PLD 1.828244 (dp_accounting's PLDAccountant), between its optimistic
        # bracket and RDP; the default prints every accountant's keys and no "epsilon".
        poisson = ["privacy", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1000", "--delta", "1e-5"]
        r = dpsosp(*poisson, "--epsilon", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertNotIn("epsilon", j)
        self.assertAlmostEqual(j["epsilon_rdp"], 2.1014, delta=1e-3)
        self.assertAlmostEqual(j["epsilon_pld"], 1.828244, delta=2e-5)
        self.assertLess(j["epsilon_pld_optimistic"], j["epsilon_pld"])
        self.assertAlmostEqual(j["delta_pld"], 0.0026124968, delta=1e-8)
        self.assertEqual(j["adjacency"], "add/remove-one")
        for accountant, key in [("pld", "epsilon_pld"), ("rdp", "epsilon_rdp")]:
            j = json.loads(dpsosp(*poisson, "--accountant", accountant).stdout)
            self.assertEqual(j["accountant"], accountant)
            self.assertEqual(j["epsilon"], j[key])
            self.assertNotIn("epsilon_rdp" if accountant == "pld" else "epsilon_pld", j)
        j = json.loads(dpsosp(*poisson, "--adjacency", "replace-one").stdout)
        self.assertEqual(j["adjacency"], "replace-one")
        self.assertAlmostEqual(j["epsilon_pld"], 1.2052096, delta=1e-5)  # dp_accounting REPLACE_ONE, sigma 2
        self.assertNotIn("epsilon_rdp", j)
        # The tree form: PLD is the exact GDP figure to the discretization.
        tree = ["privacy", "--noise-multiplier", "5", "--steps", "1000,500,256", "--delta", "1e-6"]
        j = json.loads(dpsosp(*tree).stdout)
        self.assertGreaterEqual(j["epsilon_pld"], j["epsilon_gdp"])
        self.assertLess(j["epsilon_pld"], j["epsilon_gdp"] + 1e-4)
        j = json.loads(dpsosp(*tree, "--accountant", "gdp").stdout)
        self.assertEqual(set(j), {"epsilon", "accountant", "epsilon_gdp", "mu", "depth", "form", "adjacency"})
        # A PLD too large to build: by default the RDP figure still stands (--accountant pld fails instead).
        j = json.loads(dpsosp("privacy", "--noise-multiplier", "2", "--sampling-rate", "0.01", "--steps", "100000000",
                              "--delta", "1e-5").stdout)
        self.assertIsNone(j["epsilon_pld"])
        self.assertIn("more than max_bins", j["pld_error"])
        self.assertGreater(j["epsilon_rdp"], 0)
        j = json.loads(dpsosp("privacy", "--noise-multiplier", "0.01", "--steps", "100000", "--delta", "1e-5").stdout)
        self.assertIsNone(j["epsilon_pld"])
        self.assertGreater(j["epsilon_gdp"], 0)

    def test_poisson_dpsgd_is_calibrated_by_pld_unless_rdp_is_asked_for(self):
        run = ["run", "--synthetic", "gaussian-mixture:n=4000,d=3,seed=2", "--model", "logistic", "--algo", "dpsgd",
               "--epochs", "2", "--batch-size", "100", "--epsilon", "2", "--delta", "1e-5", "--seed", "1", *KEY]
        reports = {}
        for accountant in ["default", "pld", "rdp"]:
            r = dpsosp(*run, *([] if accountant == "default" else ["--accountant", accountant]))
            self.assertEqual(r.returncode, 0, r.stderr)
            reports[accountant] = json.loads(r.stdout)
        pld, rdp = reports["pld"], reports["rdp"]
        self.assertEqual(reports["default"]["x"], pld["x"])
        self.assertEqual(pld["accounting"], "pld-poisson")
        self.assertEqual(rdp["accounting"], "rdp-poisson")
        # epsilon: the worse of the accountant's figure (calibrated to within 1e-6 below the target) and the
        # G/M estimate's (the target's own mu, on records the run leaves unused).
        for j, key in [(pld, "epsilon_pld"), (rdp, "epsilon_rdp")]:
            self.assertEqual(j["epsilon"], max(j[key], j["epsilon_zero_out"]))
            self.assertLessEqual(j[key], j["epsilon"])
            self.assertLessEqual(j["epsilon"], 2.0)
            self.assertGreater(j[key], 2.0 * (1 - 1e-5))
        self.assertLess(pld["sigma"], 0.97 * rdp["sigma"])  # the same target, less noise
        # The guarantee is reproduced by `dpsosp privacy` from the reported figures.
        p = dpsosp("privacy", "--noise-multiplier", repr(pld["noise_multiplier"]), "--sampling-rate",
                   repr(pld["params"]["sampling_rate"]), "--steps", str(int(pld["params"]["planned_steps"])),
                   "--delta", "1e-5", "--accountant", "pld", "--prior-mu", repr(pld["curve"]["prior_mu"]))
        self.assertEqual(json.loads(p.stdout)["epsilon"], pld["epsilon_pld"])
        # Under PLD the G/M estimate is shared (its counts the prior, the run keeps its records); under RDP
        # it takes records of its own.
        self.assertTrue(pld["estimate"]["shared"])
        self.assertFalse(rdp["estimate"]["shared"])
        self.assertGreater(pld["curve"]["prior_mu"], 0)

    def test_demo_runs_and_reports(self):
        r = dpsosp("demo")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("SOSP gap", r.stdout)
        self.assertIn("-DP", r.stdout)

    def test_eval_reports_accuracy_and_certificate_can_be_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, test = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
            import random
            rnd = random.Random(1)
            for path, n in [(train, 4000), (test, 500)]:
                with open(path, "w") as f:
                    for _ in range(n):
                        a, b = rnd.gauss(0, 1), rnd.gauss(0, 1)
                        f.write("%d,%.6f,%.6f\n" % (1 if a + 0.5 * b > 0 else 0, a, b))
            common = ["run", "--model", "logistic", "--data", train, "--eval", test, "--algo", "dpsgd",
                      "--epsilon", "2", "--seed", "1", "--batch-size", "100", *KEY]
            r = dpsosp(*common)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            # Metrics and the certificate on --eval data are diagnostics.
            self.assertNotIn("eval", j)
            self.assertNotIn("certificate", j)
            d = j["diagnostics"]
            self.assertEqual(d["eval"]["n"], 500)
            self.assertGreater(d["eval"]["accuracy"], 0.8)
            self.assertEqual(d["certificate_source"], "evaluation data")
            self.assertTrue(d["certificate"]["lambda_converged"])
            self.assertGreaterEqual(d["certificate"]["lambda_min"], -1e-9)  # convex loss
            r = dpsosp(*common, "--no-certificate")
            self.assertEqual(r.returncode, 0, r.stderr)
            j2 = json.loads(r.stdout)
            self.assertNotIn("certificate", j2["diagnostics"])
            self.assertEqual(j2["x"], j["x"])

    def test_every_subcommand_has_help(self):
        for cmd in ["run", "certify", "privacy", "demo", "audit", "keygen"]:
            r = dpsosp(cmd, "--help")
            self.assertEqual(r.returncode, 0)
            self.assertIn("--", r.stdout)


if __name__ == "__main__":
    unittest.main()
