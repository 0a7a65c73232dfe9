"""CSV files as people have them (docs/data-formats.md): what pandas' to_csv writes (its index as an unnamed first
column, a bool column as True / False) reads alike through dpsosp.run(data=...) and the CLI, as the DataFrame does."""
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np
import pandas as pd

import dpsosp
from test_tables import COLORS, KEY, SPECIES, frame

CLI = os.environ.get("DPSOSP_CLI")


class PandasExports(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def rule(self, data):
        return dict(data=data, label="species", classes=SPECIES, categorical={"color": COLORS}, impute="zero")

    def key_file(self):
        """KEY in a key file only its owner reads (--noise-key-file)."""
        key = os.path.join(self.tmp.name, "k")
        with open(key, "w") as f:
            f.write(KEY.hex() + "\n")
        os.chmod(key, 0o600)
        return key

    def test_a_written_index_is_warned_by_both_front_ends(self):
        # pandas' to_csv without index=False writes the index as a first column with no name: read as a feature
        # (the file is as it is), and the run warns of it in the report, as a RunWarning and on the CLI's stderr.
        indexed = os.path.join(self.tmp.name, "indexed.csv")
        frame().to_csv(indexed)
        note = (f"CSV file {indexed}: column 0 (0-based) has no name in the header line and is read as a feature; "
                "a table's index that pandas' to_csv wrote (without index=False) is no feature: save the table "
                "without it")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = dpsosp.run("softmax", **self.rule(indexed), epsilon=1)
        self.assertEqual(r["shape"]["features"], 6)
        self.assertEqual(r["warnings"][0], note)
        self.assertIn(note, [str(w.message) for w in caught])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            plain_path = os.path.join(self.tmp.name, "plain.csv")
            frame().to_csv(plain_path, index=False)
            plain = dpsosp.run("softmax", **self.rule(plain_path), epsilon=1)
        self.assertNotIn("has no name", " ".join(plain["warnings"] + [str(w.message) for w in caught]))
        if CLI:
            cli = subprocess.run([CLI, "run", "--model", "softmax", "--data", indexed, "--label", "species",
                                  "--classes", ",".join(SPECIES), "--categorical", "color=" + "|".join(COLORS),
                                  "--impute", "zero", "--epsilon", "1", "--quiet"], capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertEqual(json.loads(cli.stdout)["warnings"][0], note)
            self.assertIn("dpsosp: warning: " + note, cli.stderr)

    def test_bool_columns_read_alike_from_a_frame_and_its_csv(self):
        # A bool column is 1 / 0 in a DataFrame; pandas' to_csv writes it as True / False, which the CSV loader (and
        # an object column of that text) reads as 1 / 0 too: the same records, the same bits, from either.
        rng = np.random.default_rng(8)
        n = 200
        df = pd.DataFrame({"y": rng.random(n) < 0.5, "flag": rng.random(n) < 0.3, "x": np.round(rng.random(n), 6)})
        path = os.path.join(self.tmp.name, "bools.csv")
        df.to_csv(path, index=False)  # y and flag as the text True / False
        common = dict(epsilon=1, seed=3, noise_key=KEY, G=1, M=1)
        frame_run = dpsosp.run("logistic", df.drop(columns=["y"]), df["y"].astype(int), **common)
        csv_run = dpsosp.run("logistic", data=path, label="y", **common)
        self.assertEqual(list(frame_run["x"]), list(csv_run["x"]))
        text = df.astype({"flag": str})  # an object column of the text True / False
        np.testing.assert_array_equal(dpsosp.encode_table(text.drop(columns=["y"])),
                                      df.drop(columns=["y"]).to_numpy(dtype=float))
        if CLI:
            key = self.key_file()
            cli = subprocess.run([CLI, "run", "--model", "logistic", "--data", path, "--label", "y", "--epsilon", "1",
                                  "--seed", "3", "--noise-key-file", key, "--G", "1", "--M", "1", "--quiet"],
                                 capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertEqual(json.loads(cli.stdout)["x"], list(csv_run["x"]))

    def test_labels_from_the_default_column_are_named_by_both_front_ends(self):
        # A table with its label last, as scikit-learn's frames and many exports have it: the default label is the
        # first column. A refusal of those labels says where they were read from and which column to name; a
        # regression, which takes any number, fits the first column and warns that another is named like a label.
        rng = np.random.default_rng(5)
        df = pd.DataFrame({"age": np.round(rng.uniform(20, 80, 120), 1), "bmi": np.round(rng.uniform(18, 40, 120), 1),
                           "target": (rng.random(120) < 0.5).astype(int)})
        path = os.path.join(self.tmp.name, "last.csv")
        df.to_csv(path, index=False)
        origin = ("the labels were read from column 0, 'age' (the first column, the default), and column 'target' is "
                  "named like a label: {} reads them from it")
        refusal = ("logistic: a record's label is not 0, 1, -1 or +1 (0 is read as -1); which record is not said, as "
                   "a refusal must not depend on it; " + origin)
        with self.assertRaises(ValueError) as refused:
            dpsosp.run("logistic", data=path, epsilon=1)
        self.assertEqual(str(refused.exception), refusal.format("label='target'"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = dpsosp.run("linear", data=path, epsilon=1)
        warning = f"CSV file {path}: " + origin.format("label='target'") + " (label=0 keeps the first column and this " \
            "warning away)"
        self.assertEqual(r["warnings"][0], warning)
        self.assertIn(warning, [str(w.message) for w in caught])
        chosen = dpsosp.run("logistic", data=path, label="target", epsilon=1)
        self.assertFalse([w for w in chosen["warnings"] if "the labels were read" in w])
        if CLI:
            cli = subprocess.run([CLI, "run", "--model", "logistic", "--data", path, "--epsilon", "1"],
                                 capture_output=True, text=True)
            self.assertEqual(cli.returncode, 1)
            self.assertEqual(cli.stderr, f"dpsosp: error: --data {path}: " + refusal.format("--label target") + "\n")
            cli = subprocess.run([CLI, "run", "--model", "linear", "--data", path, "--epsilon", "1", "--quiet"],
                                 capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertEqual(json.loads(cli.stdout)["warnings"][0], warning.replace("label='target'", "--label target")
                             .replace("label=0", "--label 0"))


if __name__ == "__main__":
    unittest.main()
