"""dpsosp.torch's Opacus-style wrapper (docs/torch.md, "An Opacus-style wrapper"): make_private and the
PrivateTraining whose fit(loss) runs dpsosp.torch.fit on a DataLoader's records."""
import json
import math
import numbers
import warnings


def _torch():
    from .torch import _torch as torch_modules
    return torch_modules()


def _check_module(module):
    from .torch import _check_module as check
    return check(module)


def fit(module, loss, X, y, epsilon, delta=None, progress=True, **options):
    from .torch import fit as torch_fit
    return torch_fit(module, loss, X, y, epsilon, delta, progress, **options)


# make_private's keywords beside the run's table: fit's own that it passes on (x0, losses and name are fit's to
# set); epsilon, delta and G are named in Opacus's words instead.
_OWN_OPTIONS = ("noise_key", "callback", "budget", "progress")
_OPACUS_NAMES = {"epsilon": "target_epsilon", "delta": "target_delta", "G": "max_grad_norm"}


def _check_optimizer(torch, module, optimizer):
    """None, or a torch optimizer over the module's trainable parameters (by identity): all of those that require a
    gradient, and no parameter outside the module (frozen ones of the module it may hold or not, as in torch)."""
    if optimizer is None:
        return
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer: expected a torch.optim.Optimizer or None, got {optimizer!r}")
    every = {id(p) for p in module.parameters()}
    mine = {id(p) for p in module.parameters() if p.requires_grad}
    theirs = {id(p) for group in optimizer.param_groups for p in group["params"]}
    if not mine <= theirs or not theirs <= every:
        raise ValueError(f"optimizer: its {len(theirs)} parameters are not the module's {len(mine)} trainable ones "
                         "(dpsosp trains every parameter of the module that requires a gradient and holds the "
                         "others fixed): build it on module.parameters(), or pass None")
    warnings.warn(f"optimizer: dpsosp runs its own optimizer; this {type(optimizer).__name__}'s step rule and "
                  "learning rate are not used (learning_rate= sets dpsosp's step; pass optimizer=None to silence)",
                  UserWarning, stacklevel=3)


def _records(torch, data_loader):
    """(X, y): every record of the loader's map-style dataset of (x, y) pairs, stacked by torch's default_collate."""
    data = torch.utils.data
    if not isinstance(data_loader, data.DataLoader):
        raise TypeError(f"data_loader: expected a torch.utils.data.DataLoader, got {data_loader!r}")
    dataset = data_loader.dataset
    if isinstance(dataset, data.IterableDataset):
        raise ValueError("data_loader: its dataset is an IterableDataset; dpsosp needs a map-style dataset of "
                         "(x, y) pairs with a length (the record count n is public), e.g. a TensorDataset")
    if type(data_loader.sampler) not in (data.SequentialSampler, data.RandomSampler):
        raise ValueError(f"data_loader: its sampler ({type(data_loader.sampler).__name__}) would choose records, "
                         "but dpsosp trains on every record of the dataset: give a Subset of it instead")
    if data_loader.collate_fn not in (data.default_collate, data.default_convert):
        raise ValueError("data_loader: has its own collate_fn, which dpsosp does not use (one that mixes the "
                         "records of a batch breaks the guarantee): give a dataset of (x, y) pairs of tensors")
    if isinstance(dataset, data.TensorDataset):
        pairs = tuple(dataset.tensors)
        if len(pairs) != 2:
            raise ValueError(f"data_loader: its TensorDataset holds {len(pairs)} tensors; dpsosp needs two, the "
                             "records x and their targets y")
    else:
        items = [dataset[i] for i in range(len(dataset))]
        bad = next((item for item in items if not isinstance(item, (tuple, list)) or len(item) != 2), None)
        if bad is not None:
            raise ValueError(f"data_loader: its dataset's items must be (x, y) pairs; one is {type(bad).__name__}"
                             + (f" of length {len(bad)}" if isinstance(bad, (tuple, list)) else ""))
        pairs = tuple(data.default_collate(items)) if items else (torch.zeros(0), torch.zeros(0))
    if not all(isinstance(t, torch.Tensor) for t in pairs):
        raise ValueError("data_loader: its dataset's (x, y) pairs do not stack into two tensors")
    return pairs


def make_private(module, optimizer, data_loader, target_epsilon, target_delta=None, epochs=None, max_grad_norm=None,
                 **options):
    """Prepare a private training of a module on a DataLoader's records, in the words of Opacus's make_private.

    Opacus's ``PrivacyEngine().make_private_with_epsilon(module=, optimizer=, data_loader=, target_epsilon=,
    target_delta=, epochs=, max_grad_norm=)`` wraps the three for a loop the user writes. dpsosp cannot hand over
    the steps (the library runs its optimizer and keeps the noise key secret), so the result is a PrivateTraining
    whose fit(loss) is that loop: dpsosp.torch.fit on every record of the loader's dataset, with target_epsilon,
    target_delta, epochs and max_grad_norm as its epsilon, delta, epochs and G. Everything is accounted by the
    library; the module is checked now (batch normalization is refused) and trained by fit.

    What is not used: the optimizer's step rule and learning rate (dpsosp runs its own algorithm, by default
    spider-mf-adaptive; learning_rate= sets its step), and the loader's batch size and shuffling (the library
    plans its batches, Poisson-sampled by default; batch_size= sets its expected batch). The loader's records are
    read once, here, into memory (a random transform is drawn once per record).

    Parameters
    ----------
    module : torch.nn.Module
        The network, as for dpsosp.torch.fit; it holds the released parameters after fit (its parameters with
        requires_grad=False are held fixed and not counted in d).
    optimizer : torch.optim.Optimizer or None
        None, or the optimizer an Opacus loop would step: only checked to hold the module's trainable parameters
        (dpsosp trains those that require a gradient and holds frozen ones fixed; the optimizer may hold the
        frozen ones too, nothing outside the module), and a UserWarning says its step rule and learning rate are
        not used.
    data_loader : torch.utils.data.DataLoader
        A loader over a map-style dataset of (x, y) pairs (a TensorDataset of two tensors, or any dataset whose
        items are pairs that torch's default_collate stacks), with the default collate_fn and a sequential or
        random sampler; every record of the dataset is used, its count n public.
    target_epsilon : float
        The run's epsilon (> 0; replace-one adjacency unless adjacency= says otherwise).
    target_delta : float, optional
        The run's delta, well below 1/n (default: the library's, 1e-6).
    epochs : float, optional
        Passes over the records (the run's epochs option; default: the library's rule).
    max_grad_norm : float, optional
        The per-example gradient clip (the run's G; default: a private estimate of it, which takes a share of
        the records).
    **options
        dpsosp.run's options (algo, M, batch_size, learning_rate, seed, sampling, adjacency, ...), and noise_key,
        callback, budget (a dpsosp.Budget to charge) and progress (a line on stderr, default True) as in
        dpsosp.torch.fit; not epsilon, delta or G, which are named above.

    Returns
    -------
    PrivateTraining
        The training, not yet run: fit(loss) runs it.

    Raises
    ------
    TypeError
        A module, optimizer or loader of the wrong type, an unknown keyword, epsilon, delta or G among the
        options, or an option's value of the wrong type.
    ValueError
        Batch normalization in the module, no parameter that requires a gradient, an optimizer that misses a
        trainable parameter or holds one outside the module, an IterableDataset, a sampler
        that chooses records, a collate_fn of the loader's own, or items that are not (x, y) pairs; one line.

    Warns
    -----
    UserWarning
        An optimizer was given: its step rule and learning rate are not used.

    Examples
    --------
    >>> import torch, dpsosp.torch
    >>> g = torch.Generator().manual_seed(0)
    >>> X = torch.randn(300, 6, generator=g); y = (X[:, 0] > 0).long()
    >>> loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=64)
    >>> _ = torch.manual_seed(0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    >>> training = dpsosp.torch.make_private(net, None, loader, target_epsilon=2, target_delta=1e-4, epochs=3,
    ...                                      seed=1, noise_key=bytes(16), progress=False)
    >>> report = training.fit(torch.nn.functional.cross_entropy)
    >>> report["algo"], round(training.epsilon_, 6), round(training.get_epsilon(1e-4), 6)
    ('spider-mf-adaptive', 2.0, 2.0)
    >>> training.get_epsilon(1e-6) > 2
    True
    """
    torch, _ = _torch()
    from . import _options
    _check_module(module)
    for key, name in _OPACUS_NAMES.items():
        if key in options:
            raise TypeError(f"make_private: give {key} as {name}")
    unknown = [k for k in options if k not in _options.SHARED and k not in _OWN_OPTIONS]
    if unknown:
        raise TypeError(f"make_private() got an unexpected keyword argument '{unknown[0]}'")
    if epochs is not None:
        options["epochs"] = epochs
    if max_grad_norm is not None:
        options["G"] = max_grad_norm
    _options.given_options({k: v for k, v in options.items() if k in _options.SHARED})  # the types, early
    _check_optimizer(torch, module, optimizer)
    X, y = _records(torch, data_loader)
    return PrivateTraining(module, X, y, target_epsilon, target_delta, options)


# Opacus's name for the same call (its PrivacyEngine.make_private_with_epsilon), keywords alike.
make_private_with_epsilon = make_private


class PrivateTraining:
    """A private training of a module on its records, made by make_private; fit(loss) runs it once.

    The counterpart of what Opacus's make_private returns: fit(loss) stands for the user's loop, and
    get_epsilon(delta) for privacy_engine.get_epsilon. One run only: a second would spend a second epsilon
    (call make_private again, and share a dpsosp.Budget, budget=, to account both).

    Parameters
    ----------
    module : torch.nn.Module
        The network (checked by make_private).
    X : torch.Tensor
        The records, first dimension the records.
    y : torch.Tensor
        Their targets.
    epsilon : float
        The run's epsilon.
    delta : float or None
        The run's delta (None: the library's).
    options : dict
        The run's other options, as dpsosp.torch.fit takes them.

    Attributes
    ----------
    module : torch.nn.Module
        The network; after fit it holds the released parameters.
    report_ : dict
        After fit: the run's report (docs/report.md), x the released point.
    epsilon_ : float
        After fit: the run's epsilon, report_["epsilon"], at delta_ (for report_["adjacency"]); inf for a
        non-private run.
    delta_ : float
        After fit: the run's delta.

    Examples
    --------
    >>> import torch, dpsosp.torch
    >>> X = torch.randn(300, 4, generator=torch.Generator().manual_seed(1)); y = (X[:, 1] > 0).long()
    >>> data = torch.utils.data.TensorDataset(X, y)
    >>> training = dpsosp.torch.make_private(torch.nn.Linear(4, 2), None, torch.utils.data.DataLoader(data),
    ...                                      target_epsilon=1, target_delta=1e-4, G=1, progress=False)
    Traceback (most recent call last):
    TypeError: make_private: give G as max_grad_norm
    >>> training = dpsosp.torch.make_private(torch.nn.Linear(4, 2), None, torch.utils.data.DataLoader(data),
    ...                                      target_epsilon=1, target_delta=1e-4, max_grad_norm=1, progress=False)
    >>> training.get_epsilon()                # nothing has run
    0.0
    >>> round(training.fit(torch.nn.functional.cross_entropy)["epsilon"], 6)
    1.0
    """

    def __init__(self, module, X, y, epsilon, delta, options):
        self.module = module
        self._X, self._y = X, y
        self._epsilon, self._delta = epsilon, delta
        self._options = dict(options)
        self._ran = False

    def fit(self, loss):
        """Run the private training: dpsosp.torch.fit of the module on the loader's records; return the report.

        Parameters
        ----------
        loss : callable
            loss(outputs, targets) -> the mean loss of a batch, as torch.nn.functional's losses.

        Returns
        -------
        dict
            The report (docs/report.md); the module holds the released parameters, report_ and epsilon_ are set.

        Raises
        ------
        RuntimeError
            This training has run already (a second run spends a second epsilon).
        ValueError
            An option's rule broken, in one line (nothing has run: fit may be called again).
        KeyboardInterrupt
            Ctrl-C stops the run as in dpsosp.torch.fit; report_ is then the report so far, and the training
            has run.

        Examples
        --------
        >>> import torch, dpsosp.torch
        >>> X = torch.randn(300, 4, generator=torch.Generator().manual_seed(2)); y = (X[:, 0] > 0).long()
        >>> loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=32)
        >>> training = dpsosp.torch.make_private(torch.nn.Linear(4, 2), None, loader, target_epsilon=2,
        ...                                      target_delta=1e-4, max_grad_norm=1, M=1, progress=False)
        >>> report = training.fit(torch.nn.functional.cross_entropy)
        >>> report["steps"] > 10, training.report_ is report
        (True, True)
        >>> training.fit(torch.nn.functional.cross_entropy)
        Traceback (most recent call last):
        RuntimeError: fit: this training has run (epsilon 2 at delta 0.0001); a second run spends again: ...
        """
        if self._ran:
            raise RuntimeError(f"fit: this training has run (epsilon {self.epsilon_:.4g} at delta {self.delta_:.4g}); "
                               "a second run spends again: call make_private again, with a dpsosp.Budget (budget=) "
                               "shared by both to account them together")
        try:
            report = fit(self.module, loss, self._X, self._y, self._epsilon, self._delta, **self._options)
        except BaseException as e:
            partial = getattr(e, "result", None)  # a run stopped by Ctrl-C or its callback: it has released
            if isinstance(partial, dict):
                self._keep(partial)
            raise
        self._keep(report)
        return report

    def _keep(self, report):
        self._ran = True
        self.report_ = report
        self.epsilon_ = math.inf if report["epsilon"] is None else float(report["epsilon"])  # None: non-private
        self.delta_ = float(report["delta"])

    def get_epsilon(self, delta=None):
        """Return the run's epsilon at delta, as Opacus's privacy_engine.get_epsilon(delta), from the library.

        At the run's own delta (or None): its stated epsilon, report_["epsilon"]. At another delta: the epsilon of
        the run's privacy curve (report_["curve"]) at delta, under replace-one adjacency, as a dpsosp.Budget read
        at that delta charges the run (docs/budget.md); the library composes it, nothing is computed here.

        Parameters
        ----------
        delta : float, optional
            The delta, in (0, 1); None: the run's.

        Returns
        -------
        float
            The epsilon; 0.0 before fit (nothing has run), inf for a non-private run.

        Raises
        ------
        TypeError
            delta not a number.
        ValueError
            delta outside (0, 1), or a run with secure noise (accounted by zCDP, no curve) at another delta.

        Notes
        -----
        The curve is the one a budget composes, so at another delta the figure can read above the run's own
        accounting: it is the replace-one figure for a run with adjacency="zero-out" (Opacus's relation), and it
        covers the records of a private G/M estimate (max_grad_norm or M not given, Poisson sampling) with a
        Gaussian, a few percent above the stated epsilon. Give max_grad_norm and M for the run's own figure.

        Examples
        --------
        >>> import torch, dpsosp.torch
        >>> X = torch.randn(300, 4, generator=torch.Generator().manual_seed(3)); y = (X[:, 0] > 0).long()
        >>> loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y))
        >>> training = dpsosp.torch.make_private(torch.nn.Linear(4, 2), None, loader, target_epsilon=2,
        ...                                      target_delta=1e-4, max_grad_norm=1, M=1, progress=False)
        >>> report = training.fit(torch.nn.functional.cross_entropy)
        >>> round(training.get_epsilon(), 6), round(training.get_epsilon(1e-6), 3)
        (2.0, 2.673)
        """
        if delta is not None and (isinstance(delta, bool) or not isinstance(delta, numbers.Real)):
            raise TypeError(f"get_epsilon: delta must be a number, got {delta!r}")
        if delta is not None and not 0 < delta < 1:
            raise ValueError(f"get_epsilon: delta must be in (0, 1), got {delta!r}")
        if not self._ran:
            return 0.0
        report = self.report_
        if delta is None or float(delta) == self.delta_:
            return self.epsilon_
        if not math.isfinite(self.epsilon_) or not report.get("private", True):
            return math.inf
        curve = report.get("curve")
        if curve is None:
            raise ValueError(f"get_epsilon: this run ({report.get('noise')} noise) has no privacy curve; its epsilon "
                             f"is stated at delta {self.delta_:.4g} only")
        from . import _core
        reader = _core.Budget(1.0, float(delta))
        reader.charge_curve(json.dumps(curve), "get_epsilon", False)
        return float(reader.spent())
