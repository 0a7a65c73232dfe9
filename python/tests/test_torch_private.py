"""dpsosp.torch.make_private (the Opacus-style wrapper, docs/torch.md): it runs fit on its loader's records, bit for
bit, holds frozen parameters fixed, and refuses what it cannot honour with one line."""
import doctest
import inspect
import unittest

import numpy as np

import dpsosp

from test_torch import KEY, data, frozen_net, tiny_net, torch

if torch is not None:
    import dpsosp.torch as dptorch


def loader_of(X, y, **kwargs):
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), **kwargs)


if torch is not None:
    class Pairs(torch.utils.data.Dataset):
        """A map-style dataset of (x, y) pairs that is not a TensorDataset: x a tensor, y a Python int."""

        def __init__(self, X, y):
            self.X, self.y = X, y

        def __len__(self):
            return len(self.X)

        def __getitem__(self, i):
            return self.X[i], int(self.y[i])

    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter([])


RUN = dict(seed=3, noise_key=KEY, progress=False)


@unittest.skipIf(torch is None, "python3-torch not installed")
class MakePrivateTest(unittest.TestCase):
    def test_the_wrapper_runs_fit_on_the_loaders_records(self):
        # make_private(...).fit(loss) is dpsosp.torch.fit on the dataset's records with target_epsilon,
        # target_delta, epochs and max_grad_norm as epsilon, delta, epochs and G: the same report, the same bits,
        # whether the records come from a TensorDataset or a dataset of pairs; the loader's batch size and
        # shuffling and the optimizer's learning rate are not used.
        X, y = data(300)
        loss = torch.nn.functional.cross_entropy
        net, twin, other = tiny_net(), tiny_net(), tiny_net()
        own = dptorch.fit(twin, loss, X, y, epsilon=2, delta=1e-4, epochs=2, G=0.5, **RUN)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        with self.assertWarnsRegex(UserWarning, r"^optimizer: dpsosp runs its own optimizer; this SGD's step rule"):
            training = dptorch.make_private(net, optimizer, loader_of(X, y, batch_size=64, shuffle=True),
                                            target_epsilon=2, target_delta=1e-4, epochs=2, max_grad_norm=0.5, **RUN)
        mine = training.fit(loss)
        self.assertIs(training.report_, mine)
        self.assertEqual(set(mine), set(own))
        for key in set(own) - {"x", "diagnostics"}:
            self.assertEqual(mine[key], own[key], key)
        self.assertTrue(np.array_equal(mine["x"], own["x"]))
        self.assertEqual(mine["constants"]["G"], 0.5)
        self.assertEqual(training.epsilon_, own["epsilon"])
        self.assertEqual(training.delta_, 1e-4)
        for p, q, r in zip(net.parameters(), twin.parameters(), optimizer.param_groups[0]["params"]):
            self.assertTrue(torch.equal(p, q))
            self.assertIs(p, r)  # the optimizer still holds the module's (released) parameters
        pairs = dptorch.make_private(other, None, torch.utils.data.DataLoader(Pairs(X, y), batch_size=7),
                                     target_epsilon=2, target_delta=1e-4, epochs=2, max_grad_norm=0.5, **RUN)
        self.assertTrue(np.array_equal(pairs.fit(loss)["x"], own["x"]))

    def test_what_it_cannot_honour_is_one_clear_line(self):
        X, y = data(300)
        net = tiny_net()
        loader = loader_of(X, y)

        def make(module=net, optimizer=None, data_loader=loader, **options):
            return dptorch.make_private(module, optimizer, data_loader, target_epsilon=1, **options)

        with self.assertRaisesRegex(ValueError, r"^optimizer: its 2 parameters are not the module's 4 trainable "
                                                r"ones \(dpsosp trains every parameter of the module that requires"):
            make(optimizer=torch.optim.SGD(net[0].parameters(), lr=0.1))
        with self.assertRaisesRegex(ValueError, r"^optimizer: its 4 parameters are not the module's 4"):
            make(optimizer=torch.optim.SGD(tiny_net().parameters(), lr=0.1))
        with self.assertRaisesRegex(TypeError, r"^optimizer: expected a torch.optim.Optimizer or None"):
            make(optimizer="sgd")
        with self.assertRaisesRegex(ValueError, r"^data_loader: its dataset is an IterableDataset; dpsosp needs a "
                                                r"map-style dataset"):
            make(data_loader=torch.utils.data.DataLoader(Stream()))
        with self.assertRaisesRegex(TypeError, r"^data_loader: expected a torch.utils.data.DataLoader"):
            make(data_loader=torch.utils.data.TensorDataset(X, y))
        with self.assertRaisesRegex(ValueError, r"^data_loader: its sampler \(SubsetRandomSampler\) would choose"):
            make(data_loader=loader_of(X, y, sampler=torch.utils.data.SubsetRandomSampler(range(100))))
        with self.assertRaisesRegex(ValueError, r"^data_loader: has its own collate_fn"):
            make(data_loader=loader_of(X, y, collate_fn=lambda batch: batch))
        with self.assertRaisesRegex(ValueError, r"^data_loader: its TensorDataset holds 3 tensors"):
            make(data_loader=torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y, y)))
        batch_norm = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
        with self.assertRaisesRegex(ValueError, r"^module: 1 is batch normalization, which mixes the records"):
            make(module=batch_norm)
        for key, name in (("G", "max_grad_norm"), ("epsilon", "target_epsilon"), ("delta", "target_delta")):
            with self.assertRaisesRegex(TypeError, f"^make_private: give {key} as {name}$"):
                make(**{key: 1})
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'lr'"):
            make(lr=0.1)
        with self.assertRaisesRegex(TypeError, "^epochs: expected a number"):
            make(epochs="3")
        training = make(target_delta=1e-4, max_grad_norm=1, M=1, seed=1, progress=False)
        training.fit(torch.nn.functional.cross_entropy)
        with self.assertRaisesRegex(RuntimeError, r"^fit: this training has run \(epsilon 1 at delta 0.0001\)"):
            training.fit(torch.nn.functional.cross_entropy)

    def test_a_frozen_layer_is_held_fixed_by_the_wrapper(self):
        # The optimizer is checked against the trainable parameters: built on module.parameters() (the frozen
        # ones too, as torch users do) or on the trainable ones only, it passes; one that misses a trainable
        # parameter is refused. fit holds the frozen layer bit for bit and counts the head only in d.
        X, y = data(300)
        net = frozen_net()
        frozen = [p.detach().clone() for p in net[0].parameters()]
        for params in (net.parameters(), (p for p in net.parameters() if p.requires_grad)):
            with self.assertWarnsRegex(UserWarning, "^optimizer: dpsosp runs its own optimizer"):
                dptorch.make_private(net, torch.optim.SGD(params, lr=0.1), loader_of(X, y), target_epsilon=1)
        with self.assertRaisesRegex(ValueError, r"^optimizer: its 2 parameters are not the module's 2 trainable"):
            dptorch.make_private(net, torch.optim.SGD(net[0].parameters(), lr=0.1), loader_of(X, y),
                                 target_epsilon=1)
        with self.assertRaisesRegex(ValueError, r"^optimizer: its 3 parameters are not the module's 2 trainable"):
            stray = torch.nn.Parameter(torch.zeros(1))
            dptorch.make_private(net, torch.optim.SGD(list(net[2].parameters()) + [stray], lr=0.1),
                                 loader_of(X, y), target_epsilon=1)
        training = dptorch.make_private(net, None, loader_of(X, y), target_epsilon=2, target_delta=1e-4,
                                        max_grad_norm=1, M=1, **RUN)
        report = training.fit(torch.nn.functional.cross_entropy)
        self.assertEqual(report["d"], 18)
        for p, q in zip(net[0].parameters(), frozen):
            self.assertTrue(torch.equal(p, q))

    def test_get_epsilon_is_the_librarys(self):
        # At the run's delta, the report's epsilon; at another, what a dpsosp.Budget read there charges the run.
        X, y = data(300)
        budget = dpsosp.Budget(epsilon=50, delta=1e-3)
        training = dptorch.make_private(tiny_net(), None, loader_of(X, y), target_epsilon=2, target_delta=1e-4,
                                        budget=budget, **RUN)
        self.assertEqual(training.get_epsilon(), 0.0)
        report = training.fit(torch.nn.functional.cross_entropy)
        self.assertEqual(training.get_epsilon(), report["epsilon"])
        self.assertEqual(training.get_epsilon(1e-4), report["epsilon"])
        self.assertEqual(training.get_epsilon(1e-3), budget.spent())
        self.assertGreater(training.get_epsilon(1e-6), training.get_epsilon(1e-5))
        self.assertGreater(training.get_epsilon(1e-5), report["epsilon"])
        self.assertLess(training.get_epsilon(1e-3), report["epsilon"])
        # With the clip and M given (no G/M estimate to cover), the curve is the run's own accounting.
        budget = dpsosp.Budget(epsilon=50, delta=1e-4)
        exact = dptorch.make_private(tiny_net(), None, loader_of(X, y), target_epsilon=2, target_delta=1e-4,
                                     max_grad_norm=1, M=1, budget=budget, **RUN)
        stated = exact.fit(torch.nn.functional.cross_entropy)["epsilon"]
        self.assertAlmostEqual(budget.spent(), stated, delta=1e-12)
        with self.assertRaisesRegex(ValueError, r"^get_epsilon: delta must be in \(0, 1\), got 0"):
            training.get_epsilon(0)
        with self.assertRaisesRegex(TypeError, "^get_epsilon: delta must be a number"):
            training.get_epsilon("1e-5")

    def test_the_docstrings_are_numpydoc_and_their_examples_run(self):
        # The checks of test_docstrings.py (which covers dpsosp.__all__) for the wrapper's public names.
        from test_docstrings import FLAGS, documented_names, parameters, raises, sections
        names = [("make_private", dptorch.make_private), ("PrivateTraining", dptorch.PrivateTraining),
                 ("PrivateTraining.fit", dptorch.PrivateTraining.fit),
                 ("PrivateTraining.get_epsilon", dptorch.PrivateTraining.get_epsilon)]
        self.assertIn("make_private", dptorch.__all__)
        self.assertIn("PrivateTraining", dptorch.__all__)
        parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=FLAGS)
        for name, obj in names:
            with self.subTest(name):
                doc = inspect.getdoc(obj)
                self.assertTrue(doc.splitlines()[0].endswith(".") and not doc.splitlines()[1].strip())
                found = sections(doc)
                self.assertIn("Attributes" if inspect.isclass(obj) else "Returns", found)
                self.assertEqual(documented_names(found["Parameters"]), set(parameters(obj)))
                if raises(obj):
                    self.assertIn("Raises", found)
                report = []
                outcome = runner.run(parser.get_doctest(doc, {}, name, None, 0), out=report.append)
                self.assertGreater(outcome.attempted, 0)
                self.assertEqual(outcome.failed, 0, "".join(report))


if __name__ == "__main__":
    unittest.main()
