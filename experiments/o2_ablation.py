"""spider-mf-adaptive with and without O2 steps (the evidence for --o2's default).

Known-population problems of docs/results.md section 1 (config.PROBLEMS: d = 8,
G = 6, M = 20, rho = 6, start at the saddle), n = 1e5, delta = 1e-6, seeds 1-5,
eps in {4, 1000}: `dpsosp run --algo spider-mf-adaptive --o2 on|off`, the
median population SOSP gap of each cell. Prints a markdown table (quoted in
docs/parameters.md, row "o2").

    /usr/bin/python3 experiments/o2_ablation.py [--dpsosp build/dpsosp] [--jobs 2]

Runs are cached in experiments/out/o2-ablation.jsonl.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import config  # noqa: E402

N = 100000
EPS = [4.0, 1000.0]
SEEDS = [1, 2, 3, 4, 5]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpsosp", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    opts = ap.parse_args()
    binary = common.find_binary(opts.dpsosp)
    cache = common.Cache(os.path.join(common.REPO, "experiments", "out", "o2-ablation.jsonl"))

    def args(problem, eps, o2, seed):
        return config.synthetic_args(problem, N, eps, "spider-mf-adaptive", seed) + ["--o2", o2]

    runs = [args(p, e, o, s) for p in config.PROBLEMS for e in EPS for o in ("off", "on") for s in SEEDS]
    failures = common.run_all(binary, cache, runs, opts.jobs, label="o2-ablation")
    if failures:
        sys.exit("o2_ablation.py: %d runs failed" % len(failures))
    print("| problem | eps | median gap, --o2 off | median gap, --o2 on |")
    print("|---|---|---|---|")
    for p in config.PROBLEMS:
        for e in EPS:
            med = {o: statistics.median(cache.get(args(p, e, o, s))["report"]["certificate"]["sosp_gap"]
                                        for s in SEEDS) for o in ("off", "on")}
            print("| %s | %s | %.4f | %.4f |" % (p, config.eps_text(e), med["off"], med["on"]))


if __name__ == "__main__":
    main()
