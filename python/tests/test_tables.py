"""Tables in Python (docs/data-formats.md): pandas DataFrames with string labels through public class names,
categorical columns one-hot from public categories, missing values refused (naming row and column) or imputed;
the same rules, and the same run, as the CLI's CSV loader."""
import json
import os
import pickle
import subprocess
import tempfile
import unittest
import warnings

import numpy as np
import pandas as pd

import dpsosp
from dpsosp import DPClassifier

CLI = os.environ.get("DPSOSP_CLI")
SPECIES = ["setosa", "versicolor", "virginica"]
COLORS = ["red", "green", "blue"]
KEY = bytes(range(16))  # a fixed noise key: the same bits from two runs


def frame(n=600, seed=3):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 3, n)
    df = pd.DataFrame({"species": [SPECIES[i] for i in k],
                       "color": [COLORS[i] for i in rng.integers(0, 3, n)],
                       "a": np.round(rng.standard_normal(n) * 0.5 + 1.0 * k, 6),
                       "b": np.round(rng.standard_normal(n) * 0.5 - 0.8 * k, 6)})
    df.loc[7, "a"] = np.nan
    df.loc[11, "color"] = None
    return df


class EncodeTable(unittest.TestCase):
    def test_one_hot_and_imputation(self):
        df = pd.DataFrame({"color": ["red", "blue", None], "age": [30.0, np.nan, 40.0]})
        X = dpsosp.encode_table(df, categorical={"color": COLORS}, impute="zero")
        np.testing.assert_array_equal(X, [[1, 0, 0, 30], [0, 0, 1, 0], [0, 0, 0, 40]])
        X = dpsosp.encode_table(df, categorical={"color": COLORS}, impute={"color": "green", "age": 35})
        np.testing.assert_array_equal(X, [[1, 0, 0, 30], [0, 0, 1, 35], [0, 1, 0, 40]])
        # Arrays: columns by index.
        X = dpsosp.encode_table(np.array([[1.0, np.nan], [2.0, 3.0]]), impute={1: -1})
        np.testing.assert_array_equal(X, [[1, -1], [2, 3]])

    def test_missing_values_are_refused_naming_row_and_column(self):
        df = pd.DataFrame({"color": ["red", "blue", "red"], "age": [30.0, np.nan, 40.0]})
        with self.assertRaisesRegex(ValueError, r"^X: row 1 \(0-based\), column 'age': missing value; fill it in, "
                                                r"or declare a rule: impute='zero' or impute=\{'age': VALUE\}$"):
            dpsosp.encode_table(df, categorical={"color": COLORS})
        with self.assertRaisesRegex(ValueError, r"column 'color' is not numeric \(object\); declare its public "
                                                r"categories"):
            dpsosp.encode_table(df, impute="zero")
        with self.assertRaisesRegex(ValueError, r"impute\['color'\]: 'pink' is not one of the column's categories"):
            dpsosp.encode_table(df.assign(color=["red", None, "red"]), categorical={"color": COLORS},
                                impute={"color": "pink", "age": 1})

    def test_pandas_nullable_and_category_columns(self):
        # pandas' nullable numbers (Int64, Float64, boolean) are numbers, their pandas.NA a missing value; a
        # category or string column is refused in one line until its categories are declared (once a TypeError
        # from numpy for all three kinds).
        rng = np.random.default_rng(5)
        n = 120
        ages, counts, shares = rng.integers(20, 70, n), rng.integers(0, 5, n), np.round(rng.random(n), 6)
        flags = rng.random(n) < 0.4
        y = (counts + rng.standard_normal(n) > 2).astype(int)
        plain = pd.DataFrame({"age": ages, "count": counts.astype(float), "share": shares, "flag": flags.astype(float)})
        nullable = pd.DataFrame({"age": ages, "count": pd.array(counts, dtype="Int64"),
                                 "share": pd.array(shares, dtype="Float64"), "flag": pd.array(flags, dtype="boolean")})
        np.testing.assert_array_equal(dpsosp.encode_table(nullable), plain.to_numpy())
        runs = [dpsosp.run("logistic", X, y, epsilon=1, seed=4, noise_key=KEY)["x"] for X in (plain, nullable)]
        np.testing.assert_array_equal(runs[0], runs[1])
        fits = [DPClassifier(epsilon=1, random_state=4, noise_key=KEY).fit(X, y) for X in (plain, nullable)]
        np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
        np.testing.assert_array_equal(fits[0].predict(plain), fits[1].predict(nullable))
        holes = nullable.copy()
        holes.loc[9, "count"] = pd.NA
        for fit in (lambda: dpsosp.encode_table(holes), lambda: dpsosp.run("logistic", holes, y, epsilon=1),
                    lambda: DPClassifier(epsilon=1).fit(holes, y)):
            with self.assertRaisesRegex(ValueError, r"^X: row 9 \(0-based\), column 'count': missing value; "):
                fit()
        filled = DPClassifier(epsilon=1, impute={"count": 0}, random_state=4, noise_key=KEY).fit(holes, y)
        self.assertEqual(filled.n_features_in_, 4)
        cities = pd.Categorical(rng.choice(["Oslo", "Rome"], n))
        for column, kind in ((cities, "category"), (pd.array(rng.choice(["a", "b"], n), dtype="string"), "string")):
            X = plain.assign(city=column)
            for fit in (lambda: dpsosp.encode_table(X), lambda: dpsosp.run("logistic", X, y, epsilon=1),
                        lambda: DPClassifier(epsilon=1).fit(X, y)):
                with self.assertRaisesRegex(ValueError, rf"^X: column 'city' is not numeric \({kind}\); declare its "
                                                        r"public categories: categorical=\{'city': \[\.\.\.\]\}$"):
                    fit()
        declared = dpsosp.encode_table(plain.assign(city=cities), categorical={"city": ["Oslo", "Rome"]})
        np.testing.assert_array_equal(declared[:, 4:], np.column_stack([cities == "Oslo", cities == "Rome"]))

    def test_undeclared_values_are_refused_in_words_that_name_no_record(self):
        messages = []
        for bad_row, bad in ((2, "pink"), (5, "teal")):
            colors = ["red"] * 8
            colors[bad_row] = bad
            with self.assertRaises(ValueError) as raised:
                dpsosp.encode_table(pd.DataFrame({"color": colors, "x": range(8)}), categorical={"color": COLORS})
            messages.append(str(raised.exception))
        self.assertEqual(messages[0], messages[1])
        self.assertEqual(messages[0], "X: a value in column 'color' is not one of its 3 declared categories "
                                      "(red|green|blue); every value must be one of them")
        labels = []
        for bad_row in (1, 6):
            y = ["setosa"] * 8
            y[bad_row] = "rose"
            with self.assertRaises(ValueError) as raised:
                dpsosp.run("softmax", np.ones((8, 2)), y, classes=SPECIES, seed=1)
            labels.append(str(raised.exception))
        self.assertEqual(labels[0], labels[1])
        self.assertIn("a label is not one of the 3 declared classes (setosa,versicolor,virginica)", labels[0])


class DataFrames(unittest.TestCase):
    @unittest.skipUnless(CLI, "DPSOSP_CLI not set")
    def test_a_dataframe_runs_as_the_same_table_in_the_cli(self):
        df = frame()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.csv")
            df.to_csv(path, index=False)  # missing values as empty fields
            key = os.path.join(tmp, "k")
            with open(key, "w") as f:
                f.write("00112233445566778899aabbccddeeff\n")
            os.chmod(key, 0o600)  # a key file others can read is refused
            common = ["--seed", "5", "--noise-key-file", key, "--G", "1", "--M", "1", "--quiet"]
            cli = subprocess.run([CLI, "run", "--model", "softmax", "--data", path, "--label", "species",
                                  "--classes", ",".join(SPECIES), "--categorical", "color=" + "|".join(COLORS),
                                  "--impute", "zero", *common], capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            import json
            j = json.loads(cli.stdout)
            r = dpsosp.run("softmax", df, label="species", classes=SPECIES, categorical={"color": COLORS},
                           impute="zero", seed=5, noise_key_file=key, G=1, M=1)
        self.assertEqual(r["shape"]["features"], 5)
        self.assertEqual(r["shape"]["classes"], 3)
        self.assertEqual(r["n"], j["n"])
        self.assertEqual(list(r["x"]), j["x"])

    def test_one_hot_features_take_their_public_box(self):
        df = frame().dropna()
        r = dpsosp.run("softmax", df, label="species", classes=SPECIES, categorical={"color": COLORS}, seed=2,
                       noise_key=bytes(16), G=1, M=1)
        s = r["scaling"]
        self.assertEqual(s["sources"], ["public (one-hot)"] * 3 + ["private"] * 2)
        self.assertEqual((s["lower"][:3], s["upper"][:3]), ([0.0] * 3, [1.0] * 3))
        self.assertEqual(s["estimate"]["columns"], 2)
        # The same numbers as an array (no declared categories): every feature estimated.
        X = dpsosp.encode_table(df.drop(columns=["species"]), categorical={"color": COLORS})
        a = dpsosp.run("softmax", X, df["species"], classes=SPECIES, seed=2, noise_key=bytes(16), G=1, M=1)
        self.assertEqual(a["scaling"]["sources"], ["private"] * 5)
        self.assertEqual(a["scaling"]["estimate"]["columns"], 5)

    def test_label_column_or_y(self):
        df = frame().dropna()
        y = df["species"]
        a = dpsosp.run("softmax", df, label="species", classes=SPECIES, categorical={"color": COLORS}, seed=2,
                       noise_key=bytes(16), G=1, M=1)
        b = dpsosp.run("softmax", df.drop(columns=["species"]), y, classes=SPECIES, categorical={"color": COLORS},
                       seed=2, noise_key=bytes(16), G=1, M=1)
        np.testing.assert_array_equal(a["x"], b["x"])
        with self.assertRaisesRegex(ValueError, "label: X has no column 'kind'"):
            dpsosp.run("softmax", df, label="kind", classes=SPECIES)
        with self.assertRaisesRegex(ValueError, "column 'color' is not numeric"):
            dpsosp.run("softmax", df, label="species", classes=SPECIES)

    def test_delta_above_a_tenth_of_1_over_n_warns(self):
        X = np.random.default_rng(1).standard_normal((500, 2))
        y = (X[:, 0] > 0).astype(float)
        with self.assertWarnsRegex(dpsosp.RunWarning, r"delta 0.001 is above 1/\(10 n\) = 0.0002 for the 500 records"):
            dpsosp.run("logistic", X, y, delta=1e-3, seed=1, G=1, M=1)
        with self.assertRaisesRegex(ValueError, r"^delta = 0.002: not below 1/n = 0.002 for the 500 records"):
            dpsosp.run("logistic", X, y, delta=2e-3, seed=1, G=1, M=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error", dpsosp.RunWarning)
            dpsosp.run("logistic", X, y, delta=1e-5, seed=1, G=1, M=1)


class Estimators(unittest.TestCase):
    def test_classifier_on_a_dataframe_with_strings(self):
        df = frame(1500).dropna()
        X, y = df.drop(columns=["species"]), df["species"]
        clf = DPClassifier(epsilon=3, classes=SPECIES, categorical={"color": COLORS}, random_state=0,
                           noise_key=bytes(16)).fit(X, y)
        self.assertEqual(clf.n_features_in_, 5)
        predicted = clf.predict(X)
        self.assertTrue(set(predicted) <= set(SPECIES))
        # Far better than the majority class on these separable classes (a fixed noise key: deterministic).
        self.assertGreater(np.mean(predicted == y.to_numpy()), 0.5)
        bad = y.copy()
        bad.iloc[3] = "rose"
        with self.assertRaisesRegex(ValueError, r"^y: a label is not one of the 3 declared classes "
                                                r"\(setosa,versicolor,virginica\); .*which record is not said"):
            DPClassifier(classes=SPECIES, categorical={"color": COLORS}).fit(X, bad)
        holes = X.copy()
        holes.iloc[4, holes.columns.get_loc("a")] = np.nan
        with self.assertRaisesRegex(ValueError, r"row 4 \(0-based\), column 'a': missing value"):
            DPClassifier(classes=SPECIES, categorical={"color": COLORS}).fit(holes, y)
        clf = DPClassifier(epsilon=3, classes=SPECIES, categorical={"color": COLORS}, impute="zero",
                           random_state=0, noise_key=bytes(16)).fit(holes, y)
        self.assertEqual(clf.predict(holes).shape, (len(holes),))


    def test_save_and_load_keep_the_tables_rule(self):
        # A fit on a raw DataFrame: string labels, a categorical column, missing values imputed. The model file
        # keeps the labels, the columns and the declared rule, so the loaded model predicts from the same raw table.
        df = frame(1500)
        X, y = df.drop(columns=["species"]), df["species"]
        clf = DPClassifier(epsilon=3, classes=SPECIES, categorical={"color": COLORS}, impute="zero", random_state=0,
                           noise_key=bytes(16)).fit(X, y)
        self.assertEqual(list(clf.feature_names_in_), ["color", "a", "b"])
        reg = dpsosp.DPRegressor(epsilon=3, categorical={"color": COLORS}, impute={"color": "green", "a": 0.5},
                                 random_state=0, noise_key=bytes(16)).fit(X, df["b"].fillna(0) + 1)
        with tempfile.TemporaryDirectory() as tmp:
            path, data = os.path.join(tmp, "m.json"), os.path.join(tmp, "t.csv")
            dpsosp.save(path, clf)
            with open(path) as f:
                kept = json.load(f)
            model = dpsosp.load(path)
            dpsosp.save(path, reg)
            loaded_reg = dpsosp.load(path)
            if CLI:  # the CLI reads the same file (extra keys and all), with its own table options
                dpsosp.save(path, clf)
                df.to_csv(data, index=False)
                cli = subprocess.run([CLI, "predict", "--point", path, "--data", data, "--label", "species",
                                      "--categorical", "color=" + "|".join(COLORS), "--impute", "zero"],
                                     capture_output=True, text=True)
                self.assertEqual(cli.returncode, 0, cli.stderr)
                np.testing.assert_array_equal(cli.stdout.split()[1:], clf.predict(X))
        self.assertEqual((kept["feature_names"], kept["categorical"], kept["impute"]),
                         (["color", "a", "b"], {"color": COLORS}, "zero"))
        self.assertEqual(list(model.class_names), list(clf.classes_))
        self.assertEqual(model.feature_names, list(clf.feature_names_in_))
        np.testing.assert_array_equal(model.predict(X), clf.predict(X))
        np.testing.assert_array_equal(model.predict_proba(X), clf.predict_proba(X))
        self.assertEqual(loaded_reg.impute, {"color": "green", "a": 0.5})
        np.testing.assert_array_equal(loaded_reg.predict(X), reg.predict(X))
        with self.assertRaisesRegex(ValueError, r"^X: its columns \(a,color,b\) are not the model's features"):
            model.predict(X[["a", "color", "b"]])
        # Pickle keeps the estimator whole, as before.
        again = pickle.loads(pickle.dumps(clf))
        np.testing.assert_array_equal(again.predict(X), clf.predict(X))
        self.assertEqual(list(again.feature_names_in_), ["color", "a", "b"])
    def test_the_estimators_give_one_hot_features_their_public_box_as_run_does(self):
        # Before: DPClassifier encoded X before its run, so the private scale estimated the one-hot features too
        # (more columns, more noise on each): not dpsosp.run's fit of the same table.
        df = frame(1500)
        X, y = df.drop(columns=["species"]), df["species"]
        rule = dict(classes=SPECIES, categorical={"color": COLORS}, impute="zero")
        clf = DPClassifier(epsilon=1, random_state=0, noise_key=bytes(16), **rule).fit(X, y)
        r = dpsosp.run("softmax", df, label="species", seed=0, noise_key=bytes(16), **rule)
        self.assertEqual(clf.report_["scaling"]["sources"], ["public (one-hot)"] * 3 + ["private"] * 2)
        self.assertEqual(clf.report_["scaling"]["sources"], r["scaling"]["sources"])
        np.testing.assert_array_equal(clf.report_["x"], r["x"])

    def test_a_runs_report_keeps_the_tables_rule_as_the_clis(self):
        # dpsosp.run on a raw DataFrame writes the declared rule into its report under the CLI's keys
        # (class_names, label, categorical, impute): dpsosp.save keeps it, dpsosp.load predicts from the raw
        # table, and `dpsosp predict` reads the same table as a CSV with no options.
        df = frame(1500)
        r = dpsosp.run("softmax", df, label="species", classes=SPECIES, categorical={"color": COLORS}, impute="zero",
                       seed=0, noise_key=bytes(16))
        self.assertEqual((r["class_names"], r["label"], r["categorical"], r["impute"]),
                         (SPECIES, "species", {"color": COLORS}, "zero"))
        plain = dpsosp.run("softmax", frame(1500)[["a", "b"]].fillna(0), np.arange(1500) % 3, classes=3, seed=0)
        self.assertFalse({"class_names", "label", "categorical", "impute"} & set(plain))
        X = df.drop(columns=["species"])
        with tempfile.TemporaryDirectory() as tmp:
            path, data = os.path.join(tmp, "r.json"), os.path.join(tmp, "t.csv")
            dpsosp.save(path, r)
            model = dpsosp.load(path)
            self.assertEqual(model.label, "species")
            ours = model.predict(X)
            self.assertTrue(set(ours) <= set(SPECIES))
            if CLI:
                df.to_csv(data, index=False)
                cli = subprocess.run([CLI, "predict", "--point", path, "--data", data], capture_output=True, text=True)
                self.assertEqual(cli.returncode, 0, cli.stderr)
                np.testing.assert_array_equal(cli.stdout.split()[1:], ours)



class CsvFiles(unittest.TestCase):
    """run(data='t.csv'): the CLI's loader and table rule, the same records as `dpsosp run --data t.csv`."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "t.csv")
        frame().to_csv(self.path, index=False)  # missing values as empty fields

    def tearDown(self):
        self.tmp.cleanup()

    def rule(self, **changes):
        return {**dict(data=self.path, label="species", classes=SPECIES, categorical={"color": COLORS},
                       impute="zero"), **changes}

    def test_a_csv_file_runs_as_the_dataframe_and_as_the_cli(self):
        r = dpsosp.run("softmax", **self.rule(), seed=5, noise_key=bytes(range(16)), G=1, M=1)
        df = dpsosp.run("softmax", frame(), label="species", classes=SPECIES, categorical={"color": COLORS},
                        impute="zero", seed=5, noise_key=bytes(range(16)), G=1, M=1)
        self.assertEqual(list(r["x"]), list(df["x"]))
        self.assertEqual((r["n"], r["shape"]["features"], r["class_names"], r["label"], r["categorical"],
                          r["impute"]), (600, 5, SPECIES, "species", {"color": COLORS}, "zero"))
        if CLI:
            key = os.path.join(self.tmp.name, "k")
            with open(key, "w") as f:
                f.write(bytes(range(16)).hex() + "\n")
            os.chmod(key, 0o600)
            cli = subprocess.run([CLI, "run", "--model", "softmax", "--data", self.path, "--label", "species",
                                  "--classes", ",".join(SPECIES), "--categorical", "color=" + "|".join(COLORS),
                                  "--impute", "zero", "--seed", "5", "--noise-key-file", key, "--G", "1", "--M", "1",
                                  "--quiet"], capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            j = json.loads(cli.stdout)
            self.assertEqual(list(r["x"]), j["x"])
            self.assertEqual(r["scaling"]["sources"], j["scaling"]["sources"])

    def test_a_csv_files_refusals_name_the_keywords(self):
        for changes, words in (
                (dict(impute=None), "missing value (an empty field) in column 'a': fill it in, or declare a rule: "
                                    "impute='zero' or impute={'a': VALUE}"),
                (dict(categorical=None), "declare its categories, categorical={COL: [a, b, c]}"),
                (dict(label="nope"), "the label column (label=): the header line has no column 'nope'"),
                (dict(classes=["setosa", "versicolor", "other"]), "(classes=[setosa,versicolor,other])"),
                (dict(categorical={"species": COLORS}), "is the label column; a label's names are the classes "
                                                        "(classes=)"),
                (dict(stream=True), "stream=True reads a record file; a CSV table is loaded whole"),
                (dict(y=np.zeros(600)), "y: a CSV table holds its labels")):
            with self.subTest(changes=changes):
                with self.assertRaises(ValueError) as e:
                    dpsosp.run("softmax", **self.rule(**changes), epsilon=1)
                self.assertIn(words, str(e.exception))
                self.assertNotIn("--", str(e.exception))
        svm = os.path.join(self.tmp.name, "t.svm")
        with open(svm, "w") as f:
            f.write("1 1:0.5\n")
        with self.assertRaises(ValueError) as e:
            dpsosp.run("logistic", data=svm, epsilon=1)
        self.assertEqual(str(e.exception), f"data: {svm}: a libsvm file; dpsosp.run reads a CSV table or a record "
                                           "file (dpsosp convert); give other records as X")


if __name__ == "__main__":
    unittest.main()
