"""`dpsosp audit` with the canaries, neighbours and tamperings of docs/privacy.md:
the JSON it prints, and that each broken variant is caught from the CLI. The
library's statistical tests are in tests/audit_test.cpp; the cases here are
exact (a replay that matches or not, a run that fails or not) or far from the
claim, so few runs do.
"""
import json
import os
import subprocess
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")


def audit(*args):
    p = subprocess.run([BIN, "audit", "--seed", "20241008", "--threads", "2", *args], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise AssertionError("dpsosp audit %s failed: %s" % (" ".join(args), p.stderr))
    return json.loads(p.stdout)


class AuditCli(unittest.TestCase):
    def test_report_names_canary_neighbours_score_and_failures(self):
        j = audit("--runs", "100")
        for key in ["algo", "tampering", "canary", "adjacency", "claimed_epsilon", "reported_epsilon",
                    "epsilon_lower_bound", "violation", "empirical_mu", "test", "scores", "failures", "runs", "n",
                    "steps", "epochs"]:
            self.assertIn(key, j)
        self.assertEqual(j["canary"], "linear")
        self.assertEqual(j["adjacency"], "replace-one")
        self.assertIn(j["test"]["score"], j["scores"])
        for key in ["score", "threshold", "positive", "if", "canary_if", "measure_runs", "true_positives",
                    "false_positives", "tpr_lower", "fpr_upper"]:
            self.assertIn(key, j["test"])
        self.assertIn("trajectory", j["scores"])
        self.assertIn("x", j["scores"])
        self.assertEqual(j["failures"], {"without_canary": 0, "with_canary": 0, "first": ""})

    def test_published_key_is_caught_by_replay(self):
        j = audit("--tamper", "published-key", "--runs", "100")
        self.assertEqual(j["test"]["score"], "replay")
        self.assertTrue(j["violation"])
        self.assertEqual(j["reported_epsilon"], j["claimed_epsilon"])

    def test_unclipped_o2_is_caught(self):
        j = audit("--canary", "quadratic-o2", "--tamper", "unclipped-o2", "--runs", "2000")
        self.assertEqual(j["steps"], 2)
        self.assertTrue(j["violation"], j)
        self.assertGreater(j["reported_epsilon"], j["claimed_epsilon"])

    def test_matrix_factorization_tamperings_are_caught(self):
        # spider-mf-adaptive's consistent O2 (quadratic-o2) with its clip raised,
        # and the key published over ten factorized steps: both far from the claim.
        j = audit("--algo", "spider-mf-adaptive", "--canary", "quadratic-o2", "--tamper", "unclipped-o2",
                  "--runs", "2000")
        self.assertEqual(j["algo"], "spider-mf-adaptive")
        self.assertEqual(j["steps"], 2)
        self.assertTrue(j["violation"], j)
        j = audit("--algo", "spider-mf-adaptive", "--steps", "10", "--tamper", "published-key", "--runs", "100")
        self.assertEqual(j["n"], 160)
        self.assertEqual(j["test"]["score"], "replay")
        self.assertTrue(j["violation"])

    def test_matrix_factorization_passes_use_replace_one_neighbours(self):
        j = audit("--algo", "spider-mf-adaptive", "--epochs", "3", "--sampling", "order", "--steps", "4", "--runs",
                  "100")
        self.assertEqual(j["adjacency"], "replace-one")
        self.assertEqual(j["n"], 64)
        self.assertEqual(j["epochs"], 3)
        self.assertEqual(j["sampling"], "order")
        self.assertFalse(j["violation"])

    def test_poisson_passes_use_zero_out_neighbours_and_noise_div_10_is_caught(self):
        j = audit("--algo", "spider-mf-adaptive", "--epochs", "3", "--runs", "100")
        self.assertEqual(j["adjacency"], "zero-out")
        self.assertEqual(j["n"], 160)
        self.assertFalse(j["violation"])
        j = audit("--algo", "spider-mf-adaptive", "--epochs", "3", "--bands", "2", "--tamper", "noise-div-10",
                  "--runs", "400")
        self.assertTrue(j["violation"])

    def test_a_run_that_fails_is_an_outcome_not_an_abort(self):
        j = audit("--canary", "extreme", "--tamper", "extreme-fails", "--runs", "100")
        self.assertEqual(j["failures"]["without_canary"], 100)
        self.assertEqual(j["failures"]["with_canary"], 0)
        self.assertIn("overflowed", j["failures"]["first"])
        self.assertTrue(j["violation"])

    def test_extreme_record_ends_normally(self):
        j = audit("--canary", "extreme", "--algo", "dpsgd", "--runs", "200")
        self.assertEqual(j["failures"]["without_canary"], 0)
        self.assertFalse(j["violation"])

    def test_a_factor_of_two_is_flagged_by_the_mu_bound(self):
        # Default runs (2 x 2000): mu 0.52 against the claim 0.268, its lower bound 0.44.
        j = audit("--tamper", "sensitivity-half")
        self.assertTrue(j["violation"], j)
        self.assertIn("mu", j["violation_by"].split("+"))
        self.assertGreater(j["mu_lower_bound"], j["claimed_mu"])
        self.assertLess(j["epsilon_lower_bound"], j["claimed_epsilon"])  # the epsilon bound alone misses it
        self.assertAlmostEqual(j["false_alarm"], 0.06)
        self.assertNotIn("tradeoff", j)

    def test_poisson_rate_half_is_flagged_against_the_pld_curve(self):
        j = audit("--algo", "dpsgd", "--epochs", "1", "--tamper", "rate-half", "--runs", "400")
        self.assertTrue(j["violation"], j)
        self.assertEqual(j["violation_by"], "trade-off")
        t = j["tradeoff"]
        for key in ["canaries", "samples", "threshold", "true_positives", "false_positives", "tpr_lower", "fpr_upper",
                    "claimed_tpr_max", "sampling_rate", "noise_multiplier", "steps"]:
            self.assertIn(key, t)
        self.assertEqual(t["canaries"], 64)
        self.assertEqual(t["samples"], 64 * 200)
        self.assertAlmostEqual(t["sampling_rate"], 0.05)  # the claim's, half the true 0.1
        self.assertGreater(t["tpr_lower"], t["claimed_tpr_max"])
        self.assertEqual(j["d"], 64)

    def test_secure_noise_halved_is_flagged(self):
        j = audit("--algo", "dpsgd", "--noise", "secure", "--tamper", "noise-half", "--runs", "1000")
        self.assertEqual(j["noise"], "secure")
        self.assertTrue(j["violation"], j)
        self.assertIn("mu", j["violation_by"].split("+"))

    def test_bad_options_are_refused_in_one_line(self):
        for args, needle in [(["--noise", "exact"], "--noise"), (["--tamper", "rate-half"], "rate-half"),
                             (["--tamper", "depth-understated"], "depth-understated"),
                             (["--canaries", "8"], "canaries"), (["--test-level", "2"], "--test-level")]:
            p = subprocess.run([BIN, "audit", "--runs", "10", *args], capture_output=True, text=True, timeout=60)
            self.assertNotEqual(p.returncode, 0, args)
            self.assertIn(needle, p.stderr, args)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_poisson_dpsgd_uses_zero_out_neighbours(self):
        j = audit("--algo", "dpsgd", "--epochs", "1", "--runs", "100")
        self.assertEqual(j["adjacency"], "zero-out")
        self.assertEqual(j["n"], 160)
        self.assertEqual(j["steps"], 10)
        self.assertFalse(j["violation"])


if __name__ == "__main__":
    unittest.main()
