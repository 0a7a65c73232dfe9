"""The public shape (SPEC section 9, docs/privacy.md "Public shape"): what sizes
or calibrates a private run is declared, never read from the records.

Neighbouring datasets differ in one record, changed in an extreme way (a huge
LibSVM index); with the same seed and noise key every report field outside
what the run releases is identical, or both runs are refused with the same
output. And the noise key file: refused when others can read it, as ssh
refuses such a private key; keygen writes 0600."""
import json
import os
import random
import stat
import subprocess
import tempfile
import unittest

from test_privacy_report import RELEASED

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY_FILE = os.path.join(DATA, "noise.key")
HUGE = 1000  # the neighbour's one index, 50 times the others' largest (20): x has 2 * HUGE + 1 entries


def dpsosp(*args, stdin=None, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, input=stdin)


def read(path):
    with open(path) as f:
        return f.read()


def libsvm_lines(n=3000, seed=4):
    rnd = random.Random(seed)
    lines = []
    for _ in range(n):
        cols = sorted(rnd.sample(range(1, 21), 4))
        vals = [rnd.gauss(0, 0.5) for _ in cols]
        lines.append("%d %s" % (1 if vals[0] > 0 else 0, " ".join("%d:%.17g" % (c, v) for c, v in zip(cols, vals))))
    return lines


class PublicShape(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        lines = libsvm_lines()
        cls.files = {}
        # D and its neighbours: the last record, or the first, given index HUGE.
        for name, rows in (("d", lines), ("last", lines[:-1] + ["1 %d:0.5" % HUGE]),
                           ("first", ["1 %d:0.5" % HUGE] + lines[1:])):
            cls.files[name] = os.path.join(cls.dir, name + ".svm")
            with open(cls.files[name], "w") as f:
                f.write("\n".join(rows) + "\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    # --sampling order: the changed record enters a release for sure (a Poisson pass, the default, samples it
    # with probability b1 / n).
    COMMON = ["run", "--model", "logistic", "--epsilon", "1", "--G", "1", "--M", "1", "--seed", "3",
              "--noise-key-file", KEY_FILE, "--no-certificate", "--sampling", "order"]

    def assert_same_outside_the_release(self, a, b):
        self.assertEqual(set(a), set(b))
        for key in sorted(set(a) - RELEASED - {"diagnostics"}):
            self.assertEqual(a[key], b[key], "%s differs between neighbouring datasets" % key)

    def test_a_private_libsvm_run_without_features_is_refused_alike_for_neighbours(self):
        want = ("dpsosp: error: --features: a private run on LibSVM records is sized by their feature count, which "
                "must be declared (public), not read from the largest index: give --features D (indices 1 .. D)\n")
        for name in ("d", "last"):
            path = self.files[name]
            for how, args, stdin in (("file", ["--data", path], None),
                                     ("stdin", ["--data", "-", "--format", "libsvm"], read(path))):
                with self.subTest(data=name, read=how):
                    r = dpsosp(*self.COMMON, *args, stdin=stdin)
                    self.assertEqual((r.returncode, r.stdout, r.stderr), (1, "", want))
        # A non-private run may read the width from the records (nothing is released under a guarantee).
        r = dpsosp("run", "--model", "logistic", "--data", self.files["last"], "--algo", "sgd", "--max-steps", "2",
                   "--no-certificate")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["shape"]["features"], HUGE)

    def test_declared_features_give_neighbours_the_same_report_outside_the_release(self):
        for how in ("file", "stdin"):
            with self.subTest(read=how):
                reports = []
                for name in ("d", "last"):
                    path = self.files[name]
                    args = ["--data", path] if how == "file" else ["--data", "-", "--format", "libsvm"]
                    r = dpsosp(*self.COMMON, *args, "--features", str(2 * HUGE),
                               stdin=None if how == "file" else read(path))
                    self.assertEqual(r.returncode, 0, r.stderr)
                    reports.append(json.loads(r.stdout))
                a, b = reports
                self.assertEqual((a["shape"]["features"], a["d"], len(a["x"])), (2 * HUGE, 2 * HUGE + 1, 2 * HUGE + 1))  # intercept
                self.assert_same_outside_the_release(a, b)
                for key in ("sigma", "noise_multiplier", "epsilon", "delta", "mu", "params", "constants", "shape"):
                    self.assertIn(key, a)
                self.assertNotEqual(a["x"], b["x"], "the test has no power: the record changed nothing")

    def test_an_index_above_the_declared_count_is_refused_in_words_that_name_no_record(self):
        self.assertEqual(dpsosp(*self.COMMON, "--data", self.files["d"], "--features", "20").returncode, 0)
        outputs = []
        for name in ("last", "first"):
            r = dpsosp(*self.COMMON, "--data", self.files[name], "--features", "20")
            self.assertEqual((r.returncode, r.stdout), (1, ""))
            outputs.append(r.stderr.replace(self.files[name], "F"))
        self.assertEqual(outputs[0], outputs[1])
        self.assertEqual(outputs[0], "dpsosp: error: LibSVM file F: a record has a feature index above the declared "
                                     "feature count 20; which record is not said, as a refusal must not depend on "
                                     "it\n")

    def test_record_files_carry_the_declared_count_in_their_header(self):
        reports, refusals = [], []
        for name in ("d", "last"):
            declared = os.path.join(self.dir, name + "-declared.dpsr")
            r = dpsosp("convert", self.files[name], declared, "--features", str(2 * HUGE))
            self.assertEqual(r.returncode, 0, r.stderr)
            info = json.loads(r.stdout)
            self.assertEqual((info["features"], info["features_declared"]), (2 * HUGE, True))
            for extra in ([], ["--stream"]):
                r = dpsosp(*self.COMMON, "--data", declared, *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                reports.append(json.loads(r.stdout))
            undeclared = os.path.join(self.dir, name + ".dpsr")
            self.assertEqual(dpsosp("convert", self.files[name], undeclared).returncode, 0)
            r = dpsosp(*self.COMMON, "--data", undeclared)
            refusals.append((r.returncode, r.stdout, r.stderr.replace(undeclared, "F")))
        self.assert_same_outside_the_release(reports[0], reports[2])  # loaded
        self.assert_same_outside_the_release(reports[1], reports[3])  # streamed
        self.assertEqual(refusals[0], refusals[1])
        self.assertEqual(refusals[0][0], 1)
        self.assertIn("convert them again with dpsosp convert --features D", refusals[0][2])

    def test_certify_and_predict_take_the_width_from_the_point(self):
        out = os.path.join(self.dir, "point.json")
        r = dpsosp(*self.COMMON, "--data", self.files["d"], "--features", "30", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The file's largest index is 20; the point's model has 30 features.
        r = dpsosp("certify", "--model", "logistic", "--data", self.files["d"], "--point", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = dpsosp("predict", "--point", out, "--data", self.files["d"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 3001)
        r = dpsosp("predict", "--point", out, "--data", self.files["d"], "--features", "20")
        self.assertEqual(r.returncode, 1)
        self.assertIn("do not fit the point's logistic model", r.stderr)


class NoiseKeyFile(unittest.TestCase):
    def test_a_key_file_others_can_read_is_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "k")
            with open(KEY_FILE) as f, open(key, "w") as g:
                g.write(f.read())
            run = ["run", "--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--seed", "1", "--max-steps", "2",
                   "--noise-key-file", key]
            for mode, word in ((0o644, "readable"), (0o640, "readable"), (0o604, "readable"), (0o620, "accessible")):
                with self.subTest(mode=oct(mode)):
                    os.chmod(key, mode)
                    r = dpsosp(*run)
                    self.assertEqual((r.returncode, r.stdout), (1, ""))
                    self.assertEqual(r.stderr, "dpsosp: error: --noise-key-file: noise key file %s is %s by others "
                                     "(mode 0%o); chmod 600 %s\n" % (key, word, mode, key))
            for mode in (0o600, 0o400):
                os.chmod(key, mode)
                r = dpsosp(*run)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(json.loads(r.stdout)["noise_key"], "supplied")

    def test_keygen_writes_a_file_only_its_owner_can_read_whatever_the_umask(self):
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "new.key")
            r = subprocess.run(["sh", "-c", 'umask 000 && exec "$0" keygen --out "$1"', BIN, key],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
            r = dpsosp("run", "--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--max-steps", "2",
                       "--noise-key-file", key)
            self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
