"""Bad input and interrupted runs (SPEC section 7, docs/reliability.md).

Every case is a command that must fail cleanly: a non-zero exit that is not a
crash (no negative status, no 134/139), nothing on stdout, and exactly one line
on stderr that starts with "dpsosp: error:" and names the problem (a substring
asserted per case). Cases that pass --out also check that an existing results
file survives the failure unchanged and that no temporary file is left behind.
The fixtures live in tests/data/bad/.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
BAD = os.path.join(DATA, "bad")

from bad_input_cases import CASES, LOGISTIC, OK, OUT_CASES, PR, bad  # noqa: E402  (the corpus)


def read(path):
    with open(path) as f:
        return f.read()


def load_json(path):
    with open(path) as f:
        return json.load(f)


# A C++ identifier where a user's word belongs: Foo::bar, load_csv:, privacy.delta =.
CXX_NAME = re.compile(r"::|(^|[\s(])[a-z]+_[a-z_]+: |\b(privacy|options|overrides|estimate)\.[a-z_]+|RunOptions")


class BadInput(unittest.TestCase):
    def check_clean_failure(self, args, substring, name, out_dir=None):
        try:
            r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            self.fail(f"{name}: timed out")
        self.assertNotEqual(r.returncode, 0, f"{name}: exit 0\nstdout: {r.stdout[:300]}")
        self.assertGreater(r.returncode, 0, f"{name}: killed by signal {-r.returncode}\n{r.stderr[-500:]}")
        self.assertNotIn(r.returncode, (134, 139), f"{name}: crashed\n{r.stderr[-500:]}")
        self.assertEqual(r.stdout, "", f"{name}: wrote to stdout")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"{name}: stderr is not one line: {r.stderr!r}")
        self.assertTrue(lines[0].startswith("dpsosp: error: "), f"{name}: {lines[0]!r}")
        self.assertIn(substring, lines[0], f"{name}: the message does not name the problem")
        # In the user's words: no C++ names (a scope, a function's or a field's snake_case name before a colon).
        self.assertIsNone(CXX_NAME.search(lines[0][len("dpsosp: error: "):]), f"{name}: {lines[0]!r}")

    def test_corpus(self):
        self.assertGreaterEqual(len(CASES), 25)
        for name, args, substring in CASES:
            with self.subTest(name):
                self.check_clean_failure(args, substring, name)

    def test_out_is_checked_before_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            cases = [
                ("missing directory", os.path.join(tmp, "no", "such", "dir", "r.json"), "cannot create a file"),
                ("a directory", tmp, "is a directory"),
                ("empty name", "", "--out"),
            ]
            for name, out, substring in cases:
                with self.subTest(name):
                    self.check_clean_failure([*LOGISTIC, "--out", out], substring, name)
                    self.check_clean_failure(["demo", "--out", out], substring, "demo " + name)
            self.assertEqual(os.listdir(tmp), [])
            # The output may not overwrite an input.
            data = os.path.join(tmp, "data.csv")
            shutil.copy(OK, data)
            before = read(data)
            self.check_clean_failure(["run", "--model", "logistic", "--data", data, "--out", data],
                                     "same file as --data", "out is the data")
            self.assertEqual(read(data), before)

    def test_existing_results_file_survives_a_failure(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            for name, args, substring in OUT_CASES:
                with self.subTest(name):
                    with open(out, "w") as f:
                        f.write('{"x": [1, 2], "kept": true}\n')
                    self.check_clean_failure([*args, "--out", out], substring, name)
                    self.assertEqual(read(out), '{"x": [1, 2], "kept": true}\n')
                    self.assertEqual(os.listdir(tmp), ["result.json"], f"{name}: left a file behind")

    def test_out_success_replaces_the_file_whole(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            with open(out, "w") as f:
                f.write("old")
            r = subprocess.run([BIN, *LOGISTIC, "--out", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(load_json(out)["x"]), 2)
            self.assertEqual(os.listdir(tmp), ["result.json"])

    def test_valid_neighbours_of_bad_cases_still_run(self):
        # The checks above must not refuse what is allowed.
        for args in ([*LOGISTIC, "--x0", bad("x0_ok.csv")],
                     [*LOGISTIC, "--algo", "dpsgd", "--batch-size", "64", "--learning-rate", "0.5"],
                     [*LOGISTIC, "--algo", "spider-tree-periodic", "--period", "2", "--batch-size", "64"],
                     ["run", "--model", "logistic", "--data", OK, "--algo", "spider", "--batch-size", "16"],
                     ["run", "--synthetic", "pca:n=20000,d=4,rank=2", "--x0", "saddle", "--max-steps", "2"],
                     ["run", "--model", "softmax", "--data", bad("tiny-images-idx3-ubyte"), "--epsilon", "inf",
                      "--algo", "sgd", "--batch-size", "2"],
                     ["privacy", "--noise-multiplier", "2", "--steps", "+10,20", "--delta", "1e-5"]):
            r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, f"{args}: {r.stderr}")
            json.loads(r.stdout)


class InterruptedRun(unittest.TestCase):
    """SIGINT/SIGTERM during `run` writes the report so far and exits 128 + signal."""

    # About 10 s of optimizing on one core (an MLP's per-example gradients are
    # costly, the data small): the test signals it after its first progress
    # line, which comes after one second of optimizing.
    LONG = ["run", "--synthetic", "gaussian-mixture:n=1000000,d=10,seed=1", "--model", "mlp", "--hidden", "128",
            "--algo", "spider-tree-adaptive", "--epsilon", "2", "--delta", "1e-7", "--seed", "3",
            "--max-steps", "0", "--threads", "1"]

    def start_and_interrupt(self, sig, out):
        p = subprocess.Popen([BIN, *self.LONG, "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        # The run prints "dpsosp: step N, T s" once a second once it is optimizing.
        line = p.stderr.readline()
        self.assertTrue(line.startswith("dpsosp: step"), f"no progress line before the signal: {line!r}")
        p.send_signal(sig)
        _, rest = p.communicate(timeout=120)
        return p.returncode, line + rest

    def check_report(self, out):
        j = load_json(out)
        self.assertTrue(j["interrupted"])
        self.assertEqual(j["termination"], "interrupted")
        self.assertGreater(j["steps"], 0)
        self.assertLess(j["samples_used"], j["n"])
        # The epsilon is the guarantee fixed before the run (phases of up to
        # L_max steps), which covers the shorter run too.
        self.assertAlmostEqual(j["epsilon"], 2.0, places=9)
        self.assertEqual(sum(j["phase_lengths"]), j["steps"])
        r = subprocess.run([BIN, "privacy", "--noise-multiplier", repr(j["noise_multiplier"]), "--steps",
                            str(int(j["params"]["max_phase_length"])), "--delta", repr(j["delta"])],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertAlmostEqual(json.loads(r.stdout)["epsilon_gdp"], j["epsilon"], places=9)

    def test_sigint_writes_the_report_and_exits_130(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            rc, err = self.start_and_interrupt(signal.SIGINT, out)
            self.assertEqual(rc, 130, err)
            self.assertIn("interrupted after", err)
            self.check_report(out)
            self.assertEqual(os.listdir(tmp), ["r.json"])

    def test_sigterm_writes_the_report_and_exits_143(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            rc, err = self.start_and_interrupt(signal.SIGTERM, out)
            self.assertEqual(rc, 128 + signal.SIGTERM, err)
            self.check_report(out)

    def test_second_signal_terminates(self):
        # Stop the process, queue SIGINT and SIGTERM, continue it: whichever is
        # handled first asks for the stop, and the other one ends the process
        # by its default action. Both are pending at once, so the outcome does
        # not race the end of the step; which signal ends the process does
        # depend on delivery: one thread takes SIGINT (the lower number) first
        # and SIGTERM then kills, but two threads (the OpenMP workers take
        # signals too) may each take one at the same time.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            p = subprocess.Popen([BIN, *self.LONG, "--out", out], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            line = p.stderr.readline()
            self.assertTrue(line.startswith("dpsosp: step"), line)
            p.send_signal(signal.SIGSTOP)
            p.send_signal(signal.SIGINT)
            p.send_signal(signal.SIGTERM)
            p.send_signal(signal.SIGCONT)
            _, err = p.communicate(timeout=120)
            self.assertIn(p.returncode, (-signal.SIGTERM, -signal.SIGINT), line + err)
            # Whether the SIGINT handler's line got out first depends on the order the
            # kernel (or a sanitizer's own handlers) delivers the two pending signals.
            # Killed before writing: no report and no half-written file.
            self.assertEqual(os.listdir(tmp), [])

if __name__ == "__main__":
    unittest.main()
