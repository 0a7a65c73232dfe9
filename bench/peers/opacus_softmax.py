"""Opacus's DP-SGD on a Fashion-MNIST subset: softmax regression with a bias (nn.Linear(784, 10)), Poisson
sampling (expected batch 256), clip 1, plain SGD, the noise from Opacus's get_noise_multiplier for the target
(its RDP accountant), the given passes. Prints one JSON line: accuracy, epsilon, seconds.

    PYTHONPATH=OPACUS_SRC /usr/bin/python3 bench/peers/opacus_softmax.py --n 8000 --epsilon 1 --epochs 5 --lr 1

OPACUS_SRC: Opacus v1.4.0's source (bench/peers/README.md: how to make it from a fetched snapshot).
"""
import argparse
import json
import os
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmnist  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1, help="the subset and the run's randomness")
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    from opacus import PrivacyEngine
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    start = time.time()
    X, y = fmnist.train(a.n, a.seed)
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
    Xt, yt = fmnist.test()
    with torch.no_grad():
        acc = (model(torch.from_numpy(Xt)).argmax(1).numpy() == yt).mean()
    print(json.dumps({"accuracy": float(acc), "epsilon": engine.get_epsilon(a.delta), "seconds": seconds,
                      "noise_multiplier": optimizer.noise_multiplier}))


if __name__ == "__main__":
    main()
