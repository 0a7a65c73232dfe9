"""Tables as people have them (docs/data-formats.md): a header line (given or
detected), --label by name or index, string labels through --classes names,
--categorical one-hot columns, missing values refused or --impute'd; and the
words of a run: the delta rule, the clipping note, the summary line, epsilon
to 4 significant digits. Each encoded table is checked against the same
records written as plain numbers: the same seed and noise key give the same x."""
import json
import os
import re
import subprocess
import tempfile
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
DATA = os.environ.get("DPSOSP_TEST_DATA", "tests/data")
KEY = ["--noise-key-file", os.path.join(DATA, "noise.key")]
FIXED = ["--seed", "7", *KEY, "--G", "1", "--M", "1", "--quiet"]
COLORS = ["red", "green", "blue"]
SPECIES = ["setosa", "versicolor", "virginica"]


def dpsosp(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def table(n=600):
    """n deterministic records: a class (0..2), a color (0..2), two numbers."""
    rows = []
    for i in range(n):
        k, c = i % 3, (i * 7) % 3
        rows.append((k, c, ((i * 13) % 17 - 8) / 8 + 0.3 * k, ((i * 5) % 11 - 5) / 5 - 0.2 * k))
    return rows


class Tables(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, lines):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def run_ok(self, *args):
        r = dpsosp("run", *args, *FIXED)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def numeric(self, rows, one_hot=False):
        """The plain file: label first, then the features (the color one-hot when asked)."""
        lines = []
        for k, c, a, b in rows:
            color = [float(c == j) for j in range(3)] if one_hot else [c]
            lines.append(",".join(str(v) for v in [k, *color, a, b]))
        return self.write("plain.csv", lines)

    def test_header_detected_or_given(self):
        rows = table()
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        lines = ["label,color,a,b"] + [f"{k},{c},{a},{b}" for k, c, a, b in rows]
        path = self.write("header.csv", lines)
        detected = self.run_ok("--model", "softmax", "--classes", "3", "--data", path)
        given = self.run_ok("--model", "softmax", "--classes", "3", "--data", path, "--header")
        self.assertEqual(detected["n"], len(rows))
        self.assertEqual(detected["x"], plain["x"])
        self.assertEqual(given["x"], plain["x"])
        # A header only: detected, and no records after it.
        r = dpsosp("run", "--model", "logistic", "--data", self.write("h.csv", ["label,a"]))
        self.assertIn("no records after the header line", r.stderr)

    def test_label_by_name_and_by_index(self):
        rows = table()
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        lines = ["color,a,y,b"] + [f"{c},{a},{k},{b}" for k, c, a, b in rows]
        path = self.write("last.csv", lines)
        by_name = self.run_ok("--model", "softmax", "--classes", "3", "--data", path, "--label", "y")
        by_index = self.run_ok("--model", "softmax", "--classes", "3", "--data", path, "--label", "2")
        self.assertEqual(by_name["x"], by_index["x"])
        # The features keep their order (color, a, b), so the model's is that of the plain file.
        self.assertEqual(by_name["x"], plain["x"])
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, "--label", "species")
        self.assertEqual(r.returncode, 1)
        self.assertIn("the header line has no column 'species' (its columns: color, a, y, b)", r.stderr)

    def test_string_labels_through_declared_classes(self):
        rows = table()
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        lines = ["species,color,a,b"] + [f"{SPECIES[k]},{c},{a},{b}" for k, c, a, b in rows]
        path = self.write("species.csv", lines)
        named = self.run_ok("--model", "softmax", "--classes", ",".join(SPECIES), "--data", path)
        self.assertEqual(named["x"], plain["x"])
        self.assertEqual(named["shape"]["classes"], 3)
        self.assertEqual(named["caveats"], plain["caveats"])  # a declared class list: no caveat of inferred classes
        # Logistic: two names, the first is label 0.
        two = [r for r in rows if r[0] < 2]
        lines = ["species,color,a,b"] + [f"{SPECIES[k]},{c},{a},{b}" for k, c, a, b in two]
        logistic = self.run_ok("--model", "logistic", "--classes", "setosa,versicolor", "--data",
                               self.write("two.csv", lines))
        plain2 = self.run_ok("--model", "logistic", "--data", self.numeric(two))
        self.assertEqual(logistic["x"], plain2["x"])
        r = dpsosp("run", "--model", "logistic", "--classes", ",".join(SPECIES), "--data", path)
        self.assertIn("--classes: logistic takes 2 classes", r.stderr)

    def test_predict_reads_and_answers_in_the_runs_class_names(self):
        rows = table()
        lines = ["species,color,a,b"] + [f"{SPECIES[k]},{c},{a},{b}" for k, c, a, b in rows]
        path = self.write("species.csv", lines)
        named = self.run_ok("--model", "softmax", "--classes", ",".join(SPECIES), "--data", path)
        self.assertEqual(named["class_names"], SPECIES)  # the declared names, public, in class order
        point = self.write("point.json", [json.dumps(named)])
        # No --classes: the point's names read the labels and name the predictions.
        r = dpsosp("predict", "--point", point, "--data", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        given = dpsosp("predict", "--point", point, "--data", path, "--classes", ",".join(SPECIES))
        self.assertEqual(r.stdout, given.stdout)
        self.assertEqual(r.stderr, given.stderr)  # the same accuracy line
        predictions = r.stdout.split()[1:]
        self.assertEqual(len(predictions), len(rows))
        self.assertTrue(set(predictions) <= set(SPECIES))
        self.assertIn("accuracy", r.stderr)
        # A count of classes still asks for numeric labels.
        r = dpsosp("predict", "--point", point, "--data", path, "--classes", "3")
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not a finite number; named classes must be declared", r.stderr)
        self.assertNotIn("line", r.stderr)
        # A run on numeric labels keeps no names.
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        self.assertNotIn("class_names", plain)

    def test_predict_takes_the_runs_table_rule_from_its_report(self):
        # A table as people have it: the label neither first nor numeric, a categorical column, a gap. The
        # run's declared rule (--label, --categorical, --impute: public) goes into its report, and predict
        # reads a CSV laid out as the run's with no options, as it does with the options given again.
        rows = table()
        lines = ["a,color,species,b"] + [f"{a},{COLORS[c]},{SPECIES[k]},{b}" for k, c, a, b in rows]
        lines[5] = "," + lines[5].split(",", 1)[1]  # a missing value of a
        path = self.write("people.csv", lines)
        rule = ["--label", "species", "--classes", ",".join(SPECIES), "--categorical", "color=" + "|".join(COLORS),
                "--impute", "a=0.25"]
        report = self.run_ok("--model", "softmax", "--data", path, *rule)
        self.assertEqual((report["label"], report["categorical"], report["impute"]),
                         ("species", {"color": COLORS}, {"a": 0.25}))
        point = self.write("people.json", [json.dumps(report)])
        bare = dpsosp("predict", "--point", point, "--data", path)
        self.assertEqual(bare.returncode, 0, bare.stderr)
        given = dpsosp("predict", "--point", point, "--data", path, *[x for x in rule if x != "--classes" and
                                                                       x != ",".join(SPECIES)])
        self.assertEqual(bare.stdout, given.stdout)
        self.assertIn("accuracy", bare.stderr)
        self.assertEqual(len(bare.stdout.split()), len(rows) + 1)
        # An option given to predict replaces the report's: another fill runs, and another label column
        # leaves species a feature column, which is not numeric.
        other = dpsosp("predict", "--point", point, "--data", path, "--impute", "a=3")
        self.assertEqual(other.returncode, 0, other.stderr)
        wrong = dpsosp("predict", "--point", point, "--data", path, "--label", "b")
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("in column 'species'", wrong.stderr)
        self.assertEqual(len(wrong.stderr.splitlines()), 1)
        # Records without the label column: the refusal says how to predict them.
        features = self.write("features.csv", [",".join(x for i, x in enumerate(line.split(",")) if i != 2)
                                               for line in lines])
        r = dpsosp("predict", "--point", point, "--data", features)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no column 'species'", r.stderr)
        self.assertIn("(records without a label column: --no-labels)", r.stderr)
        r = dpsosp("predict", "--point", point, "--data", features, "--no-labels")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, bare.stdout)
        # A run given no rule writes none.
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        self.assertFalse({"label", "categorical", "impute"} & set(plain))

    def test_unknown_label_refused_alike_for_neighbouring_files(self):
        rows = table(300)
        lines = ["species,color,a,b"] + [f"{SPECIES[k]},{c},{a},{b}" for k, c, a, b in rows]
        lines[11] = "rose" + lines[11][lines[11].index(","):]
        first = self.write("a.csv", lines)
        lines[4] = "tulip" + lines[4][lines[4].index(","):]  # a neighbour: one more record changed
        second = self.write("b.csv", lines)
        out = []
        for path in (first, second):
            r = dpsosp("run", "--model", "softmax", "--classes", ",".join(SPECIES), "--data", path, *FIXED)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout, "")
            out.append(r.stderr.replace(path, "FILE"))
        self.assertEqual(out[0], out[1])
        self.assertIn("a label in column 'species' is not one of the 3 declared classes", out[0])
        self.assertNotIn("line", out[0])
        self.assertNotIn("rose", out[0])

    def test_categorical_one_hot(self):
        rows = table()
        plain_path = self.numeric(rows, one_hot=True)
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", plain_path, "--scale", "none")
        lines = ["y,color,a,b"] + [f"{k},{COLORS[c]},{a},{b}" for k, c, a, b in rows]
        path = self.write("colors.csv", lines)
        declared = ["--model", "softmax", "--classes", "3", "--data", path,
                    "--categorical", "color=" + "|".join(COLORS)]
        encoded = self.run_ok(*declared, "--scale", "none")
        self.assertEqual(encoded["shape"]["features"], 5)
        self.assertEqual(encoded["x"], plain["x"])
        # The private scale: the declared one-hot features take their public box [0, 1] as declared, and the
        # estimate covers a and b alone; the same numbers in a plain file are all estimated.
        scaled = self.run_ok(*declared)["scaling"]
        numbers = self.run_ok(*declared[:4], "--data", plain_path)["scaling"]
        self.assertEqual(scaled["sources"], ["public (one-hot)"] * 3 + ["private"] * 2)
        self.assertEqual((scaled["lower"][:3], scaled["upper"][:3]), ([0.0] * 3, [1.0] * 3))
        self.assertEqual((scaled["estimate"]["columns"], numbers["estimate"]["columns"]), (2, 5))
        self.assertEqual(numbers["sources"], ["private"] * 5)
        # Fewer columns: less noise on each count, or (scale share auto) a smaller share of the budget.
        less = [scaled["estimate"][k] < numbers["estimate"][k] for k in ("count_noise", "share")]
        self.assertTrue(any(less) and all(scaled["estimate"][k] <= numbers["estimate"][k]
                                          for k in ("count_noise", "share")), (scaled["estimate"], numbers["estimate"]))
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, "--categorical", "color=red|green")
        self.assertIn("a value in the categorical column 'color' is not one of its 2 declared categories", r.stderr)
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path)
        self.assertIn("line 2: non-numeric value 'red' in column 'color' (a categorical column: declare its "
                      "categories, --categorical COL=a|b|c)", r.stderr)

    def test_missing_values_refused_or_imputed(self):
        rows = table()
        lines = ["y,color,a,b"] + [f"{k},{c},{a},{b}" for k, c, a, b in rows]
        lines[5] = lines[5].rsplit(",", 1)[0] + ",NA"
        lines[9] = lines[9].split(",", 1)[0] + ",," + lines[9].split(",", 2)[2]
        path = self.write("holes.csv", lines)
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, *FIXED)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("line 6: missing value ('NA') in column 'b': fill it in, or declare a rule: --impute zero or "
                      "--impute b=VALUE", r.stderr)
        imputed = self.run_ok("--model", "softmax", "--classes", "3", "--data", path, "--impute", "zero")
        filled = [list(r) for r in rows]
        filled[4][3] = 0.0
        filled[8][1] = 0
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(filled))
        self.assertEqual(imputed["x"], plain["x"])
        own = self.run_ok("--model", "softmax", "--classes", "3", "--data", path, "--impute", "b=0",
                          "--impute", "color=0")
        self.assertEqual(own["x"], plain["x"])

    def test_weights_column(self):
        # A weights column is not a feature: all-ones weights give the plain file's bits; other weights move x,
        # not the guarantee; a weight outside [0, 1], a missing one, or the label column are refused in one line.
        rows = table()
        plain = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.numeric(rows))
        ones = self.write("ones.csv", ["y,w,color,a,b"] + [f"{k},1,{c},{a},{b}" for k, c, a, b in rows])
        same = self.run_ok("--model", "softmax", "--classes", "3", "--data", ones, "--weights-column", "w")
        self.assertEqual(same["x"], plain["x"])
        by_index = self.run_ok("--model", "softmax", "--classes", "3", "--data", ones, "--weights-column", "1")
        self.assertEqual(by_index["x"], plain["x"])
        lines = ["y,w,color,a,b"] + [f"{k},{0.25 if k == 2 else 1},{c},{a},{b}" for k, c, a, b in rows]
        weighted = self.run_ok("--model", "softmax", "--classes", "3", "--data", self.write("w.csv", lines),
                               "--weights-column", "w")
        self.assertNotEqual(weighted["x"], plain["x"])
        self.assertEqual(weighted["epsilon"], plain["epsilon"])
        for bad, words in (("1.5", "weight 1.5 in column 'w' is outside [0, 1]"),
                           ("", "missing weight (an empty field) in column 'w': weights are never imputed")):
            lines = ["y,w,color,a,b"] + [f"{k},1,{c},{a},{b}" for k, c, a, b in rows]
            lines[5] = lines[5].replace(",1,", f",{bad},", 1)
            r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", self.write("bad.csv", lines),
                       "--weights-column", "w", *FIXED)
            self.assertEqual(r.returncode, 1)
            self.assertIn(words, r.stderr)
            self.assertEqual(r.stderr.strip().count("\n"), 0, r.stderr)
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", ones, "--weights-column", "y", *FIXED)
        self.assertIn("the weights column (--weights-column) is the label column", r.stderr)

    def test_delta_rule(self):
        path = self.numeric(table(200))
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, "--delta", "0.005", *FIXED)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(),
                         "dpsosp: error: --delta = 0.005: not below 1/n = 0.005 for the 200 records; delta must be "
                         "well below 1/n (at 1/n, publishing one whole record at random meets the guarantee): take "
                         "0.0005 or less")
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, "--delta", "1e-3", *FIXED)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("dpsosp: warning: --delta 0.001 is above 1/(10 n) = 0.0005 for the 200 records", r.stderr)
        r = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", path, "--delta", "1e-4", *FIXED)
        self.assertNotIn("warning", r.stderr)

    def test_summary_line_and_epsilon_digits(self):
        path = self.numeric(table())
        out = os.path.join(self.tmp.name, "r.json")
        args = ["run", "--model", "softmax", "--classes", "3", "--data", path, "--seed", "7", *KEY]
        r = dpsosp(*args, "--out", out, "--eval", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            j = json.load(f)
        last = r.stderr.splitlines()[-1]
        accuracy = j["diagnostics"]["eval"]["accuracy"]
        self.assertRegex(last, r"^dpsosp: done: spider-mf-adaptive, \(1, 1e-06\)-DP replace-one, \d+ steps, --eval accuracy "
                               r"[01]\.\d{4}, \d+(\.\d)? s, report in " + re.escape(out) + "$")
        self.assertIn(f"{j['steps']} steps", last)
        self.assertIn(f"accuracy {accuracy:.4f}", last)
        # Epsilon in words: 4 significant digits, whatever the float.
        r = dpsosp(*args, "--epsilon", "0.123456789", "--algo", "dpsgd")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["guarantee"].startswith("(0.1235, 1e-06)-DP"))
        # ... and at that epsilon the public noise rule fires: the summary line repeats its warning.
        self.assertRegex(r.stderr.splitlines()[-1], r"^dpsosp: done: dpsgd, \(0.1235, 1e-06\)-DP replace-one, \d+ steps, "
                                                     r"noise likely swamps the signal \(warning above\), "
                                                     r"\d+(\.\d)? s, report on stdout$")
        self.assertIn("dpsosp: warning: the calibrated noise is likely to swamp the signal", r.stderr)
        r = dpsosp(*args, "--quiet")
        self.assertNotIn("done:", r.stderr)

    def test_heavy_clipping_is_noted_for_the_data_owner(self):
        rows = [(k, c, 40 * a, 40 * b) for k, c, a, b in table()]
        path = self.numeric(rows)
        args = ["run", "--model", "softmax", "--classes", "3", "--data", path, "--seed", "7", *KEY, "--G", "0.1",
                "--M", "1"]
        r = dpsosp(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        fraction = json.loads(r.stdout)["diagnostics"]["clipped"]["fraction"]
        self.assertGreater(fraction, 0.5)
        self.assertIn(f"dpsosp: note: clipping changed {100 * fraction:.0f}% of the per-example gradients (G = 0.1; "
                      "a diagnostic of your data", r.stderr)
        r = dpsosp(*args, "--release-only")
        self.assertNotIn("clipping", r.stderr)
        # The default's G, estimated privately, clips half or more by design: no note.
        auto = dpsosp(*args[:-4], "--M", "1")
        self.assertEqual(auto.returncode, 0, auto.stderr)
        self.assertGreater(json.loads(auto.stdout)["diagnostics"]["clipped"]["fraction"], 0.5)
        self.assertNotIn("clipping", auto.stderr)
        scaled = [(k, 0, 0.3 * a, 0.3 * b) for k, c, a, b in table()]  # gradient norms below G = 1
        small = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", self.numeric(scaled), *FIXED,
                       "--scale", "none")  # as they are
        self.assertLess(json.loads(small.stdout)["diagnostics"]["clipped"]["fraction"], 0.5)
        self.assertNotIn("clipping", small.stderr)
        # A scaled run on few records takes the public G, a quarter of the box's cap: by design too, no note.
        few = dpsosp("run", "--model", "softmax", "--classes", "3", "--data", self.numeric(rows[:150]), "--seed",
                     "7", *KEY)
        self.assertEqual(few.returncode, 0, few.stderr)
        report = json.loads(few.stdout)
        self.assertTrue(report["scaling"]["public_constants"])
        self.assertGreater(report["diagnostics"]["clipped"]["fraction"], 0.5)
        self.assertNotIn("clipping", few.stderr)

    def test_large_values_keep_their_scale_and_the_top_is_warned(self):
        # A target about 3e6 (clamped near 1.05e6 before the private estimate's range reached 2^40) and a
        # feature about 1e13 (beyond 2^40: clamped, and the run says so, naming the column).
        lines = ["price,size,huge"]
        for i in range(2000):
            size = ((i * 37) % 101 - 50) / 25
            lines.append(f"{3e6 + 4e5 * size + 1e4 * ((i * 13) % 7 - 3)},{size},{1e13 * (1 + ((i * 11) % 9) / 100)}")
        path = self.write("large.csv", lines)
        r = dpsosp("run", "--model", "linear", "--data", path, "--epsilon", "1", "--seed", "7", *KEY, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        scaling = report["scaling"]
        self.assertLess(scaling["target"]["lower"], 2.5e6)
        self.assertGreater(scaling["target"]["upper"], 3.5e6)
        self.assertLess(scaling["target"]["upper"], 2 ** 23)
        self.assertEqual(scaling["upper"][1], 2.0 ** 40)
        self.assertEqual(scaling["estimate"]["public_range"], [-(2.0 ** 40), 2.0 ** 40])
        top = [w for w in report["warnings"] if "top octave" in w]
        self.assertEqual(len(top), 1, report["warnings"])
        self.assertTrue(top[0].startswith("scale: feature 1 (0-based) reaches the top octave"), top[0])
        self.assertIn("dpsosp: warning: " + top[0], r.stderr)


if __name__ == "__main__":
    unittest.main()
