"""Test-set accuracy, loss and SOSP certificate of a Fashion-MNIST point, in numpy.

Why not `dpsosp run --eval`: its certificate runs the Lanczos solver on the
empirical test Hessian, which for softmax (d = 7840) did not finish in 5 minutes
on this machine (the softmax Hessian has a 784-dimensional null space, a
clustered spectrum at 0), and `run` prints eval.accuracy only after the
certificate.  So the runs are made without --eval and the point is evaluated
here, with the layouts of docs/models.md:

* softmax: x = vec(W), W (K x p) row-major; lambda_min of its Hessian is exactly 0
  (cross-entropy is convex in the logits, and W_k -> W_k + c for every k leaves
  the loss unchanged), so the gap is the gradient norm.
* mlp: W1 (h x p) row-major, b1, W2 (K x h), b2; lambda_min by scipy's ARPACK
  Lanczos (eigsh, which='SA') on exact Hessian-vector products (R-operator).
"""

import gzip
import struct

import numpy as np


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return arr.reshape(dims)


def load_test(images_path):
    labels_path = images_path.replace("images-idx3", "labels-idx1")
    X = read_idx(images_path).reshape(-1, 28 * 28).astype(np.float64) / 255.0
    y = read_idx(labels_path).astype(np.int64)
    return X, y


def _softmax_rows(L):
    L = L - L.max(axis=1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=1, keepdims=True), L - np.log(E.sum(axis=1, keepdims=True))


class Softmax:
    def __init__(self, X, y, K=10):
        self.X, self.y, self.K = X, y, K
        self.p = X.shape[1]

    def evaluate(self, x):
        W = np.asarray(x).reshape(self.K, self.p)
        L = self.X @ W.T
        P, logP = _softmax_rows(L)
        n = len(self.y)
        loss = -logP[np.arange(n), self.y].mean()
        acc = float((L.argmax(axis=1) == self.y).mean())
        G = P.copy()
        G[np.arange(n), self.y] -= 1
        grad = (G.T @ self.X) / n
        gnorm = float(np.linalg.norm(grad))
        return {"loss": float(loss), "accuracy": acc, "grad_norm": gnorm,
                "lambda_min": 0.0, "lambda_min_method": "exact (convex, null space)"}


class MLP:
    def __init__(self, X, y, h=32, K=10):
        self.X, self.y, self.h, self.K = X, y, h, K
        self.p = X.shape[1]

    def unpack(self, x):
        h, p, K = self.h, self.p, self.K
        x = np.asarray(x, dtype=np.float64)
        o = 0
        W1 = x[o:o + h * p].reshape(h, p); o += h * p
        b1 = x[o:o + h]; o += h
        W2 = x[o:o + K * h].reshape(K, h); o += K * h
        b2 = x[o:o + K]; o += K
        assert o == len(x), "mlp parameter length %d, expected %d" % (len(x), o)
        return W1, b1, W2, b2

    def pack(self, W1, b1, W2, b2):
        return np.concatenate([W1.ravel(), b1, W2.ravel(), b2])

    def forward(self, x):
        W1, b1, W2, b2 = self.unpack(x)
        S = self.X @ W1.T + b1
        T = np.tanh(S)
        L = T @ W2.T + b2
        P, logP = _softmax_rows(L)
        return W1, b1, W2, b2, T, L, P, logP

    def evaluate(self, x, eig=True, maxiter=3000, tol=1e-6):
        W1, b1, W2, b2, T, L, P, logP = self.forward(x)
        n = len(self.y)
        Y = np.zeros_like(P)
        Y[np.arange(n), self.y] = 1
        loss = -logP[np.arange(n), self.y].mean()
        acc = float((L.argmax(axis=1) == self.y).mean())
        G2 = P - Y
        Gt = G2 @ W2
        G1 = Gt * (1 - T * T)
        grad = self.pack(G1.T @ self.X / n, G1.mean(0), G2.T @ T / n, G2.mean(0))
        out = {"loss": float(loss), "accuracy": acc, "grad_norm": float(np.linalg.norm(grad))}
        if eig:
            lam, method = self.lambda_min(x, (W1, b1, W2, b2, T, P, G2, Gt), maxiter, tol)
            out["lambda_min"] = lam
            out["lambda_min_method"] = method
        return out

    def hvp_factory(self, cache):
        W1, b1, W2, b2, T, P, G2, Gt = cache
        X, n = self.X, len(self.y)
        D = 1 - T * T

        def hvp(v):
            V1, c1, V2, c2 = self.unpack(v)
            Rs = X @ V1.T + c1
            Rt = D * Rs
            Rl = T @ V2.T + Rt @ W2.T + c2
            Rg2 = P * Rl - P * (P * Rl).sum(1, keepdims=True)
            RW2 = (Rg2.T @ T + G2.T @ Rt) / n
            Rb2 = Rg2.mean(0)
            Rgt = G2 @ V2 + Rg2 @ W2
            Rg1 = Rgt * D - 2 * Gt * T * Rt
            RW1 = Rg1.T @ X / n
            Rb1 = Rg1.mean(0)
            return self.pack(RW1, Rb1, RW2, Rb2)
        return hvp

    def lambda_min(self, x, cache, maxiter, tol):
        from scipy.sparse.linalg import LinearOperator, eigsh, ArpackNoConvergence
        hvp = self.hvp_factory(cache)
        dim = len(x)
        op = LinearOperator((dim, dim), matvec=hvp, dtype=np.float64)
        v0 = np.random.default_rng(0).standard_normal(dim)  # fixed start: deterministic
        try:
            vals = eigsh(op, k=1, which="SA", v0=v0, maxiter=maxiter, tol=tol,
                         return_eigenvectors=False)
            return float(vals[0]), "ARPACK Lanczos (tol %g)" % tol
        except ArpackNoConvergence as e:
            if len(e.eigenvalues):
                return float(e.eigenvalues[0]), "ARPACK Lanczos (not converged)"
            return float("nan"), "ARPACK Lanczos (not converged)"


def model_for(name, X, y):
    return Softmax(X, y) if name == "softmax" else MLP(X, y)


def certificate(model_name, x, X, y, rho):
    m = model_for(model_name, X, y)
    r = m.evaluate(x)
    lam = r["lambda_min"]
    r["sosp_gap"] = max(r["grad_norm"], max(0.0, -lam) ** 2 / rho)
    return r


def _self_check():
    """Finite-difference check of the gradient and HVP on a small random problem."""
    rng = np.random.default_rng(1)
    X = rng.random((50, 12))
    y = rng.integers(0, 4, 50)
    m = MLP(X, y, h=5, K=4)
    dim = 5 * 12 + 5 + 4 * 5 + 4
    x = rng.standard_normal(dim) * 0.5
    v = rng.standard_normal(dim)
    e = 1e-6
    f = lambda z: m.evaluate(z, eig=False)["loss"]
    W1, b1, W2, b2, T, L, P, logP = m.forward(x)
    n = len(y)
    Y = np.zeros_like(P); Y[np.arange(n), y] = 1
    G2 = P - Y; Gt = G2 @ W2; G1 = Gt * (1 - T * T)
    g = m.pack(G1.T @ X / n, G1.mean(0), G2.T @ T / n, G2.mean(0))
    fd = (f(x + e * v) - f(x - e * v)) / (2 * e)
    assert abs(fd - g @ v) < 1e-6 * (1 + abs(fd)), (fd, g @ v)

    def grad_at(z):
        W1, b1, W2, b2, T, L, P, logP = m.forward(z)
        G2 = P - Y; Gt = G2 @ W2; G1 = Gt * (1 - T * T)
        return m.pack(G1.T @ X / n, G1.mean(0), G2.T @ T / n, G2.mean(0))
    hv = m.hvp_factory((W1, b1, W2, b2, T, P, G2, Gt))(v)
    hfd = (grad_at(x + e * v) - grad_at(x - e * v)) / (2 * e)
    assert np.max(np.abs(hv - hfd)) < 1e-5 * (1 + np.max(np.abs(hfd))), np.max(np.abs(hv - hfd))
    s = Softmax(X, y, K=4)
    xs = rng.standard_normal(4 * 12)
    fs = lambda z: s.evaluate(z)["loss"]
    Ws = xs.reshape(4, 12)
    Ps, _ = _softmax_rows(X @ Ws.T)
    Gs = Ps.copy(); Gs[np.arange(n), y] -= 1
    gs = (Gs.T @ X / n).ravel()
    vs = rng.standard_normal(4 * 12)
    fd = (fs(xs + e * vs) - fs(xs - e * vs)) / (2 * e)
    assert abs(fd - gs @ vs) < 1e-6 * (1 + abs(fd))


if __name__ == "__main__":
    _self_check()
    print("fmnist_eval self-check ok")
