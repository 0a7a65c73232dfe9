"""Edges a user hits with `dpsosp run`: stdin, --header on a headerless file,
small data (defaults that fit, warnings, a run that cannot take a step)."""
import json
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY = ["--noise-key-file", os.path.join(DATA, "noise.key")]
# Given constants: no private estimate of G and M taking records first.
CONSTANTS = ["--G", "1", "--M", "1"]


def dpsosp(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, input=stdin)


def records(n, d=3):
    """n labelled CSV records: label, then d features (deterministic)."""
    lines = []
    for i in range(n):
        features = [((i * 7 + 3 * j) % 11 - 5) / 5 for j in range(d)]
        lines.append(",".join(str(v) for v in [float(features[0] > 0), *features]))
    return "\n".join(lines) + "\n"


class Edges(unittest.TestCase):
    def test_data_from_stdin_needs_a_format(self):
        text = records(500)
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--seed", "1", *KEY, stdin=text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["n"], 500)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.csv")
            with open(path, "w") as f:
                f.write(text)
            same = dpsosp("run", "--model", "logistic", "--data", path, "--seed", "1", *KEY)
        self.assertEqual(json.loads(same.stdout)["x"], json.loads(r.stdout)["x"])
        r = dpsosp("run", "--model", "logistic", "--data", "-", stdin=text)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), "dpsosp: error: --format: required when the records come from stdin "
                                           "(- has no name to guess the format from)")
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", stdin="1,2\nx,3\n")
        # A label is refused naming no record: no line, no value (SPEC section 9).
        self.assertEqual(r.stderr, "dpsosp: error: CSV file (stdin): a label in column 0 (0-based) is not a finite "
                                   "number; named classes must be declared (--classes a,b,c), every label then one "
                                   "of them; the labels were read from column 0 (the first column, the default): "
                                   "--label INDEX (0-based) reads them from another column\n")

    def test_header_on_a_file_without_one_is_refused(self):
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--header", stdin=records(50))
        self.assertEqual(r.returncode, 1)
        self.assertIn("line 1: a header line was expected (--header), but the first line is all numbers", r.stderr)
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--header", *KEY,
                   stdin="label,a,b,c\n" + records(500))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["n"], 500)

    def test_small_data_get_a_batch_that_fits_and_a_warning(self):
        # 124 records: dpsgd's default batch is 12 (n/10), not 256.
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--algo", "dpsgd", *KEY,
                   *CONSTANTS, stdin=records(124))
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["params"]["batch_size"], 12)
        self.assertEqual(j["steps"], 10)
        self.assertEqual(j["warnings"], [])
        self.assertNotIn("warning", r.stderr)
        # A batch of 100 of 124 records: one step.
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--algo", "dpsgd",
                   "--batch-size", "100", *KEY, *CONSTANTS, stdin=records(124))
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = json.loads(r.stdout)["warnings"]
        self.assertEqual(len(warnings), 1)
        self.assertIn("dpsgd took 1 step, fewer than 10", warnings[0])
        self.assertIn("dpsosp: warning: " + warnings[0], r.stderr)

    def test_too_few_records_for_one_batch_is_an_error(self):
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--epsilon", "0.01",
                   "--algo", "spider-tree-adaptive", *CONSTANTS, stdin=records(5))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertIn("cannot fill one O1 batch", r.stderr)
        r = dpsosp("run", "--model", "logistic", "--data", "-", "--format", "csv", "--algo", "dpsgd",
                   "--batch-size", "6", *CONSTANTS, stdin=records(5))
        self.assertEqual(r.returncode, 1)
        self.assertIn("--batch-size = 6: more than the 5 records", r.stderr)


if __name__ == "__main__":
    unittest.main()
