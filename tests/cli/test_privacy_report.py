"""What a private run publishes (SPEC section 8), read as an attacker reads it:
the whole JSON report, for two datasets that differ in one record.

Regression tests for the four findings of the privacy-soundness issue, each of
which the main of 2026-11 failed: (1) the seed keyed the noise, (2) one extreme
record made the run fail, (3) exact clipped counts and timings sat beside the
release, (4) the printed epsilon was recomputed from the phases that ran.
"""
import json
import math
import os
import random
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY_FILE = os.path.join(DATA, "noise.key")

# Each private algorithm with options that suit 3000 records (a larger alpha
# keeps the SPIDER family's O1 batch within n).
PRIVATE = [("spider-tree-adaptive", ["--alpha-scale", "3"]), ("spider-gauss-fixed", ["--alpha-scale", "3"]),
           ("spider-tree-periodic", ["--alpha-scale", "3"]), ("dpsgd", ["--batch-size", "50"]),
           ("dpsgd", ["--batch-size", "50", "--epochs", "2"]), ("spider-mf-adaptive", []),
           ("spider-mf-adaptive", ["--epochs", "3", "--sampling", "order"]),
           ("spider-mf-adaptive", ["--epochs", "3", "--bands", "4", "--adjacency", "zero-out"])]
# The same runs, the Poisson-sampled ones calibrated by RDP: where only the optimizer's
# arithmetic on the records is under test (the accountant reads public sizes alone,
# SPEC section 9), an RDP calibration costs a fifth of a PLD one (0.1 s against
# 0.6 s of CPU, 28 of the extreme-record test's 112 runs). The PLD calibration is
# checked by the epsilon and the neighbouring-dataset tests below.
PRIVATE_RDP = [(algo, extra + ["--accountant", "rdp"] if "--epochs" in extra and "order" not in extra else extra)
               for algo, extra in PRIVATE]
MODELS = {"logistic": "binary", "sigmoid": "binary", "cauchy": "real", "phase-retrieval": "real", "pca": "none",
          "softmax": "classes", "mlp": "classes"}

# Every top-level key a run report may have. A new key must be added here, and
# to RELEASED if it is computed from the released iterates: the attack-surface
# test then holds it to that.
KNOWN = {"x", "algo", "private", "guarantee", "epsilon", "delta", "mu", "sigma", "sensitivity", "noise_multiplier",
         "epsilon_rdp", "epsilon_pld", "epsilon_replace_one", "epsilon_zero_out", "zcdp_rho", "depth", "mechanism", "accounting", "adjacency", "seed", "noise_key",
         "samples_used",
         "gradient_evaluations", "steps", "o1_calls", "perturbations", "phase_lengths", "params", "termination",
         "interrupted", "trajectory", "caveats", "model", "n", "d", "target", "constants", "certificate",
         "certificate_source", "certificate_error", "certificate_skipped", "diagnostics", "noise", "grid",
         "horizon", "column_norm", "buffers", "bands", "sampling_rate", "cycles", "estimate", "sample_order", "processes", "streamed", "warnings",
         "shape", "scaling", "curve",
         # the table's declared rule (public: --classes names, --label, --categorical, --impute)
         "class_names", "label", "categorical", "impute"}
# The released iterates and what is computed from them (with public sizes):
# covered by the guarantee, so they may differ between neighbouring datasets.
RELEASED = {"x", "trajectory", "steps", "o1_calls", "perturbations", "samples_used", "gradient_evaluations",
            "phase_lengths", "termination", "certificate", "estimate", "warnings",
            # the private box of the records (include/dpsosp/scaling.hpp), covered by the guarantee
            "scaling"}


def dpsosp(*args, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def write_csv(path, model, n=3000, p=3, extreme=None, at=None, seed=3, mislabel=False):
    """n records of p features; record `at` has every feature equal to `extreme`
    (and, with mislabel, the label the others' rule would not give it)."""
    rnd = random.Random(seed)
    kind = MODELS[model]
    with open(path, "w") as f:
        for i in range(n):
            feats = [rnd.gauss(0, 1) for _ in range(p)]
            if extreme is not None and i == at:
                feats = [extreme] * p
            label = {"binary": [1 if feats[0] > 0 else 0], "real": [rnd.gauss(0, 1)],
                     "classes": [rnd.randrange(3)], "none": []}[kind]
            if mislabel and i == at:
                label = [1 - label[0]]
            f.write(",".join(repr(float(v)) for v in label + feats) + "\n")


def run_json(*args):
    r = dpsosp(*args)
    if r.returncode != 0:
        raise AssertionError("dpsosp %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return json.loads(r.stdout)


class PrivateReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def csv(self, name, model, **kw):
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            write_csv(path, model, **kw)
        return path

    # Finding 1: the seed keyed all privacy noise, and every report carries it.
    def test_the_seed_does_not_key_the_noise_and_no_key_is_written(self):
        common = ["run", "--synthetic", "phase-retrieval:n=60000,d=8,seed=2", "--x0", "saddle", "--epsilon", "2",
                  "--G", "6", "--M", "20", "--rho", "6", "--seed", "7"]
        a, b = run_json(*common), run_json(*common)
        self.assertEqual(a["seed"], b["seed"])
        self.assertNotEqual(a["x"], b["x"], "two runs with the same --seed and no key file gave the same noise")
        self.assertEqual(a["noise_key"], "generated")
        c = dpsosp(*common, "--noise-key-file", KEY_FILE)
        d = dpsosp(*common, "--noise-key-file", KEY_FILE, "--threads", "1")
        self.assertEqual(json.loads(c.stdout)["x"], json.loads(d.stdout)["x"])
        self.assertEqual(json.loads(c.stdout)["noise_key"], "supplied")
        with open(KEY_FILE) as f:
            key = f.read().strip()
        for text in (c.stdout, c.stderr, d.stdout):
            for piece in (key, key[:8], key[-8:], key.upper()[:8]):
                self.assertNotIn(piece, text)

    def test_a_malformed_key_file_is_refused_without_repeating_it(self):
        r = dpsosp("run", "--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--noise-key-file",
                   os.path.join(DATA, "bad", "short.key"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("32 hexadecimal digits", r.stderr)
        self.assertNotIn("0123456789", r.stderr)

    # Finding 2: a finite record whose gradient overflows made the run fail.
    def test_one_extreme_record_runs_to_a_finite_x_for_every_private_algorithm_and_model(self):
        for model in MODELS:
            for big in (1e120, 1e300):
                path = self.csv("%s-%g.csv" % (model, big), model, extreme=big, at=1500)
                for algo, extra in PRIVATE_RDP:
                    with self.subTest(model=model, big=big, algo=algo, extra=extra):
                        classes = ["--classes", "3"] if MODELS[model] == "classes" else []
                        r = dpsosp("run", "--model", model, "--data", path, "--algo", algo, "--epsilon", "2",
                                   "--seed", "1", "--no-certificate", *classes, *extra)
                        self.assertEqual(r.returncode, 0, r.stderr)
                        j = json.loads(r.stdout)
                        self.assertTrue(all(v is not None and math.isfinite(v) for v in j["x"]), j["x"])
                        self.assertIn(j["termination"], ("data-exhausted", "planned-steps"))

    # Finding 3: exact counts and timings outside diagnostics.
    def test_clipped_counts_and_timings_live_only_in_diagnostics(self):
        path = self.csv("logistic-plain.csv", "logistic")
        j = run_json("run", "--model", "logistic", "--data", path, "--algo", "dpsgd", "--batch-size", "50",
                     "--epsilon", "1", "--G", "0.5", "--seed", "1")
        for key in ("clipped", "nonfinite", "seconds", "accounting_seconds", "load_seconds"):
            self.assertNotIn(key, j)
            self.assertIn(key, j["diagnostics"])
        self.assertIn("NOT covered by the privacy guarantee", j["diagnostics"]["note"])
        self.assertGreater(j["diagnostics"]["clipped"]["total"], 0)
        bare = run_json("run", "--model", "logistic", "--data", path, "--algo", "dpsgd", "--batch-size", "50",
                        "--epsilon", "1", "--G", "0.5", "--seed", "1", "--release-only")
        self.assertNotIn("diagnostics", bare)
        self.assertTrue(set(bare) <= KNOWN - {"diagnostics"}, set(bare) - KNOWN)

    # Finding 4: the printed epsilon was an ex-post figure.
    def test_epsilon_is_the_target_for_every_private_algorithm(self):
        path = self.csv("phase-plain.csv", "phase-retrieval")
        for algo, extra in PRIVATE:
            with self.subTest(algo=algo, extra=extra):
                j = run_json("run", "--model", "phase-retrieval", "--data", path, "--algo", algo, "--epsilon", "1.5",
                             "--delta", "1e-6", "--seed", "4", "--noise-key-file", KEY_FILE,
                             "--no-certificate", *extra)
                self.assertAlmostEqual(j["epsilon"], 1.5, places=6)
                self.assertLessEqual(j["epsilon"], 1.5 + 1e-12)
                self.assertIn("fixed before the run", j["guarantee"])
                # The accountant's share of the run's time: its parameter rules, calibration and guarantee.
                d = j["diagnostics"]
                self.assertGreater(d["accounting_seconds"], 0)
                self.assertLessEqual(d["accounting_seconds"], d["seconds"])
                if j["accounting"] == "gdp-tree":
                    # Recomputed for the longest phase the run may have, not the phases that ran.
                    L = int(j["params"]["max_phase_length"] if algo == "spider-tree-adaptive" else j["params"]["q"])
                    p = run_json("privacy", "--noise-multiplier", repr(j["noise_multiplier"]), "--steps", str(L),
                                 "--delta", "1e-6")
                    self.assertAlmostEqual(p["epsilon_gdp"], j["epsilon"], places=12)
                if j["accounting"] == "gdp-mf":
                    # The factorization over the horizon fixed before the run.
                    # With passes, every record in the releases a pass apart.
                    passes = ["--period", str(int(j["params"]["steps_per_epoch"]))] if "--epochs" in extra else []
                    p = run_json("privacy", "--mechanism", "mf", "--noise-multiplier", repr(j["noise_multiplier"]),
                                 "--steps", str(j["horizon"]), "--delta", "1e-6", *passes)
                    self.assertAlmostEqual(p["epsilon_gdp"], j["epsilon"], places=12)
                    self.assertEqual(p["column_norm"], j["column_norm"])
                if j["accounting"] == "pld-banded-mf":
                    # The cycles' Poisson-subsampled Gaussian: the Poisson form reproduces it (replace-one, the
                    # default single pass: dp_accounting's convention z = sigma / 2C), after the shared G/M
                    # estimate's counts (curve.prior_mu, the run's own records).
                    replace = j["adjacency"] == "replace-one"
                    z = j["noise_multiplier"] / 2 if replace else j["noise_multiplier"]
                    self.assertTrue(j["estimate"]["shared"])
                    self.assertGreater(j["curve"]["prior_mu"], 0)
                    p = run_json("privacy", "--noise-multiplier", repr(z), "--sampling-rate",
                                 repr(j["sampling_rate"]), "--steps", str(j["cycles"]), "--delta", "1e-6",
                                 "--prior-mu", repr(j["curve"]["prior_mu"]),
                                 *(["--adjacency", "replace-one", "--accountant", "pld"] if replace else []))
                    self.assertAlmostEqual(p["epsilon_pld"] if not replace else p["epsilon"], j["epsilon_pld"],
                                           places=12)
                    self.assertLessEqual(j["epsilon_pld"], j["epsilon"])
                    self.assertEqual(j["horizon"], j["bands"] * j["cycles"])
                if algo == "spider-mf-adaptive" and not extra:  # the default single pass: Poisson, replace-one
                    self.assertEqual((j["accounting"], j["adjacency"]), ("pld-banded-mf", "replace-one"))
                    self.assertIsNone(j["gradient_evaluations"])
                elif "--epochs" in extra and j["accounting"] in ("pld-poisson", "pld-banded-mf"):
                    self.assertEqual(j["adjacency"], "zero-out")
                    self.assertIsNone(j["gradient_evaluations"])  # the batch sizes are secret
                else:
                    self.assertEqual(j["adjacency"], "replace-one")

    # SPEC section 9: every report names its relation and gives the guarantee
    # under both, each reproduced by `dpsosp privacy` (G and M given: no
    # estimate, whose counts are target-eps under both relations).
    def test_the_guarantee_under_both_relations_is_reproduced(self):
        path = self.csv("phase-plain.csv", "phase-retrieval")
        cases = [("spider-mf-adaptive", []), ("spider-mf-adaptive", ["--sampling", "order"]),
                 ("dpsgd", ["--batch-size", "50", "--epochs", "2"]),
                 ("spider-mf-adaptive", ["--epochs", "3", "--bands", "4"]), ("spider-tree-adaptive", ["--alpha-scale", "3"]),
                 # Opacus's relation named for the default run and its single pass: the same Poisson passes
                 ("spider-mf-adaptive", ["--adjacency", "zero-out"]),
                 ("spider-mf-adaptive", ["--epochs", "1", "--adjacency", "zero-out"])]
        for algo, extra in cases:
            with self.subTest(algo=algo, extra=extra):
                j = run_json("run", "--model", "phase-retrieval", "--data", path, "--algo", algo, "--epsilon", "1",
                             "--delta", "1e-6", "--G", "1", "--M", "1", "--seed", "4", "--noise-key-file", KEY_FILE,
                             "--no-certificate", *extra)
                z = repr(j["noise_multiplier"])
                if j["adjacency"] == "zero-out":
                    self.assertEqual(j["epsilon_zero_out"], j["epsilon"])
                    self.assertAlmostEqual(j["epsilon"], 1.0, places=5)
                    q = j["sampling_rate"] if "sampling_rate" in j else j["params"]["sampling_rate"]
                    steps = j["cycles"] if "cycles" in j else int(j["params"]["planned_steps"])
                    # dp_accounting's replace-one convention: z = sigma / 2C.
                    p = run_json("privacy", "--noise-multiplier", repr(j["noise_multiplier"] / 2), "--sampling-rate",
                                 repr(q), "--steps", str(steps), "--delta", "1e-6", "--adjacency", "replace-one",
                                 "--accountant", "pld")
                    self.assertEqual(p["adjacency"], "replace-one")
                    self.assertAlmostEqual(p["epsilon"], j["epsilon_replace_one"], places=12)
                    self.assertGreater(j["epsilon_replace_one"], 1.2)  # eps 1 zero-out is not eps 1 replace-one
                    self.assertIn("replace-one: epsilon", j["guarantee"])
                elif j["accounting"] == "pld-banded-mf":  # the default single pass: Poisson at a replace-one target
                    self.assertEqual(j["adjacency"], "replace-one")
                    self.assertEqual(j["epsilon_replace_one"], j["epsilon"])
                    poisson = ["--sampling-rate", repr(j["sampling_rate"]), "--steps", str(j["cycles"]), "--delta",
                               "1e-6"]
                    p = run_json("privacy", "--noise-multiplier", repr(j["noise_multiplier"] / 2), *poisson,
                                 "--adjacency", "replace-one", "--accountant", "pld")
                    self.assertAlmostEqual(p["epsilon"], j["epsilon"], places=12)
                    p = run_json("privacy", "--noise-multiplier", z, *poisson)
                    self.assertAlmostEqual(p["epsilon_pld"], j["epsilon_zero_out"], places=12)
                    self.assertLess(j["epsilon_zero_out"], 0.8 * j["epsilon"])
                    self.assertIn("zero-out: epsilon", j["guarantee"])
                    self.assertIsNone(j["epsilon_rdp"])  # RDP has no replace-one form here
                else:
                    self.assertEqual(j["adjacency"], "replace-one")
                    self.assertEqual(j["epsilon_replace_one"], j["epsilon"])
                    form = (["--mechanism", "mf", "--steps", str(j["horizon"])] if j["accounting"] == "gdp-mf" else
                            ["--steps", str(int(j["params"]["max_phase_length"])), "--accountant", "gdp"])
                    p = run_json("privacy", "--noise-multiplier", z, "--delta", "1e-6", "--adjacency", "zero-out", *form)
                    self.assertEqual(p["adjacency"], "zero-out")
                    self.assertAlmostEqual(p["epsilon_gdp"], j["epsilon_zero_out"], places=12)
                    self.assertLess(j["epsilon_zero_out"], 0.6 * j["epsilon"])
                    self.assertIn("zero-out: epsilon", j["guarantee"])

    # A raw table at the defaults: the private scale's Gaussian (scaling.estimate.mu) composed into the
    # Poisson pass's PLD, the whole the target; `dpsosp privacy --prior-mu` reproduces it, and without the
    # prior the run's own steps stay well under the target.
    def test_a_scaled_poisson_run_is_reproduced_with_its_prior(self):
        path = self.csv("scaled-logistic.csv", "logistic")
        j = run_json("run", "--model", "logistic", "--data", path, "--epsilon", "1", "--delta", "1e-6",
                     "--seed", "4", "--noise-key-file", KEY_FILE, "--no-certificate")
        est = j["scaling"]["estimate"]
        self.assertEqual(est["composition"], "pld")
        self.assertEqual(j["adjacency"], "replace-one")
        self.assertLessEqual(j["epsilon"], 1.0 + 1e-9)
        poisson = ["--noise-multiplier", repr(j["noise_multiplier"] / 2), "--sampling-rate", repr(j["sampling_rate"]),
                   "--steps", str(j["cycles"]), "--delta", "1e-6", "--adjacency", "replace-one"]
        # The prior: the scale's histograms and the shared G/M estimate's counts, Gaussian both.
        self.assertTrue(j["estimate"]["shared"])
        self.assertAlmostEqual(j["curve"]["prior_mu"], math.hypot(est["mu"], j["estimate"]["mu"]), places=14)
        p = run_json("privacy", *poisson, "--prior-mu", repr(j["curve"]["prior_mu"]))
        self.assertAlmostEqual(p["epsilon_pld"], j["epsilon"], delta=1e-6)
        self.assertGreater(p["epsilon_pld"], 0.999)
        self.assertLess(run_json("privacy", *poisson)["epsilon_pld"], 0.95)
        r = dpsosp("privacy", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-6", "--prior-mu", "0.1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--prior-mu: applies to the Poisson form", r.stderr)

    # The whole report as the attack surface: datasets D and D' differ in one
    # record (norm 100 against clip G = 5, which the other records' gradients
    # rarely reach); the same seed and key file fix the noise. Only the released iterates (and what is computed from them) may
    # differ; every other field must be equal, and each must be a known key.
    def test_only_released_fields_differ_between_neighbouring_datasets(self):
        d0 = self.csv("neighbour-0.csv", "logistic")
        d1 = self.csv("neighbour-1.csv", "logistic", extreme=100.0 / math.sqrt(3), at=1234, mislabel=True)
        # --scale none: the records as they are (the extreme one is clipped as a gradient); auto (the
        # default): the private box of the records, a released field, clips it into the box first.
        for (algo, extra), scale in [(p, s) for p in PRIVATE for s in ("none", "auto")]:
            with self.subTest(algo=algo, extra=extra, scale=scale):
                common = ["--model", "logistic", "--algo", algo, "--epsilon", "2", "--G", "5", "--M", "1",
                          "--seed", "9", "--noise-key-file", KEY_FILE, "--trajectory", "--scale", scale,
                          *(["--no-fit-intercept"] if scale == "none" else []), *extra]
                a = run_json("run", "--data", d0, *common)
                b = run_json("run", "--data", d1, *common)
                self.assertEqual(set(a) - KNOWN, set(), "a report key no test classifies")
                self.assertEqual(set(a), set(b))
                for key in sorted(set(a) - RELEASED - {"diagnostics"}):
                    self.assertEqual(a[key], b[key], "%s differs between neighbouring datasets" % key)
                self.assertNotEqual(a["x"], b["x"], "the test has no power: the record changed nothing")
                # The power is real: the diagnostics (not covered) tell the datasets apart.
                if scale == "none":
                    self.assertNotEqual(a["diagnostics"]["clipped"], b["diagnostics"]["clipped"])
                else:
                    self.assertEqual(a["scaling"]["estimate"], b["scaling"]["estimate"])

    # The class count sizes x, so a private run declares it (--classes): read
    # from the labels (the largest + 1), one record labelled 3 among labels
    # 0-2 would change d. Without it both neighbours are refused in the same
    # line; with it their reports agree outside what the run releases; a label
    # outside the declared classes is refused in words that name no record.
    def test_the_class_count_is_declared_not_read_from_the_labels(self):
        d0 = self.csv("classes-0.csv", "softmax")
        with open(d0) as f:
            rows = f.read().splitlines()
        neighbours = []
        for at in (17, 2999):
            path = os.path.join(self.dir, "classes-%d.csv" % at)
            with open(path, "w") as g:
                g.write("\n".join(rows[:at] + ["3.0," + rows[at].split(",", 1)[1]] + rows[at + 1:]) + "\n")
            neighbours.append(path)
        common = ["run", "--model", "softmax", "--epsilon", "1", "--G", "1", "--M", "1", "--seed", "1",
                  "--no-certificate", "--noise-key-file", KEY_FILE]
        refused = [dpsosp(*common, "--data", d) for d in (d0, *neighbours)]
        for r in refused:
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout, "")
            self.assertEqual(r.stderr, "dpsosp: error: --classes: a private softmax run is sized by its class count, "
                             "which must be declared (public), not read from the labels: give --classes K (labels "
                             "0 .. K-1)\n")
        a, b = (run_json(*common, "--data", d, "--classes", "4") for d in (d0, neighbours[0]))
        self.assertEqual((a["d"], a["shape"]["classes"]), (4 * (3 + 1), 4))  # with the intercept
        for key in sorted(set(a) - RELEASED - {"diagnostics"}):
            self.assertEqual(a[key], b[key], "%s differs between neighbouring datasets" % key)
        self.assertFalse([c for c in a["caveats"] if "class count" in c])
        outside = [dpsosp(*common, "--data", d, "--classes", "3") for d in neighbours]
        self.assertEqual(outside[0].returncode, 1)
        self.assertEqual(outside[0].stderr, outside[1].stderr.replace("classes-2999", "classes-17"))
        self.assertIn("a record's label is not an integer in [0, 3) (the classes); which record is not said",
                      outside[0].stderr)

    # With G and M estimated privately (the default, clip_estimate.hpp), the
    # estimates and what the run computes from them (the constants, the
    # parameters, the noise per coordinate) are released values too; the
    # guarantee itself (epsilon, delta, mu, the accounting) is fixed before the
    # run and must not move.
    def test_estimated_constants_are_released_and_the_guarantee_does_not_move(self):
        d0 = self.csv("neighbour-0.csv", "logistic")
        d1 = self.csv("neighbour-1.csv", "logistic", extreme=100.0 / math.sqrt(3), at=1234, mislabel=True)
        derived = {"constants", "params", "sigma", "sensitivity", "noise_multiplier", "grid"}
        for algo, extra in PRIVATE:
            with self.subTest(algo=algo, extra=extra):
                common = ["--model", "logistic", "--algo", algo, "--epsilon", "2", "--seed", "9",
                          "--noise-key-file", KEY_FILE, *extra]
                a = run_json("run", "--data", d0, *common)
                b = run_json("run", "--data", d1, *common)
                self.assertEqual(set(a) - KNOWN, set(), "a report key no test classifies")
                self.assertIn("estimate", a)
                # 2% of 3000, at least 500 or a tenth, left to the estimate alone; a Poisson run under PLD
                # shares eight times as many with the estimate (clip_estimate.hpp)
                shared = a["accounting"].startswith("pld")
                self.assertEqual(a["estimate"]["shared"], shared)
                self.assertEqual(a["estimate"]["records"], 2400 if shared else 300)
                for key in sorted(set(a) - RELEASED - derived - {"diagnostics"}):
                    self.assertEqual(a[key], b[key], "%s differs between neighbouring datasets" % key)
                # A classifier's averaged run (spider-mf-adaptive) at a quarter of the medians, the others at them.
                f = 0.25 if algo == "spider-mf-adaptive" else 1.0
                self.assertEqual(a["constants"]["G"], f * a["estimate"]["G"])
                self.assertEqual(a["constants"]["M"], max(f * a["estimate"]["M"], f * a["estimate"]["G"]))


if __name__ == "__main__":
    unittest.main()
