"""Fashion-MNIST subsets shared by the peer scripts: the first n records of a seeded permutation of the
60,000 training records (pixels / 255, in [0, 1]), the 10,000 test records, and the subset written as IDX
files for `dpsosp run`."""
import gzip
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments"))
from fmnist_eval import read_idx  # noqa: E402  the IDX reader the experiments use

FM_DIR = "/usr/share/datasets/fashion-mnist"


def _write_idx(path, arr):
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(struct.pack(">I", 0x800 | arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + arr.tobytes())


def raw_train(n, seed):
    """The subset as uint8 images (n x 28 x 28) and labels."""
    X = read_idx(os.path.join(FM_DIR, "train-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(FM_DIR, "train-labels-idx1-ubyte.gz"))
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[idx], y[idx]


def train(n, seed):
    X, y = raw_train(n, seed)
    return X.reshape(len(y), -1).astype(np.float32) / 255.0, y.astype(np.int64)


def test():
    X = read_idx(os.path.join(FM_DIR, "t10k-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(FM_DIR, "t10k-labels-idx1-ubyte.gz"))
    return X.reshape(len(y), -1).astype(np.float32) / 255.0, y.astype(np.int64)


def idx_files(n, seed, folder):
    """The subset's images and labels as IDX files in folder (written once); returns the images' path."""
    images = os.path.join(folder, f"fmnist-s{seed}-n{n}-images-idx3-ubyte.gz")
    labels = images.replace("images-idx3", "labels-idx1")
    if not os.path.exists(labels):
        X, y = raw_train(n, seed)
        _write_idx(images, X)
        _write_idx(labels, y)
    return images
