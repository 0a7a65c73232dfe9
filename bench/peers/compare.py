"""dpsosp at its defaults against Opacus (v1.4.0, Poisson DP-SGD, its RDP accountant, clip 1, expected batch
256) on Fashion-MNIST subsets: softmax regression with a bias, the same budget and passes. Opacus at learning
rate 1 and the best of {0.5, 1, 2, 4, 8} (best median over the seeds per cell; its tuning is not charged).
Prints the markdown table of docs/results-peers.md; every run is cached in bench/peers/out/runs.jsonl (keyed
by its arguments), so a rerun repeats only what is missing.

    /usr/bin/python3 bench/peers/compare.py --opacus OPACUS_SRC [--n 2000 8000 20000 60000] [--eps 1 3 8]
        [--passes 1 5] [--seeds 1 2 3] [--dpsosp build/dpsosp] [--jobs 1] [--dpsosp-only]

OPACUS_SRC: a folder holding Opacus v1.4.0's `opacus` package and an `opt_einsum` stand-in
(bench/peers/README.md). Not part of CI. With --dpsosp-only and no Opacus run cached, the Opacus columns are
the medians kept in bench/peers/opacus-medians.json (marked *).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fmnist  # noqa: E402

GRID = [0.5, 1.0, 2.0, 4.0, 8.0]
DELTA = 1e-5


DEFAULT_PASSES = "@default-passes"


def dpsosp_args(binary, images, eps, passes, out, extra):
    """A variant's own --epsilon or --epochs replaces the cell's; the variant argument @default-passes gives no
    --epochs at all (the default run's passes, dpsosp::default_passes)."""
    a = [binary, "run", "--model", "softmax", "--classes", "10", "--data", images, "--eval",
         os.path.join(fmnist.FM_DIR, "t10k-images-idx3-ubyte.gz"), "--delta", repr(DELTA),
         "--no-certificate", "--quiet", "--threads", "1", "--out", out]
    a += [] if "--epsilon" in extra else ["--epsilon", repr(eps)]
    a += [] if "--epochs" in extra or DEFAULT_PASSES in extra else ["--epochs", str(passes)]
    if "--epochs" not in extra and DEFAULT_PASSES not in extra and passes > 1 and "--adjacency" not in extra:
        a += ["--adjacency", "zero-out"]  # Opacus's relation for its epochs (dpsosp's default: replace-one)
    return a + [x for x in extra if x != DEFAULT_PASSES]


def run_dpsosp(binary, folder, n, seed, eps, passes, extra):
    images = fmnist.idx_files(n, seed, folder)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        subprocess.run(dpsosp_args(binary, images, eps, passes, out, extra) + ["--seed", str(seed)], check=True,
                       stderr=subprocess.DEVNULL)
        with open(out) as f:
            r = json.load(f)
    return {"accuracy": r["diagnostics"]["eval"]["accuracy"], "epsilon": r["epsilon"], "adjacency": r["adjacency"],
            "epsilon_replace_one": r.get("epsilon_replace_one"), "epsilon_zero_out": r.get("epsilon_zero_out"),
            "seconds": r["diagnostics"]["seconds"], "load_seconds": r["diagnostics"]["load_seconds"]}


def run_opacus(src, n, seed, eps, passes, lr):
    env = dict(os.environ, PYTHONPATH=src)
    p = subprocess.run([sys.executable, os.path.join(HERE, "opacus_softmax.py"), "--n", str(n), "--seed", str(seed),
                        "--epsilon", repr(eps), "--delta", repr(DELTA), "--epochs", str(passes), "--lr", repr(lr)],
                       check=True, capture_output=True, text=True, env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opacus", help="folder with Opacus v1.4.0 (bench/peers/README.md)")
    ap.add_argument("--dpsosp", default=os.path.join(HERE, "..", "..", "build", "dpsosp"))
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 8000, 20000, 60000])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 3.0, 8.0])
    ap.add_argument("--passes", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--dpsosp-only", action="store_true", help="only the dpsosp runs (Opacus from the cache)")
    ap.add_argument("--cache", default=os.path.join(HERE, "out", "runs.jsonl"))
    ap.add_argument("--opacus-medians", default=os.path.join(HERE, "opacus-medians.json"),
                    help="Opacus's medians per cell, printed where the cache holds no Opacus run of that cell "
                         "(marked *); default: the 2026-12-03 run")
    ap.add_argument("--tag", default="", help="a name for this dpsosp build in the cache (default: its path)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                    help="a further dpsosp column: NAME=extra run arguments ('poisson=--sampling poisson'; "
                         "'passes=@default-passes': no --epochs, the default run's passes); one column per "
                         "variant, after the default")
    a = ap.parse_args()
    os.makedirs(os.path.dirname(a.cache), exist_ok=True)
    folder = os.path.join(os.path.dirname(a.cache), "data")
    os.makedirs(folder, exist_ok=True)
    cache = {}
    if os.path.exists(a.cache):
        with open(a.cache) as f:
            for line in f:
                row = json.loads(line)
                cache[row["key"]] = row["result"]
    tag = a.tag or os.path.abspath(a.dpsosp)
    variants = [("default", [])] + [(v.partition("=")[0], v.partition("=")[2].split()) for v in a.variant]
    jobs = {}
    for n in a.n:
        for seed in a.seeds:
            fmnist.idx_files(n, seed, folder)
            for eps in a.eps:
                for passes in a.passes:
                    for name, extra in variants:
                        key = ["dpsosp", tag, n, seed, eps, passes] + ([] if name == "default" else [extra])
                        jobs[json.dumps(key)] = (run_dpsosp, (os.path.abspath(a.dpsosp), folder, n, seed, eps,
                                                              passes, extra))
                    for lr in ([] if a.dpsosp_only else GRID):
                        jobs[json.dumps(["opacus", n, seed, eps, passes, lr])] = (
                            run_opacus, (a.opacus, n, seed, eps, passes, lr))
    todo = [k for k in jobs if k not in cache]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool, open(a.cache, "a") as f:
        futures = {pool.submit(jobs[k][0], *jobs[k][1]): k for k in todo}
        for fut in concurrent.futures.as_completed(futures):
            k = futures[fut]
            cache[k] = fut.result()
            f.write(json.dumps({"key": k, "result": cache[k]}) + "\n")
            f.flush()
            print("done", k, cache[k]["accuracy"], file=sys.stderr)

    def med(key_of, seeds, field="accuracy", scale=100):
        vals = [cache[key_of(s)][field] for s in seeds if key_of(s) in cache]
        return scale * float(np.median(vals)) if len(vals) == len(seeds) and None not in vals else float("nan")

    def dkey(n, eps, passes, extra):
        return lambda s: json.dumps(["dpsosp", tag, n, s, eps, passes] + ([] if extra is None else [extra]))

    with open(a.opacus_medians) as f:
        kept = json.load(f)["cells"]
    marked = False
    cols = "".join(f" dpsosp {name} (replace-one eps) |" for name, _ in variants[1:])
    print(f"| n | passes | eps | dpsosp default |{cols} Opacus lr 1 | Opacus best lr (lr) | default - best |")
    print("|---:|---:|---:|---:|" + "---:|" * (len(variants) - 1) + "---:|---:|---:|")
    for n in a.n:
        for passes in a.passes:
            for eps in a.eps:
                d = med(dkey(n, eps, passes, None), a.seeds)
                more = "".join(f" {med(dkey(n, eps, passes, x), a.seeds):.1f} "
                               f"({med(dkey(n, eps, passes, x), a.seeds, 'epsilon_replace_one', 1):.2f}) |"
                               for _, x in variants[1:])
                by_lr = {lr: med(lambda s: json.dumps(["opacus", n, s, eps, passes, lr]), a.seeds) for lr in GRID}
                best = max(by_lr, key=lambda lr: -1 if np.isnan(by_lr[lr]) else by_lr[lr])
                lr1, top, star = by_lr[1.0], by_lr[best], ""
                cell = kept.get(f"{n} {passes} {eps:g}")
                if all(np.isnan(v) for v in by_lr.values()) and cell:
                    lr1, top, best, star, marked = cell["lr1"], cell["best"], cell["best_lr"], "*", True
                print(f"| {n} | {passes} | {eps:g} | {d:.1f} |{more} {lr1:.1f}{star} | {top:.1f}{star} ({best:g}) | "
                      f"{d - top:+.1f} |")
    if marked:
        print(f"\n\\* Opacus's medians from {os.path.relpath(a.opacus_medians)} (no Opacus run in the cache).")


if __name__ == "__main__":
    main()
