"""`dpsosp predict` and --fit-intercept: a released point used as a model."""
import json
import os
import random
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY = ["--noise-key-file", os.path.join(DATA, "noise.key")]


def dpsosp(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def shifted(path, n=20000, seed=1, labels=True):
    """label = [a_0 > 1]: a boundary a model without a bias cannot draw."""
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            a = [rnd.gauss(0, 1), rnd.gauss(0, 1)]
            f.write(",".join(str(v) for v in ([float(a[0] > 1)] if labels else []) + a) + "\n")


class Predict(unittest.TestCase):
    def test_predict_reproduces_the_reports_accuracy(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, out = os.path.join(tmp, "train.csv"), os.path.join(tmp, "r.json")
            shifted(train)
            accuracy = {}
            for bias in (["--no-fit-intercept"], ["--fit-intercept"]):
                r = dpsosp("run", "--model", "logistic", "--data", train, "--eval", train, "--epsilon", "2",
                           "--seed", "3", *KEY, "--no-certificate", "--out", out, *bias)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    report = json.load(f)
                self.assertEqual(report["shape"]["fit_intercept"], bias == ["--fit-intercept"])
                self.assertEqual(report["d"], 3 if bias == ["--fit-intercept"] else 2)
                p = dpsosp("predict", "--point", out, "--data", train)
                self.assertEqual(p.returncode, 0, p.stderr)
                lines = p.stdout.splitlines()
                self.assertEqual(lines[0], "prediction")
                self.assertEqual(len(lines), 20001)
                with open(train) as f:
                    labels = [float(line.split(",")[0]) for line in f]
                right = sum(float(a) == b for a, b in zip(lines[1:], labels))
                self.assertAlmostEqual(right / 20000, report["diagnostics"]["eval"]["accuracy"], places=12)
                self.assertIn("dpsosp: accuracy %.6f on 20000 records" % (right / 20000), p.stderr)
                accuracy[bias == ["--fit-intercept"]] = right / 20000
            # The bias is what lets the boundary move off the origin.
            self.assertGreater(accuracy[True], 0.95)
            self.assertLess(accuracy[False], 0.9)

    def test_features_only_and_probabilities(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, features, out = (os.path.join(tmp, f) for f in ("t.csv", "x.csv", "r.json"))
            shifted(train, n=5000)
            shifted(features, n=5000, labels=False)
            r = dpsosp("run", "--model", "logistic", "--data", train, "--fit-intercept", "--seed", "3", *KEY,
                       "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with_labels = dpsosp("predict", "--point", out, "--data", train).stdout
            p = dpsosp("predict", "--point", out, "--data", features, "--no-labels", "--proba")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], "prediction,p0,p1")
            for line, plain in zip(lines[1:], with_labels.splitlines()[1:]):
                cls, p0, p1 = line.split(",")
                self.assertEqual(cls, plain)
                self.assertAlmostEqual(float(p0) + float(p1), 1.0, places=14)
                self.assertEqual(cls, "1" if float(p1) > 0.5 else "0")

    def test_bad_uses_are_one_line_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, point = os.path.join(tmp, "t.csv"), os.path.join(tmp, "p.csv")
            shifted(train, n=500)
            with open(point, "w") as f:
                f.write("1,2\n")
            r = dpsosp("predict", "--point", point, "--data", train)
            self.assertEqual(r.returncode, 1)
            self.assertIn("no \"model\" and \"shape\"", r.stderr)
            r = dpsosp("run", "--synthetic", "pca:n=1000,d=4", "--fit-intercept")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr.strip(), "dpsosp: error: --fit-intercept: pca has no intercept (center the data "
                                               "instead)")
            out = os.path.join(tmp, "r.json")
            dpsosp("run", "--model", "cauchy", "--data", train, "--seed", "1", "--out", out)
            r = dpsosp("predict", "--point", out, "--data", train, "--proba")
            self.assertIn("--proba: cauchy is not a classifier", r.stderr)
            r = dpsosp("predict", "--point", out, "--data", train)
            self.assertIn("dpsosp: mean squared error", r.stderr)


if __name__ == "__main__":
    unittest.main()
