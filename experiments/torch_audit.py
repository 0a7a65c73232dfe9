#!/usr/bin/python3
"""The empirical privacy audit on the torch path (docs/privacy.md, "A PyTorch module's path"): every run takes its
per-example gradients from functorch through dpsosp.torch, honest and tampered, next to the audit of the library's
own canary model with the same options and seed.

    PYTHONPATH=build/python /usr/bin/python3 experiments/torch_audit.py [--runs 2000]

Prints a markdown table: the claim, the bound, mu, the verdict, whether the two paths agree bit for bit, and the
torch path's seconds.
"""
import argparse

import dpsosp
import dpsosp.torch

CASES = [
    ("one pass of 10 steps", dict(algo="spider-mf-adaptive", steps=10)),
    ("3 passes over the order", dict(algo="spider-mf-adaptive", steps=10, epochs=3, sampling="order")),
    ("3 Poisson passes (fit's default)", dict(algo="spider-mf-adaptive", steps=10, epochs=3)),
    ("dpsgd, one pass", dict(algo="dpsgd", steps=10)),
]
TAMPERS = ["none", "noise-half", "sensitivity-half"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("| configuration | tampering | claimed eps | eps lower bound | claimed mu | empirical mu "
          "| violation | same as the library's own model | seconds |")
    print("|---|---|---:|---:|---:|---:|---|---|---:|")
    for name, case in CASES:
        for tamper in TAMPERS:
            theirs = dpsosp.torch.audit(runs=args.runs, seed=args.seed, tamper=tamper, **case)
            own = dpsosp.audit(runs=args.runs, seed=args.seed, tamper=tamper, **case)
            same = all(own[k] == theirs[k] for k in own if k not in ("model", "seconds"))
            mu = "" if not theirs["claimed_mu"] else f"{theirs['claimed_mu']:.3f}"
            emp = "" if not theirs["claimed_mu"] else f"{theirs['empirical_mu']:.3f}"
            verdict = f"yes ({theirs['violation_by']})" if theirs["violation"] else "no"
            print(f"| {name} | {tamper} | {theirs['claimed_epsilon']:.3f} | {theirs['epsilon_lower_bound']:.3f} "
                  f"| {mu} | {emp} | {verdict} | {'yes' if same else 'NO'} | {theirs['seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
