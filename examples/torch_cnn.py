"""A small CNN on Fashion-MNIST trained privately by dpsosp.torch (docs/torch.md).

    /usr/bin/python3 examples/torch_cnn.py --epsilon 3 --epochs 1 [--n 60000] [--delta 1e-5]

The network is the small CNN of Opacus's MNIST example (two convolutions with max-pooling, two linear
layers, ReLU). Images are scaled to [-0.5, 0.5] (a public map, nothing read from the records), Debian's
dataset-fashion-mnist files under /usr/share/datasets/fashion-mnist. The last line is
`accuracy A epsilon E seconds_per_pass S` (test accuracy, the run's guarantee, wall time per pass).
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch

DATA = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist(n):
    """The first n training images and every test image, scaled to [-0.5, 0.5], with their labels."""
    def images(name):
        return torch.from_numpy(idx(name).astype(np.float32) / 255 - 0.5).unsqueeze(1)
    return (images("train-images-idx3-ubyte.gz")[:n], torch.from_numpy(idx("train-labels-idx1-ubyte.gz")[:n].astype(np.int64)),
            images("t10k-images-idx3-ubyte.gz"), torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 8, 2, padding=3)
        self.conv2 = torch.nn.Conv2d(16, 32, 4, 2)
        self.fc1 = torch.nn.Linear(32 * 4 * 4, 32)
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2, 1)
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2, 1)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--epochs", type=int, default=1, help="passes over the records")
    ap.add_argument("--n", type=int, default=60000, help="the first n training records")
    ap.add_argument("--seed", type=int, default=0, help="the public seed (the network's start and the sample order)")
    ap.add_argument("--certificate", type=int, default=0, metavar="M",
                    help="also the SOSP certificate of the trained network on the first M test images (rho 1)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
    import dpsosp.torch  # the build tree's module unless dpsosp is installed
    torch.manual_seed(a.seed)
    X, y, X_test, y_test = fashion_mnist(a.n)
    net = SmallCNN()
    started = time.time()
    report = dpsosp.torch.fit(net, torch.nn.functional.cross_entropy, X, y, epsilon=a.epsilon, delta=a.delta,
                              epochs=a.epochs, seed=a.seed)
    seconds = time.time() - started
    with torch.no_grad():
        accuracy = float((net(X_test).argmax(1) == y_test).float().mean())
    print(f"{report['algo']}: {report['guarantee']}; {report['steps']} steps", file=sys.stderr)
    if a.certificate:
        c = dpsosp.torch.certify(net, torch.nn.functional.cross_entropy, X_test[: a.certificate],
                                 y_test[: a.certificate], rho=1.0)
        print(f"certificate on {a.certificate} test images: grad_norm {c['grad_norm']:.4g} lambda_min "
              f"{c['lambda_min']:.4g} sosp_gap {c['sosp_gap']:.4g} converged {c['lambda_converged']}", file=sys.stderr)
    print(f"accuracy {accuracy:.4f} epsilon {report['epsilon']:.4g} seconds_per_pass {seconds / a.epochs:.1f}")


if __name__ == "__main__":
    main()
