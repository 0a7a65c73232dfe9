"""Opacus's DP-SGD on Fashion-MNIST with the small CNN of its MNIST example (examples/torch_cnn.py's SmallCNN, the
same images scaled to [-0.5, 0.5]), as that example runs it untuned: Poisson sampling (expected batch 64), clip 1,
SGD at learning rate 0.1, no momentum; the noise from make_private_with_epsilon for the target (its RDP accountant)
over the given passes. Prints `accuracy A epsilon E seconds_per_pass S`, as examples/torch_cnn.py does.

    PYTHONPATH=OPACUS_SRC /usr/bin/python3 bench/peers/opacus_cnn.py --epsilon 3 --epochs 1

OPACUS_SRC: Opacus v1.4.0's source (bench/peers/setup_opacus.sh).
"""
import argparse
import os
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from torch_cnn import SmallCNN, fashion_mnist  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--n", type=int, default=60000)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    from opacus import PrivacyEngine
    torch.manual_seed(a.seed)
    X, y, X_test, y_test = fashion_mnist(a.n)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=a.batch)
    net = SmallCNN()
    optimizer = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=0)
    started = time.time()
    engine = PrivacyEngine(accountant="rdp")
    net, optimizer, loader = engine.make_private_with_epsilon(
        module=net, optimizer=optimizer, data_loader=loader, target_epsilon=a.epsilon, target_delta=a.delta,
        epochs=a.epochs, max_grad_norm=1.0, poisson_sampling=True)
    for _ in range(a.epochs):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(net(xb), yb).backward()
            optimizer.step()
    seconds = time.time() - started
    with torch.no_grad():
        accuracy = float((net(X_test).argmax(1) == y_test).float().mean())
    print(f"accuracy {accuracy:.4f} epsilon {engine.get_epsilon(a.delta):.4g} seconds_per_pass {seconds / a.epochs:.1f}")


if __name__ == "__main__":
    main()
