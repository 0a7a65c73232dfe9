"""The report of `dpsosp run` against docs/report.schema.json and docs/report.md: every
algorithm's report validates, and every key a report holds is documented."""
import json
import os
import random
import re
import subprocess
import tempfile
import unittest

try:
    import jsonschema
except ImportError:  # python3-jsonschema (scripts/install-deps.sh)
    jsonschema = None

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
KEY = ["--noise-key-file", os.path.join(DATA, "noise.key")]

# One report per kind of run: every algorithm and mechanism, Poisson with both
# accountants, secure noise, the estimate, eval metrics and the certificate on
# data and on a known population, a trajectory, --release-only, --no-certificate.
RUNS = {
    "mf": ["--eval", "{data}"],
    "tree": ["--algo", "spider-tree-adaptive", "--alpha-scale", "3", "--G", "1", "--M", "1"],
    "gauss": ["--algo", "spider-gauss-fixed", "--alpha-scale", "3"],
    "periodic": ["--algo", "spider-tree-periodic", "--alpha-scale", "3"],
    "dpsgd": ["--algo", "dpsgd"],
    "poisson": ["--algo", "dpsgd", "--epochs", "1", "--G", "1", "--M", "1"],
    "poisson-rdp": ["--algo", "dpsgd", "--epochs", "1", "--accountant", "rdp", "--G", "1", "--M", "1"],
    "mf-poisson": ["--epochs", "3", "--G", "1", "--M", "1"],
    "mf-poisson-rdp": ["--epochs", "2.5", "--bands", "2", "--accountant", "rdp", "--adjacency", "zero-out", "--G", "1",
                       "--M", "1"],
    "mf-order": ["--epochs", "2", "--sampling", "order", "--G", "1", "--M", "1"],
    "secure": ["--noise", "secure"],
    "sgd": ["--algo", "sgd", "--trajectory", "--max-steps", "3"],
    "spider": ["--algo", "spider"],
    "release-only": ["--release-only"],
    "no-certificate": ["--eval", "{data}", "--no-certificate"],
    "population": ["--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--x0", "saddle"],
}


def dpsosp(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def key_paths(report):
    """Every key of a report: top-level ones, and dotted ones inside its objects."""
    paths = set()

    def walk(obj, prefix):
        for key, value in obj.items():
            paths.add(prefix + key)
            if isinstance(value, dict):
                walk(value, prefix + key + ".")
    walk(report, "")
    return paths


@unittest.skipIf(jsonschema is None, "python3-jsonschema not installed")
class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(DOCS, "report.schema.json")) as f:
            cls.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(cls.schema)
        cls.validator = jsonschema.Draft202012Validator(cls.schema)
        with open(os.path.join(DOCS, "report.md")) as f:
            cls.doc = f.read()
        cls.reports = {}
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "d.csv")
            rnd = random.Random(4)
            with open(data, "w") as f:
                for _ in range(3000):
                    a = [rnd.gauss(0, 0.5) for _ in range(3)]
                    f.write(",".join(str(v) for v in [float(a[0] > 0), *a]) + "\n")
            for name, extra in RUNS.items():
                source = [] if "--synthetic" in extra else ["--model", "logistic", "--data", data]
                out = os.path.join(tmp, name + ".json")
                key = [] if name in ("sgd", "spider") else KEY  # non-private runs take no key
                r = dpsosp("run", *source, *[e.format(data=data) for e in extra], "--seed", "1", *key, "--out", out)
                assert r.returncode == 0, (name, r.stderr)
                with open(out) as f:
                    cls.reports[name] = json.load(f)

    def test_every_report_validates(self):
        for name, report in self.reports.items():
            errors = [e.message for e in self.validator.iter_errors(report)]
            self.assertEqual(errors, [], name)
        self.assertIn("diagnostics", self.reports["mf"])
        self.assertIn("certificate", self.reports["mf"]["diagnostics"])
        self.assertEqual(len(self.reports["mf"]["diagnostics"]["outside_box"]["features"]), 3)  # a scaled CSV
        self.assertIn("certificate", self.reports["population"])
        self.assertIn("estimate", self.reports["mf"])

    def test_the_schema_can_fail(self):
        report = dict(self.reports["dpsgd"])
        report["steps"] = "10"
        self.assertFalse(self.validator.is_valid(report))
        del report["steps"]
        self.assertFalse(self.validator.is_valid(report))
        report = dict(self.reports["dpsgd"], future_key={"any": 1})  # others may add keys
        self.assertTrue(self.validator.is_valid(report))

    def test_every_key_is_documented(self):
        documented = set(re.findall(r"`([A-Za-z0-9_.]+)`", self.doc))
        for name, report in self.reports.items():
            for path in key_paths(report):
                leaf = path.split(".")[-1]
                # Nested keys are documented under their object (`diagnostics.clipped`, `shape`'s `features`).
                self.assertTrue(path in documented or leaf in documented, f"{name}: {path} not in docs/report.md")
        for key in self.schema["properties"]:
            self.assertIn(key, documented, "a schema key docs/report.md does not describe")

    def test_exit_statuses_are_in_help(self):
        r = dpsosp("--help")
        self.assertEqual(r.returncode, 0)
        for words in ("Exit status", "0 success", "1 bad input", "2 a command line", "128 + N"):
            self.assertIn(words, r.stdout)


if __name__ == "__main__":
    unittest.main()
