"""Record files and streamed runs from the command line (dpsosp convert, run
--stream, run --order file; docs/data-formats.md, "Record files").

A streamed run gives the bits of a loaded run of the same records in the same
order; a file converted with --shuffle-seed S streams as the original file runs
with --seed S; a bad record is refused before the run, in one line, and no
report is written."""
import json
import os
import random
import struct
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY_FILE = os.path.join(DATA, "noise.key")
ALGORITHMS = ["spider-mf-adaptive", "spider-tree-adaptive", "dpsgd"]


def dpsosp(*args, timeout=300):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def write_csv(path, n=6000, p=6, seed=1):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            z = [rnd.gauss(0, 1) for _ in range(p)]
            f.write(",".join([str(int(z[0] + 0.3 * rnd.gauss(0, 1) > 0))] + ["%.17g" % v for v in z]) + "\n")


def write_libsvm(path, n=6000, p=40, seed=2):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            cols = sorted(rnd.sample(range(1, p + 1), 5))
            vals = [rnd.gauss(0, 1) for _ in cols]
            label = 1 if vals[0] > 0 else 0
            f.write("%d %s\n" % (label, " ".join("%d:%.17g" % (c, v) for c, v in zip(cols, vals))))


class Stream(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.csv = os.path.join(cls.dir, "d.csv")
        cls.svm = os.path.join(cls.dir, "s.svm")
        write_csv(cls.csv)
        write_libsvm(cls.svm)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def convert(self, source, out, *extra):
        r = dpsosp("convert", source, out, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def run_x(self, data, algo, *extra):
        out = self.path("r.json")
        r = dpsosp("run", "--model", "logistic", "--data", data, "--algo", algo, "--seed", 5,
                   "--noise-key-file", KEY_FILE, "--out", out, "--scale", "none", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return json.load(f)

    def test_convert_reports_what_it_wrote(self):
        info = self.convert(self.svm, self.path("s.dpsr"), "--values", "float32", "--features", "40")
        self.assertEqual((info["records"], info["features"], info["storage"], info["labeled"], info["values"]),
                         (6000, 40, "csr", True, "float32"))
        self.assertTrue(info["features_declared"])
        # Without --features the count is the largest index, read from the records: a private run refuses it.
        undeclared = self.convert(self.svm, self.path("s-undeclared.dpsr"), "--values", "float32")
        self.assertFalse(undeclared["features_declared"])
        for extra in ([], ["--stream"], ["--features", "40"]):
            r = dpsosp("run", "--model", "logistic", "--data", self.path("s-undeclared.dpsr"), *extra)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr, "dpsosp: error: --data %s: the feature count of these sparse records was read "
                             "from their largest index when they were converted; a private run needs it declared "
                             "(public): convert them again with dpsosp convert --features D\n"
                             % self.path("s-undeclared.dpsr"))
        # A wider declared count than the largest index is the model's width.
        self.assertEqual(self.convert(self.svm, self.path("s-wide.dpsr"), "--features", "100")["features"], 100)
        self.assertEqual(len(self.run_x(self.path("s-wide.dpsr"), "dpsgd", "--stream")["x"]), 100 + 1)  # intercept
        self.assertEqual(info["bytes"], os.path.getsize(self.path("s.dpsr")))

    def test_streamed_run_gives_the_bits_of_a_loaded_run_in_file_order(self):
        for source, name, width in ((self.csv, "d.dpsr", []), (self.svm, "s.dpsr", ["--features", "40"])):
            records = self.path(name)
            self.convert(source, records, *width)
            for algo in ALGORITHMS:
                with self.subTest(data=name, algo=algo):
                    streamed = self.run_x(records, algo, "--stream")
                    self.assertEqual(streamed["sample_order"], "file")
                    self.assertTrue(streamed["streamed"])
                    self.assertEqual(streamed["x"], self.run_x(records, algo, "--order", "file")["x"])
                    # The original text file in its own order: the same records.
                    self.assertEqual(streamed["x"], self.run_x(source, algo, "--order", "file", *width)["x"])

    def test_a_shuffled_file_streams_as_the_original_runs_with_that_seed(self):
        records = self.path("shuffled.dpsr")
        self.assertEqual(self.convert(self.csv, records, "--shuffle-seed", 5)["shuffle_seed"], 5)
        for algo in ALGORITHMS:
            with self.subTest(algo=algo):
                # In memory spider-mf-adaptive samples by Poisson by default; the seed's order is asked for.
                order = ["--sampling", "order"] if algo == "spider-mf-adaptive" else []
                loaded = self.run_x(self.csv, algo, *order)
                self.assertEqual(loaded["sample_order"], "seed")
                self.assertEqual(self.run_x(records, algo, "--stream")["x"], loaded["x"])

    def test_a_bad_record_ends_the_run_in_one_line_and_no_report_is_written(self):
        records = self.path("bad.dpsr")
        blocks = self.convert(self.csv, records, "--values", "float32")["block_records"]
        # Record 4321, feature 2: NaN. Blocks of `blocks` records: their labels
        # (float64), then their rows (6 float32 features).
        k, i = divmod(4321, blocks)
        m = min(blocks, 6000 - k * blocks)
        with open(records, "r+b") as f:
            f.seek(128 + k * blocks * (8 + 6 * 4) + m * 8 + (i * 6 + 2) * 4)
            f.write(struct.pack("<f", float("nan")))
        out = self.path("never.json")
        r = dpsosp("run", "--model", "logistic", "--data", records, "--stream", "--out", out)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("record 4321 (0-based), feature 2 is nan", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_what_cannot_stream_is_refused_in_one_line(self):
        records = self.path("d.dpsr")
        self.convert(self.csv, records)
        for args, says in ((["--data", records, "--stream", "--algo", "dpsgd", "--epochs", "1"], "draws records by index"),
                           (["--data", records, "--stream", "--epochs", "2"], "give --sampling order"),
                           (["--data", records, "--stream", "--order", "seed"], "file's order"),
                           (["--data", self.csv, "--stream"], "not a dpsosp record file"),
                           (["--data", records, "--order", "random"], "--order: expected seed or file"),
                           (["--data", records, "--algo", "dpsgd", "--epochs", "1", "--order", "file"], "--order")):
            with self.subTest(args=args):
                r = dpsosp("run", "--model", "logistic", *args)
                self.assertNotEqual(r.returncode, 0)
                self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                self.assertIn(says, r.stderr)
        for args, says in (([self.csv], "expected IN OUT"), ([self.csv, self.csv], "same file as IN"),
                           ([self.path("none.csv"), self.path("x.dpsr")], "No such file"),
                           (["--synthetic", "pca:n=10,d=3,seed=1", self.csv, self.path("x.dpsr")], "OUT alone")):
            with self.subTest(convert=args):
                r = dpsosp("convert", *args)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                self.assertIn(says, r.stderr)


if __name__ == "__main__":
    unittest.main()
