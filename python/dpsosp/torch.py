"""dpsosp.torch: a PyTorch module trained privately by dpsosp (docs/torch.md). Imports torch (Debian's
python3-torch, torch >= 1.13 with functorch) when first used.

    import torch, dpsosp.torch
    net = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.Tanh(), torch.nn.Linear(32, 3))
    report = dpsosp.torch.fit(net, torch.nn.functional.cross_entropy, X, y, epsilon=3, delta=1e-6)
    report["epsilon"], net(X[:5])        # the module holds the released parameters

Per-example gradients come from functorch (vmap of grad over the records); dpsosp.run_gradients does the rest as
for its own models: the clipping by the library's rule, the O2 differences, the noise with the secret key, the
accountant, the batches and the report. The default algorithm is the run's (spider-mf-adaptive).

Only the parameters that require a gradient are trained: a frozen one (requires_grad=False, e.g. a pretrained
body under a new head) is held fixed inside the functional call, and the flat vector the library sees (its
dimension d, its noise, x0 and the released x) is the trainable parameters in module.parameters() order.

An Opacus user's module, optimizer and DataLoader go through make_private, which returns a PrivateTraining whose
fit(loss) runs the same fit on the loader's dataset (the optimizer's step rule is not used: dpsosp runs its own).
"""
import numpy as np

__all__ = ["fit", "certify", "audit", "per_example_gradients", "make_private", "make_private_with_epsilon",
           "PrivateTraining"]


def _torch():
    try:
        import torch
        import functorch
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("dpsosp.torch needs PyTorch with functorch (Debian: apt install python3-torch)") from e
    return torch, functorch


def _check_module(module):
    torch, _ = _torch()
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module: expected a torch.nn.Module, got {module!r}")
    for name, m in module.named_modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            raise ValueError(f"module: {name or type(module).__name__} is batch normalization, which mixes the "
                             "records of a batch, so no clip bounds what one record does: use GroupNorm or LayerNorm")
    if not any(p.requires_grad for p in module.parameters()):
        raise ValueError("module: has no parameter that requires a gradient")


def _trainable_parameters(module):
    """The parameters dpsosp trains: module.parameters() (in its order, each once) that require a gradient."""
    return [p for p in module.parameters() if p.requires_grad]


def _functional(module):
    """functorch's (fmodel, params, buffers) of the module (params: all of module.parameters(), in order) and the
    mask of those that require a gradient, for _splice."""
    _, functorch = _torch()
    fmodel, params, buffers = functorch.make_functional_with_buffers(module)
    mask = [p.requires_grad for p in module.parameters()]
    if len(mask) != len(params):  # pragma: no cover - functorch lists module.parameters() (a deep copy's)
        raise RuntimeError(f"module: functorch gives {len(params)} parameters for its {len(mask)}")
    return fmodel, params, buffers, mask


def _splice(params, mask, trainable):
    """The full parameter tuple for fmodel: the trainable tensors where mask is True, params' (frozen) elsewhere."""
    it = iter(trainable)
    full = tuple(next(it) if m else p for p, m in zip(params, mask))
    assert next(it, None) is None
    return full


def per_example_gradients(module, loss, X, y):
    """The function gradients(x, ids) that dpsosp.run_gradients calls: the gradient of loss(module(X[i]), y[i]) at
    the flat parameter vector x (float64, the module's trainable parameters, those with requires_grad, in
    module.parameters() order) for each id i, by functorch's vmap over grad, one record per row (float64,
    len(ids) x d). Frozen parameters (requires_grad=False) are held fixed at their values now and have no
    coordinates. Also returns losses(x, ids), each record's loss at x, and d."""
    torch, functorch = _torch()
    fmodel, params, buffers, mask = _functional(module)
    held = tuple(p if m else p.detach() for p, m in zip(params, mask))  # the frozen ones, constants
    trainable = [p for p, m in zip(params, mask) if m]
    shapes = [p.shape for p in trainable]
    sizes = [int(np.prod(s)) if len(s) else 1 for s in shapes]
    dtype, device = trainable[0].dtype, trainable[0].device

    def unflat(x):
        flat = torch.as_tensor(np.asarray(x), dtype=dtype, device=device)
        return tuple(t.reshape(s) for t, s in zip(torch.split(flat, sizes), shapes))

    def one(p, xb, yb):
        return loss(fmodel(_splice(held, mask, p), buffers, xb.unsqueeze(0)), yb.unsqueeze(0))

    batched = functorch.vmap(functorch.grad(one), in_dims=(None, 0, 0), randomness="different")
    batched_loss = functorch.vmap(one, in_dims=(None, 0, 0), randomness="different")

    def gradients(x, ids):
        index = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=X.device)
        rows = batched(unflat(x), X[index], y[index])
        flat = torch.cat([g.reshape(len(index), -1) for g in rows], dim=1)
        return flat.detach().to("cpu", torch.float64).numpy()

    def losses(x, ids):
        index = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=X.device)
        return batched_loss(unflat(x), X[index], y[index]).detach().to("cpu", torch.float64).numpy().reshape(-1)

    return gradients, losses, sum(sizes)


class _Progress:
    """One line on stderr, rewritten at most twice a second: steps and records read (a caller's callback too)."""

    def __init__(self, n, show, user):
        import sys
        import time
        self.n, self.show, self.user, self.stream, self.clock = n, show, user, sys.stderr, time.monotonic
        self.last = self.clock()
        self.shown = False

    def __call__(self, step, info):
        if self.show and self.clock() - self.last >= 0.5:
            self.last = self.clock()
            self.shown = True
            self.stream.write(f"\rdpsosp.torch: step {step}, {info['records_used'] / self.n:.2f} passes of records")
            self.stream.flush()
        return None if self.user is None else self.user(step, info)

    def end(self):
        if self.shown:
            self.stream.write("\n")


def fit(module, loss, X, y, epsilon, delta=None, progress=True, **options):
    """Trains `module` privately on the records X (first dimension: the records) with targets y, minimizing the
    mean of loss(module(x_i), y_i) (loss takes a batch of outputs and targets and returns their mean, as
    torch.nn.functional's losses do); leaves the released parameters in the module and returns the report
    (docs/report.md; "epsilon" and "delta" its guarantee, for replace-one adjacency).

    options: dpsosp.run's (algo, G, M, epochs, learning_rate, seed, noise_key, budget, ...), the run's defaults
    otherwise. X and y stay where they are (a CUDA device when the module is there); the parameters travel as
    float64 between the library and torch. A module with batch normalization is refused (it mixes records).
    Only the parameters with requires_grad are trained (report["d"] counts them, report["x"] is them in
    module.parameters() order); frozen ones are held fixed, bit for bit, and cost no noise. A module with no
    parameter that requires a gradient is refused.
    progress: a line on stderr with the steps and passes so far (from what each step released).
    """
    torch, _ = _torch()
    _check_module(module)
    X = torch.as_tensor(X)
    y = torch.as_tensor(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"y: {y.shape[0]} targets for {X.shape[0]} records")
    if X.shape[0] < 2:
        raise ValueError(f"X: {X.shape[0]} records; a private fit needs more")
    device = next(module.parameters()).device
    X, y = X.to(device), y.to(device)
    if X.is_floating_point():
        X = X.to(next(module.parameters()).dtype)
    gradients, losses, dim = per_example_gradients(module, loss, X, y)
    trainable = _trainable_parameters(module)
    x0 = torch.nn.utils.parameters_to_vector(trainable).detach().to("cpu", torch.float64).numpy()
    from ._caller import run_gradients
    line = _Progress(int(X.shape[0]), bool(progress), options.pop("callback", None))
    kwargs = dict(options, epsilon=epsilon, losses=losses, x0=x0, name=f"torch:{type(module).__name__}",
                  callback=line)
    if delta is not None:
        kwargs["delta"] = delta
    try:
        report = run_gradients(gradients, int(X.shape[0]), dim, **kwargs)
    finally:
        line.end()
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(
            torch.as_tensor(report["x"], dtype=trainable[0].dtype, device=device), trainable)
    return report


def certify(module, loss, X, y, rho=1.0):
    """The certificate of the module's parameters on the records X, y (docs/certificate.md): the gradient norm of the
    mean loss, the smallest eigenvalue of its Hessian (the library's Lanczos on Hessian-vector products by double
    backward) and the SOSP gap for Hessian-Lipschitz constant rho, as dpsosp.certify gives for the built-in models.
    Computed from X and y without noise: a diagnostic, not covered by a guarantee unless X, y are public.
    As fit trains: with respect to the parameters that require a gradient (the gradient and the Hessian are those
    of the trainable coordinates, d of them); frozen parameters are held fixed at their values."""
    torch, _ = _torch()
    _check_module(module)
    from . import _core
    device = next(module.parameters()).device
    X, y = torch.as_tensor(X).to(device), torch.as_tensor(y).to(device)
    if X.is_floating_point():
        X = X.to(torch.float64)
    fmodel, params, buffers, mask = _functional(module)
    held = tuple(p.detach().to(torch.float64) for p in params)  # the frozen ones, constants
    params = tuple(p.detach().to(torch.float64).requires_grad_(True) for p, m in zip(params, mask) if m)
    buffers = tuple(b.to(torch.float64) if b.is_floating_point() else b for b in buffers)
    shapes = [p.shape for p in params]

    def mean_loss(*p):
        return loss(fmodel(_splice(held, mask, p), buffers, X), y)

    def flat(ts):
        return torch.cat([t.reshape(-1) for t in ts]).numpy()

    gradient = flat(torch.autograd.grad(mean_loss(*params), params))

    def hvp(v):
        parts = torch.split(torch.as_tensor(np.asarray(v)), [int(np.prod(s)) if len(s) else 1 for s in shapes])
        vs = tuple(t.reshape(s) for t, s in zip(parts, shapes))
        return flat(torch.autograd.functional.hvp(mean_loss, params, vs)[1])

    return _core.certify_operator(gradient, hvp, float(rho))


def audit(algo="spider-mf-adaptive", epsilon=1.0, delta=1e-5, runs=1000, device=None, **options):
    """The empirical privacy audit (dpsosp.audit, docs/privacy.md) of the path a PyTorch module trains on: every run
    takes its per-example gradients from functorch, as dpsosp.torch.fit does, through the library's model of the
    caller (clipping, O2 differences, noise, accounting).

    The canary model is a torch.nn.Linear(dim, 1, bias=False) in float64 whose loss on record z is its output
    <w, z>; on the two neighbouring datasets every record is zero but the canary (docs/privacy.md, "linear").
    Its gradients are the records themselves, so the result equals dpsosp.audit's with the same options bit for bit
    (an honest torch path releases what the library's own model releases), and a tampered run is caught as there.

    Parameters
    ----------
    algo : str
        The private algorithm (default spider-mf-adaptive, as dpsosp.torch.fit's).
    epsilon, delta : float
        The target of the audited runs: the claim under test.
    runs : int
        Runs on each dataset; the runs are serial (Python callbacks).
    device : str or torch.device or None
        Where the module and the records live (None: CPU).
    **options
        dpsosp.audit's other options (batch, steps, dim, epochs, sampling, bands, canary_norm, G, confidence,
        test_level, canaries, seed, tamper, noise); the canary is the linear one.

    Returns
    -------
    dict
        dpsosp.audit's result, with model "caller".

    Raises
    ------
    ValueError
        An option out of its range or a combination that does not apply (a canary other than linear), in one line.

    Examples
    --------
    >>> import dpsosp, dpsosp.torch
    >>> r = dpsosp.torch.audit(algo="dpsgd", runs=200, seed=3)
    >>> r["model"], r["violation"], r["epsilon_lower_bound"] <= r["claimed_epsilon"]
    ('caller', False, True)
    """
    torch, _ = _torch()
    from ._audit import audit as library_audit
    if options.get("canary", "linear") != "linear":
        raise ValueError(f"canary: the torch path is audited with the linear canary only, got {options['canary']!r}")
    options.pop("canary", None)
    if "caller" in options:
        raise TypeError("audit() got an unexpected keyword argument 'caller' (dpsosp.torch.audit supplies it)")
    where = torch.device("cpu" if device is None else device)

    def caller(records):
        module = torch.nn.Linear(records.shape[1], 1, bias=False).to(device=where, dtype=torch.float64)
        X = torch.as_tensor(records, dtype=torch.float64, device=where)
        y = torch.zeros(records.shape[0], dtype=torch.float64, device=where)
        gradients, _, _ = per_example_gradients(module, lambda out, target: out.sum(), X, y)
        return gradients

    return library_audit(algo=algo, epsilon=epsilon, delta=delta, runs=runs, caller=caller, **options)


from ._torch_private import PrivateTraining, make_private, make_private_with_epsilon  # noqa: E402 (uses fit)
