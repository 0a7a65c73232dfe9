"""What the experiments run: every argument list comes from here.

Three configurations: FULL (issue 6 as specified), QUICK (the CI smoke test)
and the Fashion-MNIST part, whose size is chosen by --fmnist.
"""

import hashlib
import math
import os

PRIVATE = ["spider-mf-adaptive", "spider-tree-adaptive", "spider-gauss-fixed", "spider-tree-periodic", "dpsgd"]
# The practical finder and the baselines it is held against (issue 18).
FLAGSHIP = "spider-mf-adaptive"
# The single-pass comparisons (the paper's setting: every method one pass over the seed's order, replace-one)
# pin the flagship's pass over the order: in memory its default samples by Poisson (RunOptions'
# choose_default_sampling), which docs/results-peers.md measures.
ORDER = ["--sampling", "order"]
BASELINES = [a for a in PRIVATE if a != FLAGSHIP]


def noise_key_args(seed):
    """--noise-key-file for the runs of one seed: the first 32 hex digits of
    SHA-256("dpsosp experiments seed <seed>"), written under experiments/out/keys/
    (paths relative to the repository; runs start there). One key per seed, so
    the seeds' noise is independent; derived from the code, so every figure is
    reproducible bit for bit, which makes these runs non-private against a reader
    of this file. They measure utility on public data; a user's run draws a fresh
    secret key (SPEC section 8)."""
    rel = "experiments/out/keys/seed-%d.key" % seed
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), rel)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(hashlib.sha256(("dpsosp experiments seed %d" % seed).encode()).hexdigest()[:32] + "\n")
    os.chmod(path, 0o600)  # dpsosp refuses a key file that others can read
    return ["--noise-key-file", rel]
NONPRIVATE = ["spider", "sgd"]
ALGOS = PRIVATE + NONPRIVATE

# Knob tuned per configuration: alpha_scale for the SPIDER family, the batch size
# for (DP-)SGD, and for spider-mf-adaptive a factor on its O1 batch (1 = its own
# rule, no option given).  The first entry of each grid is the default.
ALPHA_GRID = [1.0, 0.5, 2.0]
BATCH_GRID = [256, 64, 1024]
BATCH_SCALE_GRID = [1.0, 0.5, 2.0]


def knob_of(algo):
    if algo == FLAGSHIP:
        return "batch_scale"
    return "batch_size" if algo in ("dpsgd", "sgd") else "alpha_scale"


def knob_grid(algo, quick=False):
    return {"batch_size": BATCH_GRID, "alpha_scale": ALPHA_GRID, "batch_scale": BATCH_SCALE_GRID}[knob_of(algo)]


def gdp_mu(eps, delta):
    """The mu of the mu-GDP guarantee that is (eps, delta)-DP (Dong, Roth, Su,
    Cor. 2.13), by bisection: the library's gdp_mu, for the batch rule below."""
    def delta_of(mu):
        phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
        return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)
    lo, hi = 1e-6, 1.0
    while delta_of(hi) < delta:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_of(mid) < delta else (lo, mid)
    return lo


def flagship_batch(n, eps, delta):
    """spider-mf-adaptive's own O1 batch (src/optimizers/mf_params.cpp): 0.25 sqrt(n / mu)."""
    return min(max(16, math.ceil(0.25 * math.sqrt(n / gdp_mu(eps, delta)))), max(1, n // 10))


def knob_args(algo, value, n=None, eps=None, delta=None):
    kind = knob_of(algo)
    if kind == "batch_size":
        return ["--batch-size", str(int(value))]
    if kind == "batch_scale":
        if value == 1.0:
            return []
        return ["--batch-size", str(max(1, round(value * flagship_batch(n, eps, delta))))]
    return ["--alpha-scale", fmt(value)]


def fmt(v):
    if isinstance(v, float) and v == int(v) and abs(v) < 1e15:
        return str(int(v)) if v >= 1 else repr(v)
    return repr(v) if isinstance(v, float) else str(v)


# Known-population problems.  d = 8 for both.  Phase retrieval uses the project's
# test constants (G=6, M=20, rho=6, B=1).  PCA (rank 1, spectrum 1, 0.1 x 7):
# per-example gradient |U|^2 U - (z.U) z, Hessian |U|^2 I + 2 U U^T - z z^T; on the
# unit ball (which holds the saddle |U| = 0.32 and the minimiser |U| = 1) with
# tr S = 1.7 the gradients are rarely above 6 and the Hessians rarely above 20
# (the clipped fractions are measured and shown); the population Hessian changes
# at most 6|U| <= 6 per unit: rho = 6.  B = F(saddle) - F* = 0.2 < 1.
PROBLEMS = {
    "phase-retrieval": {
        "spec": "phase-retrieval:n={n},d=8,seed={seed}",
        "d": 8, "G": 6, "M": 20, "rho": 6, "B": 1, "saddle_lambda": -2.0,
    },
    "pca": {
        "spec": "pca:n={n},d=8,rank=1,top=1,gap=10,seed={seed}",
        "d": 8, "G": 6, "M": 20, "rho": 6, "B": 1, "saddle_lambda": -0.9,
    },
}


def eps_text(eps):
    return "inf" if eps == math.inf else fmt(float(eps))


def synthetic_args(problem, n, eps, algo, seed, knob=None, delta=1e-6):
    p = PROBLEMS[problem]
    a = ["--synthetic", p["spec"].format(n=n, seed=seed), "--x0", "saddle",
         "--algo", algo, "--epsilon", eps_text(eps if algo in PRIVATE else math.inf)]
    if algo in PRIVATE:
        a += ["--delta", repr(delta)] + noise_key_args(seed)
    a += ORDER if algo == FLAGSHIP else []
    a += ["--G", fmt(p["G"]), "--M", fmt(p["M"]), "--rho", fmt(p["rho"]), "--B", fmt(p["B"]),
          "--seed", str(seed), "--threads", "1"]
    if knob is not None:
        a += knob_args(algo, knob, n, eps, delta)
    return a


class Scaling:
    def __init__(self, quick):
        self.quick = quick
        if quick:
            self.ns = [10000, 30000]
            self.eps = [1.0, 4.0]
            self.seeds = [1, 2]
            self.tune_seeds = [101]
        else:
            self.ns = [10000, 30000, 100000, 300000, 1000000]
            self.eps = [0.5, 1.0, 4.0]
            self.seeds = list(range(1, 11))
            self.tune_seeds = [101, 102]
        self.delta = 1e-6

    def configs(self):
        """(problem, algo, eps, n); eps = inf for the non-private references."""
        out = []
        for prob in PROBLEMS:
            for algo in ALGOS:
                for eps in (self.eps if algo in PRIVATE else [math.inf]):
                    for n in self.ns:
                        out.append((prob, algo, eps, n))
        return out


class Escape:
    def __init__(self, quick):
        self.n = 10000 if quick else 30000
        self.eps = [1.0, 4.0] if quick else [0.5, 4.0]
        self.seeds = list(range(201, 207)) if quick else list(range(201, 251))
        self.delta = 1e-6


# Fashion-MNIST.
FM_DIR = "/usr/share/datasets/fashion-mnist"
FM_TRAIN = FM_DIR + "/train-images-idx3-ubyte.gz"
FM_TEST = FM_DIR + "/t10k-images-idx3-ubyte.gz"


class FashionMNIST:
    """--fmnist full: softmax and MLP, every private algorithm, eps {1, 3, 8}.
    --fmnist reduced: the same grid on softmax only (the MLP is too slow for this
    session's CPU budget; see the page).  --fmnist off: skipped."""

    def __init__(self, mode):
        self.mode = mode
        self.eps = [1.0, 3.0, 8.0]
        self.delta = 1e-5
        self.models = {"full": ["softmax", "mlp"], "reduced": ["softmax"], "off": []}[mode]
        # "ALGO:defaults": the CLI's defaults (G and M estimated privately), no constants given.
        self.algos = PRIVATE + ["dpsgd-multi", FLAGSHIP + ":defaults", "dpsgd:defaults"]
        self.epochs = 5
        self.accountant = "pld"  # of dpsgd-multi (the CLI's default, named so the cache keys say it)
        self.seeds = [1, 2, 3]
        self.seed = 1  # of the sensitivity-to-M runs
        # Inputs are in [0, 1] (784 pixels, norm about 9); G = 1 clips most per-example
        # gradients, the usual DP-SGD regime; M = 1, step 1 for the SPIDER family.
        self.G, self.M, self.rho, self.B = 1, 1, 1, 1

        # Sensitivity to M of spider-tree-adaptive on softmax: the per-example smoothness
        # of softmax cross-entropy is about |a|^2 / 2 (about 40 here), so M = 1 is optimistic.
        self.extra_M = [4, 16] if self.models else []

    def args(self, model, algo, eps, M=None, seed=None, order=True):
        seed = self.seed if seed is None else seed
        name, _, variant = algo.partition(":")
        # No bias (softmax's intercept is on by default for --data since issue 31): the pages'
        # setting, and the evaluators' parameter layout, stay those of docs/results.md section 3.
        a = ["--model", model, "--data", FM_TRAIN, "--classes", "10",
             "--algo", "dpsgd" if name == "dpsgd-multi" else name,
             "--epsilon", fmt(eps), "--delta", repr(self.delta)]
        a += ["--no-fit-intercept"] if model == "softmax" else []
        a += ORDER if name == FLAGSHIP and order else []
        if variant != "defaults":
            a += ["--G", fmt(self.G), "--M", fmt(M if M is not None else self.M), "--rho", fmt(self.rho),
                  "--B", fmt(self.B)]
        a += ["--seed", str(seed), "--threads", "1"] + noise_key_args(seed)
        if algo == "dpsgd-multi":
            a += ["--epochs", fmt(float(self.epochs)), "--accountant", self.accountant]
        return a


def fm_label(algo, fm):
    """The name of a Fashion-MNIST row (config.FashionMNIST.algos)."""
    if algo == "dpsgd-multi":
        return "dpsgd, %g epochs (Poisson, %s)" % (fm.epochs, fm.accountant.upper())
    name, _, variant = algo.partition(":")
    return name + (" (CLI defaults: G, M estimated)" if variant == "defaults" else "")
