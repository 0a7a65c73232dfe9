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
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
BAD = os.path.join(DATA, "bad")


def read(path):
    with open(path) as f:
        return f.read()


def load_json(path):
    with open(path) as f:
        return json.load(f)


def bad(name):
    return os.path.join(BAD, name)


OK = bad("ok.csv")
LOGISTIC = ["run", "--model", "logistic", "--data", OK, "--seed", "1", "--epsilon", "2"]
SOFTMAX = ["run", "--model", "softmax", "--seed", "1"]
PR = ["run", "--synthetic", "phase-retrieval:n=20000,d=4,seed=1", "--seed", "1", "--max-steps", "3"]
CERTIFY = ["certify", "--model", "logistic", "--data", OK]
PRIVACY = ["privacy", "--noise-multiplier", "2", "--delta", "1e-5"]

# (name, arguments, substring the one error line must contain)
CASES = [
    # --- files: missing, empty, malformed ---
    ("missing file", ["run", "--model", "logistic", "--data", bad("no_such_file.csv")], "No such file"),
    ("empty csv", ["run", "--model", "logistic", "--data", bad("empty.csv")], "empty file"),
    ("only blank lines", ["run", "--model", "logistic", "--data", bad("blank_lines_only.csv")], "empty file"),
    ("ragged rows", ["run", "--model", "logistic", "--data", bad("ragged.csv")], "expected 3 columns, got 2"),
    ("non-numeric value", ["run", "--model", "logistic", "--data", bad("non_numeric.csv")], "non-numeric value 'abc'"),
    ("NaN value", ["run", "--model", "logistic", "--data", bad("nan.csv")], "NaN/Inf not allowed"),
    ("Inf value", ["run", "--model", "logistic", "--data", bad("inf.csv")], "NaN/Inf not allowed"),
    ("overflowing value", ["run", "--model", "logistic", "--data", bad("overflow.csv")], "overflows a double"),
    ("header line without --header", ["run", "--model", "logistic", "--data", bad("header.csv")], "pass --header"),
    ("header only", ["run", "--model", "logistic", "--data", bad("header_only.csv"), "--header"], "no records after the header"),
    ("label column only", ["run", "--model", "logistic", "--data", bad("one_column.csv")], "at least one feature column"),
    ("truncated gzip", ["run", "--model", "logistic", "--data", bad("truncated.csv.gz")], "gzip"),
    ("data is a directory", ["run", "--model", "logistic", "--data", BAD, "--format", "csv"], "load_csv"),
    ("unknown file extension", ["run", "--model", "logistic", "--data", bad("point_array.json")], "--format"),
    ("bogus --format", ["run", "--model", "logistic", "--data", OK, "--format", "bogus"], "unknown format 'bogus'"),
    ("--header with libsvm", ["run", "--model", "logistic", "--data", bad("index_zero.svm"), "--header"], "--header"),
    # --- LibSVM ---
    ("libsvm index 0", ["run", "--model", "logistic", "--data", bad("index_zero.svm")], "1-based"),
    ("libsvm decreasing index", ["run", "--model", "logistic", "--data", bad("index_decreasing.svm")], "strictly increasing"),
    ("libsvm duplicate index", ["run", "--model", "logistic", "--data", bad("index_duplicate.svm")], "strictly increasing"),
    ("libsvm index not a number", ["run", "--model", "logistic", "--data", bad("index_text.svm")], "bad feature index 'a'"),
    ("libsvm missing colon", ["run", "--model", "logistic", "--data", bad("missing_colon.svm")], "lacks ':'"),
    ("libsvm NaN value", ["run", "--model", "logistic", "--data", bad("value_nan.svm")], "NaN/Inf"),
    ("libsvm text label", ["run", "--model", "logistic", "--data", bad("label_text.svm")], "bad label"),
    ("libsvm huge index", ["run", "--model", "logistic", "--data", bad("huge_index.svm")], "feature columns"),
    # --- IDX ---
    ("truncated IDX", ["run", "--model", "softmax", "--data", bad("truncated-images-idx3-ubyte")], "truncated"),
    ("IDX header promising 2^40 values", ["run", "--model", "softmax", "--data", bad("huge-images-idx3-ubyte")], "truncated"),
    ("IDX bad magic", ["run", "--model", "softmax", "--data", bad("badmagic-images-idx3-ubyte")], "bad magic"),
    ("IDX label count mismatch", ["run", "--model", "softmax", "--data", bad("count-images-idx3-ubyte")], "3 labels"),
    ("IDX labels file missing", ["run", "--model", "softmax", "--data", bad("nolabels-images-idx3-ubyte")], "not found"),
    ("--labels with csv", ["run", "--model", "logistic", "--data", OK, "--labels", bad("tiny-labels-idx1-ubyte")], "IDX"),
    # --- labels invalid for the model ---
    ("logistic label 3", ["run", "--model", "logistic", "--data", bad("label_3.csv")], "label of record 1"),
    ("softmax fractional label", [*SOFTMAX, "--data", bad("softmax_label_frac.csv")], "label of record 1"),
    ("softmax negative label", [*SOFTMAX, "--data", bad("softmax_label_negative.csv")], "label of record 1"),
    ("softmax label above --classes", [*SOFTMAX, "--data", OK, "--classes", "2", "--eval", bad("label_3.csv")], "--eval"),
    ("pca on synthetic labels", ["run", "--synthetic", "pca:n=1000,d=4", "--model", "logistic"], "no labels"),
    # --- start point ---
    ("x0 wrong dimension", [*LOGISTIC, "--x0", bad("x0_short.csv")], "expected 2 values"),
    ("x0 NaN", [*LOGISTIC, "--x0", bad("x0_nan.csv")], "not finite"),
    ("x0 two lines", [*LOGISTIC, "--x0", bad("x0_two_lines.csv")], "one CSV line"),
    ("x0 trailing comma", [*LOGISTIC, "--x0", bad("x0_trailing_comma.csv")], "empty field in column 3"),
    ("x0 text", [*LOGISTIC, "--x0", bad("x0_text.csv")], "non-numeric value 'abc'"),
    ("x0 empty file", [*LOGISTIC, "--x0", bad("x0_empty.csv")], "empty file"),
    ("x0 missing file", [*LOGISTIC, "--x0", bad("no_such_x0.csv")], "cannot open"),
    ("x0 saddle on file data", [*LOGISTIC, "--x0", "saddle"], "known population"),
    ("x0 saddle, other model", ["run", "--synthetic", "phase-retrieval:n=5000,d=4", "--model", "cauchy",
                                "--x0", "saddle"], "known population"),
    # --- privacy options ---
    ("epsilon 0", [*LOGISTIC, "--epsilon", "0"], "--epsilon"),
    ("epsilon negative", [*LOGISTIC, "--epsilon", "-1"], "--epsilon"),
    ("epsilon nan", [*LOGISTIC, "--epsilon", "nan"], "--epsilon"),
    ("epsilon text", [*LOGISTIC, "--epsilon", "two"], "--epsilon"),
    ("delta 0", [*LOGISTIC, "--delta", "0"], "--delta"),
    ("delta 1", [*LOGISTIC, "--delta", "1"], "--delta"),
    ("delta negative", [*LOGISTIC, "--delta", "-1e-6"], "--delta"),
    ("zero noise override", [*LOGISTIC, "--set", "sigma=0"], "--set sigma"),
    ("epsilon with a non-private algo", [*LOGISTIC, "--algo", "sgd"], "non-private"),
    ("epsilon inf with a private baseline", [*PR, "--algo", "dpsgd", "--epsilon", "inf"], "private algorithm"),
    # --- the secret noise key (SPEC section 8); messages never repeat a key file's text ---
    ("missing key file", [*PR, "--noise-key-file", bad("no_such.key")], "--noise-key-file: noise key file"),
    ("malformed key file", [*PR, "--noise-key-file", bad("short.key")], "32 hexadecimal digits"),
    ("empty key file name", [*PR, "--noise-key-file", ""], "--noise-key-file: empty"),
    ("key file for a non-private run", [*PR, "--algo", "sgd", "--epsilon", "inf", "--noise-key-file",
                                        bad("short.key")], "non-private"),
    ("--release-only with --eval", [*LOGISTIC, "--eval", OK, "--release-only"], "--release-only"),
    ("keygen over an existing file", ["keygen", "--out", OK], "never replaces a key"),
    # --- model and algorithm ---
    ("unknown model", ["run", "--model", "linear", "--data", OK], "unknown model 'linear'"),
    ("no --model with --data", ["run", "--data", OK], "--model is required"),
    ("unknown algo", [*LOGISTIC, "--algo", "adam"], "unknown algorithm 'adam'"),
    ("no data source", ["run", "--model", "logistic"], "--data FILE or --synthetic"),
    ("--data and --synthetic", ["run", "--model", "logistic", "--data", OK, "--synthetic", "pca:n=10,d=3"], "excludes"),
    ("--classes 1", [*SOFTMAX, "--data", OK, "--classes", "1"], "--classes"),
    ("--classes with logistic", [*LOGISTIC, "--classes", "3"], "--classes"),
    ("--rank 0", ["run", "--synthetic", "pca:n=1000,d=4", "--rank", "0"], "--rank"),
    ("--rank differs from spec", ["run", "--synthetic", "pca:n=1000,d=4,rank=2", "--rank", "3"], "rank=2"),
    ("--hidden 0", ["run", "--model", "mlp", "--data", OK, "--hidden", "0"], "--hidden"),
    ("--hidden with softmax", [*SOFTMAX, "--data", OK, "--hidden", "4"], "--hidden"),
    ("--hidden too large", ["run", "--model", "mlp", "--data", OK, "--hidden", "2000000000"], "--hidden"),
    # --- synthetic specs ---
    ("unknown synthetic problem", ["run", "--synthetic", "spiral:n=100"], "unknown problem 'spiral'"),
    ("synthetic n=0", ["run", "--synthetic", "phase-retrieval:n=0,d=4"], "key 'n'"),
    ("synthetic d=1 phase retrieval", ["run", "--synthetic", "phase-retrieval:n=100,d=1"], "d >= 2"),
    ("synthetic unknown key", ["run", "--synthetic", "pca:n=100,d=4,sigma=2"], "unknown key 'sigma'"),
    ("synthetic trailing comma", ["run", "--synthetic", "pca:n=100,d=4,"], "empty key=value"),
    ("synthetic n not a number", ["run", "--synthetic", "pca:n=ten,d=4"], "key 'n'"),
    ("synthetic too large", ["run", "--synthetic", "phase-retrieval:n=4294967295,d=4294967295"], "--synthetic"),
    ("synthetic empty", ["run", "--synthetic", ""], "--synthetic"),
    # --- too few records ---
    ("too few records for O1", ["run", "--model", "logistic", "--data", bad("tiny.csv"), "--alpha-scale", "0.01"],
     "cannot fill one O1 batch"),
    ("batch larger than n (dpsgd)", [*LOGISTIC, "--algo", "dpsgd", "--batch-size", "100000"], "--batch-size 100000"),
    ("batch larger than n (gauss)", [*LOGISTIC, "--algo", "spider-gauss-fixed", "--batch-size", "100000"],
     "--batch-size 100000"),
    ("O1 override larger than n", [*LOGISTIC, "--set", "b=100000"], "--set b=100000"),
    # --- numeric options ---
    ("threads -1", [*LOGISTIC, "--threads", "-1"], "--threads"),
    ("threads huge", [*LOGISTIC, "--threads", "100000"], "--threads"),
    ("batch-size -1", [*LOGISTIC, "--algo", "dpsgd", "--batch-size", "-1"], "--batch-size"),
    ("batch-size 0", [*LOGISTIC, "--algo", "dpsgd", "--batch-size", "0"], "--batch-size"),
    ("batch-size with adaptive", [*LOGISTIC, "--batch-size", "8"], "--batch-size"),
    ("max-steps -1", [*LOGISTIC, "--max-steps", "-1"], "--max-steps"),
    ("max-steps 1.5", [*LOGISTIC, "--max-steps", "1.5"], "--max-steps"),
    ("max-phase-length negative", [*LOGISTIC, "--max-phase-length", "-4"], "--max-phase-length"),
    ("max-phase-length with dpsgd", [*LOGISTIC, "--algo", "dpsgd", "--max-phase-length", "8"], "--max-phase-length"),
    ("G 0", [*LOGISTIC, "--G", "0"], "--G"),
    ("G nan", [*LOGISTIC, "--G", "nan"], "--G"),
    ("G inf", [*LOGISTIC, "--G", "inf"], "--G"),
    ("M negative", [*LOGISTIC, "--M", "-2"], "--M"),
    ("rho negative", [*LOGISTIC, "--rho", "-1"], "--rho"),
    ("B text", [*LOGISTIC, "--B", "one"], "--B"),
    ("G overflow", [*LOGISTIC, "--G", "1e999"], "out of the range"),
    ("alpha-scale 0", [*LOGISTIC, "--alpha-scale", "0"], "--alpha-scale"),
    ("alpha-scale with dpsgd", [*LOGISTIC, "--algo", "dpsgd", "--alpha-scale", "2"], "--alpha-scale"),
    ("seed negative", [*LOGISTIC, "--seed", "-1"], "--seed"),
    ("seed above 2^64", [*LOGISTIC, "--seed", "18446744073709551616"], "--seed"),
    ("period with adaptive", [*LOGISTIC, "--period", "4"], "--period"),
    ("period 0", [*LOGISTIC, "--algo", "spider-tree-periodic", "--period", "0"], "--period"),
    ("epochs with spider", [*LOGISTIC, "--epochs", "2"], "--epochs"),
    ("epochs negative", [*LOGISTIC, "--algo", "dpsgd", "--epochs", "-1"], "--epochs"),
    ("epochs huge", [*LOGISTIC, "--algo", "dpsgd", "--epochs", "1e30"], "--epochs"),
    ("learning-rate 0", [*LOGISTIC, "--algo", "dpsgd", "--learning-rate", "0"], "--learning-rate"),
    ("learning-rate with spider", [*LOGISTIC, "--learning-rate", "0.1"], "--learning-rate"),
    ("set unknown parameter", [*LOGISTIC, "--set", "beta=1"], "unknown parameter"),
    ("set without =", [*LOGISTIC, "--set", "alpha"], "name=value"),
    ("set b huge", [*LOGISTIC, "--set", "b=1e30"], "--set b"),
    ("set twice", [*LOGISTIC, "--set", "alpha=1", "--set", "alpha=2"], "given twice"),
    ("set alpha for dpsgd", [*LOGISTIC, "--algo", "dpsgd", "--set", "alpha=1"], "dpsgd"),
    # --- command line ---
    ("unknown command", ["train"], "unknown command 'train'"),
    ("no command", [], "subcommand"),
    ("unknown option", [*LOGISTIC, "--bogus"], "--bogus"),
    ("missing option value", ["run", "--model", "logistic", "--data"], "--data"),
    ("option given twice", [*LOGISTIC, "--G", "1", "--G", "2"], "--G"),
    ("eval with other feature count", [*LOGISTIC, "--eval", bad("eval_3_features.csv")], "--eval"),
    ("eval missing", [*LOGISTIC, "--eval", bad("no_such_eval.csv")], "No such file"),
    ("eval-labels without eval", [*LOGISTIC, "--eval-labels", bad("tiny-labels-idx1-ubyte")], "--eval-labels"),
    ("empty --x0", [*LOGISTIC, "--x0", ""], "--x0"),
    ("empty --model", ["run", "--synthetic", "pca:n=100,d=4", "--model", ""], "--model"),
    ("empty --format", ["run", "--model", "logistic", "--data", OK, "--format", ""], "--format"),
    ("empty --eval", [*LOGISTIC, "--eval", ""], "--eval"),
    ("empty --seed", ["run", "--model", "logistic", "--data", OK, "--seed", ""], "expected an integer"),
    ("labels for pca", ["run", "--model", "pca", "--data", bad("tiny-images-idx3-ubyte"), "--labels",
                        bad("tiny-labels-idx1-ubyte")], "pca"),
    # --- certify ---
    ("point malformed JSON", [*CERTIFY, "--point", bad("point_malformed.json")], "not valid JSON"),
    ("point without x", [*CERTIFY, "--point", bad("point_no_x.json")], "no \"x\""),
    ("point x not an array", [*CERTIFY, "--point", bad("point_x_not_array.json")], "expected an array"),
    ("point wrong length", [*CERTIFY, "--point", bad("point_short.json")], "x has 1 entries"),
    ("point null entry", [*CERTIFY, "--point", bad("point_null.json")], "entry 2 is null"),
    ("point string entry", [*CERTIFY, "--point", bad("point_string.json")], "entry 2"),
    ("point negative rho", [*CERTIFY, "--point", bad("point_rho_negative.json")], "constants.rho"),
    ("point top-level array", [*CERTIFY, "--point", bad("point_array.json")], "JSON object"),
    ("point missing file", [*CERTIFY, "--point", bad("no_such_point.json")], "cannot open"),
    ("point NaN CSV", [*CERTIFY, "--point", bad("x0_nan.csv")], "--point"),
    ("certify rho -1", [*CERTIFY, "--point", bad("x0_ok.csv"), "--rho", "-1"], "--rho"),
    ("certify rho nan", [*CERTIFY, "--point", bad("x0_ok.csv"), "--rho", "nan"], "--rho"),
    ("certify without --point", CERTIFY, "--point"),
    # --- privacy ---
    ("noise multiplier 0", ["privacy", "--noise-multiplier", "0", "--steps", "10", "--delta", "1e-5"], "--noise-multiplier"),
    ("noise multiplier negative", ["privacy", "--noise-multiplier", "-1", "--steps", "10", "--delta", "1e-5"],
     "--noise-multiplier"),
    ("noise multiplier inf", ["privacy", "--noise-multiplier", "inf", "--steps", "10", "--delta", "1e-5"],
     "--noise-multiplier"),
    ("steps 0", [*PRIVACY, "--steps", "0"], "--steps"),
    ("steps a,b", [*PRIVACY, "--steps", "a,b"], "--steps"),
    ("steps trailing comma", [*PRIVACY, "--steps", "10,"], "empty entry"),
    ("steps negative", [*PRIVACY, "--steps", "-5"], "--steps"),
    ("steps with a space", [*PRIVACY, "--steps", " -5"], "--steps"),
    ("steps too large", [*PRIVACY, "--steps", "100000000000000000000"], "--steps"),
    ("privacy delta 1", ["privacy", "--noise-multiplier", "2", "--steps", "10", "--delta", "1"], "--delta"),
    ("sampling rate 2", [*PRIVACY, "--steps", "100", "--sampling-rate", "2"], "--sampling-rate"),
    ("sampling rate 0", [*PRIVACY, "--steps", "100", "--sampling-rate", "0"], "--sampling-rate"),
    ("poisson form with two step counts", [*PRIVACY, "--steps", "10,20", "--sampling-rate", "0.1"], "one step count"),
    # --- demo and audit ---
    ("demo threads -1", ["demo", "--threads", "-1"], "--threads"),
    ("demo seed negative", ["demo", "--seed", "-3"], "--seed"),
    ("audit non-private algo", ["audit", "--algo", "sgd"], "not a private algorithm"),
    ("audit runs 1", ["audit", "--runs", "1"], "--runs"),
    ("audit bad tampering", ["audit", "--tamper", "half"], "unknown tampering"),
    ("audit bad canary", ["audit", "--canary", "cubic"], "unknown canary"),
    ("audit quadratic-o2 with dpsgd", ["audit", "--algo", "dpsgd", "--canary", "quadratic-o2"], "needs an O2 step"),
    ("audit quadratic-o2 with 3 steps", ["audit", "--canary", "quadratic-o2", "--steps", "3"], "exactly 2 steps"),
    ("audit unclipped-o2 with the linear canary", ["audit", "--tamper", "unclipped-o2"], "unclipped-o2 applies"),
    ("audit unclipped-o2 with spider-gauss-fixed",
     ["audit", "--algo", "spider-gauss-fixed", "--canary", "quadratic-o2", "--tamper", "unclipped-o2"],
     "unclipped-o2 applies"),
    ("audit clip-off with quadratic-o2", ["audit", "--canary", "quadratic-o2", "--tamper", "clip-off"], "clip-off"),
    ("audit extreme-fails with the linear canary", ["audit", "--tamper", "extreme-fails"], "needs canary extreme"),
    ("audit epochs with a spider algorithm", ["audit", "--epochs", "1"], "dpsgd only"),
    ("audit negative epochs", ["audit", "--algo", "dpsgd", "--epochs", "-1"], "--epochs"),
]

# Cases that pass --out: the existing results file must survive.
OUT_CASES = [
    ("bad data after --out", ["run", "--model", "logistic", "--data", bad("ragged.csv")], "expected 3 columns"),
    ("bad option after --out", [*LOGISTIC, "--G", "-1"], "--G"),
    ("bad x0 after --out", [*LOGISTIC, "--x0", bad("x0_short.csv")], "expected 2 values"),
    ("demo with bad threads", ["demo", "--threads", "-1"], "--threads"),
]


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
            "--algo", "spider-tree-adaptive", "--epsilon", "2", "--delta", "1e-6", "--seed", "3",
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
