"""The guarantee of the multi-epoch cells of docs/results-multi-epoch.md under
both neighbouring relations (docs/privacy-accounting.md section 1): each
cell's calibration is fixed before the run by public sizes, so one step of
`dpsosp run --max-steps 1` reports it (`epsilon_replace_one`,
`epsilon_zero_out`). Prints a markdown table.

    /usr/bin/python3 experiments/relations.py [--dpsosp build/dpsosp]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import config  # noqa: E402
import multi_epoch_mf  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpsosp", default=None)
    opts = ap.parse_args()
    binary = common.find_binary(opts.dpsosp)
    fm = config.FashionMNIST("reduced")
    print("| eps (target) | epochs | method | adjacency | epsilon_replace_one | epsilon_zero_out |")
    print("|---|---|---|---|---|---|")
    for eps in multi_epoch_mf.EPS:
        for epochs in (1, 2, 5, 10):
            for method in multi_epoch_mf.METHODS:
                if epochs == 1 and method == "spider-mf-order":
                    continue
                args = multi_epoch_mf.arglist(fm, method, eps, epochs, 1)
                out = subprocess.run([binary, "run", *args, "--max-steps", "1", "--no-certificate", "--quiet"],
                                     capture_output=True, text=True, check=True)
                j = json.loads(out.stdout)
                print("| %g | %d | %s | %s | %.4g | %.4g |" % (eps, epochs, multi_epoch_mf.LABEL[method],
                                                              j["adjacency"], j["epsilon_replace_one"],
                                                              j["epsilon_zero_out"]))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
