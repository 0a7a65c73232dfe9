"""dpsosp.torch and dpsosp.run_gradients (docs/torch.md): per-example gradients as a loop of single-record backward
passes gives them; a module's run has the guarantee, noise and steps of the library's own model for the same
records; batch normalization and bad callables are refused with one line; NaN losses are clipped as elsewhere;
frozen parameters stay fixed; the audit of the torch path is the library's. make_private: test_torch_private.py."""
import unittest

import numpy as np

import dpsosp

try:
    import torch
    import dpsosp.torch as dptorch
except ImportError:  # python3-torch (scripts/install-deps.sh)
    torch = None

KEY = bytes(range(16))


def data(n=3000, p=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, generator=g) / p ** 0.5
    y = (X[:, 0] + 0.3 * torch.randn(n, generator=g) > 0).long()
    return X, y


@unittest.skipIf(torch is None, "python3-torch not installed")
class TorchTest(unittest.TestCase):
    def test_per_example_gradients_are_single_record_backward_passes(self):
        torch.manual_seed(1)
        X, y = data(40)
        net = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
        loss = torch.nn.functional.cross_entropy
        gradients, losses, dim = dptorch.per_example_gradients(net, loss, X, y)
        x = torch.nn.utils.parameters_to_vector(net.parameters()).detach().double().numpy()
        ids = np.array([3, 0, 17, 39], dtype=np.int64)
        rows = gradients(x, ids)
        self.assertEqual(rows.shape, (4, dim))
        for k, i in enumerate(ids):
            net.zero_grad()
            value = loss(net(X[i:i + 1]), y[i:i + 1])
            value.backward()
            expected = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).double().numpy()
            np.testing.assert_allclose(rows[k], expected, rtol=1e-5, atol=1e-7)
            self.assertAlmostEqual(losses(x, ids)[k], value.item(), places=5)

    def test_a_module_runs_as_the_librarys_own_model(self):
        # nn.Linear(p, 1) with the logistic loss is the library's logistic model with an intercept: the same
        # calibration, mechanism and steps, and (float32 against float64 arithmetic) nearly the same point.
        X, y = data()
        net = torch.nn.Linear(6, 1)
        torch.nn.init.zeros_(net.weight)
        torch.nn.init.zeros_(net.bias)

        def logistic(out, target):
            return torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], target.to(out.dtype))

        options = dict(epsilon=2, delta=1e-6, seed=5, noise_key=KEY, G=1, M=2)
        mine = dptorch.fit(net, logistic, X, y, **options)
        own = dpsosp.run("logistic", X.double().numpy(), y.double().numpy(), fit_intercept=True, scale="none",
                         **options)
        for key in ("algo", "epsilon", "delta", "noise_multiplier", "steps", "mechanism", "curve"):
            self.assertEqual(mine[key], own[key], key)
        np.testing.assert_allclose(mine["x"], own["x"], atol=1e-3)
        released = torch.nn.utils.parameters_to_vector(net.parameters()).detach().double().numpy()
        np.testing.assert_allclose(released, mine["x"], rtol=1e-6)
        # The guarantee is reproduced by `dpsosp privacy` (the report's own figures): the same as the library's.
        self.assertEqual(mine["guarantee"], own["guarantee"])

    def test_the_certificate_is_the_librarys(self):
        # dpsosp.torch.certify (double backward, the library's Lanczos) against dpsosp.certify's logistic model.
        X, y = data(500, 4)
        torch.manual_seed(2)
        net = torch.nn.Linear(4, 1)

        def logistic(out, target):
            return torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], target.to(out.dtype))

        mine = dptorch.certify(net, logistic, X, y, rho=2)
        x = torch.nn.utils.parameters_to_vector(net.parameters()).detach().double().numpy()
        own = dpsosp.certify("logistic", X.double().numpy(), y.double().numpy(), x, rho=2, fit_intercept=True)
        for key in ("grad_norm", "lambda_min", "sosp_gap"):
            self.assertAlmostEqual(mine[key], own[key], delta=1e-9, msg=key)

    def test_a_frozen_layer_is_held_fixed_and_not_counted(self):
        # A Sequential whose first Linear is frozen (requires_grad=False): the library's vector is the head's 18
        # parameters; the per-example gradients are single-record backward passes restricted to them; fit leaves
        # the frozen weights bit for bit, and its run is run_gradients on a hand-built gradient of the head (the
        # same bits of x for the same seed and noise key); the head trains (the loss falls).
        X, y = data(600)
        loss = torch.nn.functional.cross_entropy
        net = frozen_net()
        frozen = [p.detach().clone() for p in net[0].parameters()]
        head = torch.nn.utils.parameters_to_vector(net[2].parameters()).detach().double().numpy()
        gradients, losses, dim = dptorch.per_example_gradients(net, loss, X, y)
        self.assertEqual(dim, 8 * 2 + 2)
        ids = np.array([5, 0, 599, 17], dtype=np.int64)
        rows = gradients(head, ids)
        self.assertEqual(rows.shape, (4, dim))
        for k, i in enumerate(ids):
            net.zero_grad()
            value = loss(net(X[i:i + 1]), y[i:i + 1])
            value.backward()
            self.assertTrue(all(p.grad is None for p in net[0].parameters()))
            expected = torch.cat([p.grad.reshape(-1) for p in net.parameters() if p.requires_grad]).double().numpy()
            np.testing.assert_allclose(rows[k], expected, rtol=1e-5, atol=1e-7)
            self.assertAlmostEqual(losses(head, ids)[k], value.item(), places=5)

        W0, b0 = frozen

        def by_hand(x, ids):  # the head's cross-entropy gradient, written in torch's order of operations
            ids = torch.as_tensor(np.asarray(ids), dtype=torch.long)
            W1 = torch.as_tensor(x[:16], dtype=torch.float32).reshape(2, 8)
            b1 = torch.as_tensor(x[16:], dtype=torch.float32)
            h = torch.tanh(torch.nn.functional.linear(X[ids], W0, b0))
            g = torch.exp(torch.log_softmax(torch.nn.functional.linear(h, W1, b1), dim=1))
            g = g - torch.nn.functional.one_hot(y[ids], 2).float()
            return torch.cat([(g[:, :, None] * h[:, None, :]).reshape(len(ids), -1), g], 1).double().numpy()

        np.testing.assert_array_equal(by_hand(head, np.arange(600)), gradients(head, np.arange(600)))
        before = loss(net(X), y).item()
        options = dict(epsilon=4, delta=1e-5, seed=3, noise_key=KEY, G=1, M=1, epochs=2)
        mine = dptorch.fit(net, loss, X, y, progress=False, **options)
        for p, q in zip(net[0].parameters(), frozen):
            self.assertTrue(torch.equal(p, q))
            self.assertFalse(p.requires_grad)
        self.assertEqual(mine["d"], 18)
        released = torch.nn.utils.parameters_to_vector(net[2].parameters()).detach().double().numpy()
        np.testing.assert_allclose(released, mine["x"], rtol=1e-6)
        own = dpsosp.run_gradients(by_hand, 600, 18, x0=head, **options)
        for key in ("d", "epsilon", "delta", "noise_multiplier", "steps", "mechanism", "curve"):
            self.assertEqual(mine[key], own[key], key)
        self.assertTrue(np.array_equal(mine["x"], own["x"]))
        self.assertLess(loss(net(X), y).item(), before - 0.05)
        for p in net.parameters():
            p.requires_grad_(False)
        with self.assertRaisesRegex(ValueError, "^module: has no parameter that requires a gradient$"):
            dptorch.fit(net, loss, X, y, epsilon=1)

    def test_the_certificate_of_a_partly_frozen_module_is_the_heads(self):
        # With the body frozen, certify is the certificate of the trainable head (d = 18) on the body's features:
        # the same figures as certify of the head alone on those features, and a gradient of 18 coordinates.
        from unittest import mock
        X, y = data(300)
        loss = torch.nn.functional.cross_entropy
        net = frozen_net()
        head = torch.nn.Linear(8, 2)
        head.load_state_dict(net[2].state_dict())
        with torch.no_grad():
            features = torch.tanh(torch.nn.functional.linear(X.double(), net[0].weight.double(), net[0].bias.double()))
        seen = []
        real = dpsosp._core.certify_operator

        def spy(gradient, hvp, rho):
            seen.append((len(gradient), len(hvp(np.ones(len(gradient))))))
            return real(gradient, hvp, rho)

        with mock.patch.object(dpsosp._core, "certify_operator", spy):
            mine = dptorch.certify(net, loss, X, y, rho=2)
        self.assertEqual(seen, [(18, 18)])
        own = dptorch.certify(head, loss, features, y, rho=2)
        for key in ("grad_norm", "lambda_min", "sosp_gap"):
            self.assertAlmostEqual(mine[key], own[key], delta=1e-9, msg=key)
        self.assertGreater(mine["lambda_min"], -1e-9)  # convex in the head

    def test_bad_input_is_one_clear_line(self):
        X, y = data(100)
        net = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
        with self.assertRaisesRegex(ValueError, r"^module: 1 is batch normalization, which mixes the records"):
            dptorch.fit(net, torch.nn.functional.cross_entropy, X, y, epsilon=1)
        with self.assertRaisesRegex(TypeError, "module: expected a torch.nn.Module"):
            dptorch.fit(lambda x: x, torch.nn.functional.cross_entropy, X, y, epsilon=1)
        with self.assertRaisesRegex(ValueError, "y: 99 targets for 100 records"):
            dptorch.fit(torch.nn.Linear(6, 2), torch.nn.functional.cross_entropy, X, y[:99], epsilon=1)
        with self.assertRaisesRegex(ValueError, r"gradients: returned shape \(\d+, 3\) for \d+ records of 4 parameters"):
            dpsosp.run_gradients(lambda x, ids: np.zeros((len(ids), 3)), 100, 4, epsilon=1, G=1, M=1)
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'colour'"):
            dpsosp.run_gradients(lambda x, ids: 0, 100, 4, colour=1)

    def test_nan_losses_are_clipped_as_elsewhere(self):
        # A record whose gradient is NaN contributes zero (the library's clip rule); the run goes on.
        n, p = 2000, 4
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, p))

        def gradients(x, ids):
            rows = X[ids] * (X[ids] @ x - 1)[:, None]
            rows[ids % 10 == 0] = np.nan
            return rows

        r = dpsosp.run_gradients(gradients, n, p, epsilon=2, delta=1e-6, G=1, M=1, seed=1)
        self.assertTrue(np.all(np.isfinite(r["x"])))
        self.assertGreater(r["diagnostics"]["nonfinite"]["total"], 0)

    def test_a_run_takes_no_hessian_vector_product(self):
        # The steps, the saddle escape and the G/M estimate read gradients only (docs/torch.md): an hvp that raises
        # is never called, whatever the algorithm.
        rng = np.random.default_rng(0)
        X = rng.normal(size=(3000, 3))
        y = X @ [1.0, -1.0, 0.5]

        def hvp(x, i, v):
            raise AssertionError("hvp called")

        for algo in ("spider-mf-adaptive", "spider-tree-adaptive", "spider-gauss-fixed", "dpsgd"):
            r = dpsosp.run_gradients(lambda x, ids: X[ids] * (X[ids] @ x - y[ids])[:, None], 3000, 3, algo=algo,
                                     epsilon=2, delta=1e-6, hvp=hvp, seed=1, noise_key=KEY)
            self.assertGreater(r["steps"], 0, algo)

    def test_the_audit_of_the_torch_path_is_the_librarys(self):
        # The torch path's runs release what the library's own canary model releases, bit for bit: the same
        # result, honest (no violation) and tampered (noise / 10 caught), on one pass of dpsgd, passes of
        # spider-mf-adaptive over the order and its Poisson passes (the default of dpsosp.torch.fit).
        cases = [dict(algo="dpsgd"), dict(algo="spider-mf-adaptive", steps=5, epochs=2, sampling="order"),
                 dict(algo="spider-mf-adaptive", steps=5, epochs=2, canaries=8)]
        for case in cases:
            for tamper in ("none", "noise-div-10"):
                with self.subTest(**case, tamper=tamper):
                    own = dpsosp.audit(runs=200, seed=3, tamper=tamper, **case)
                    theirs = dptorch.audit(runs=200, seed=3, tamper=tamper, **case)
                    self.assertEqual(own["model"], "audit")
                    self.assertEqual(theirs["model"], "caller")
                    for key in own:
                        if key not in ("model", "seconds"):
                            self.assertEqual(theirs[key], own[key], key)
                    self.assertEqual(theirs["violation"], tamper != "none", theirs["violation_by"])
                    self.assertEqual(theirs["failures"]["with_canary"] + theirs["failures"]["without_canary"], 0)

    def test_the_torch_path_audit_has_teeth_and_stays_under_the_claim(self):
        # 2 x 1000 runs of one spider-mf-adaptive pass of 10 steps through functorch: the honest claim holds (the
        # 95% lower bound stays under epsilon 1; a false failure has probability at most 6%, false_alarm, and the
        # seed is fixed) and the canary is as loud as claimed (mu estimated to about +-0.05, so 0.2 is >= 4 sd).
        r = dptorch.audit(steps=10, runs=1000, seed=5)
        self.assertFalse(r["violation"], r["violation_by"])
        self.assertLessEqual(r["epsilon_lower_bound"], r["claimed_epsilon"])
        self.assertAlmostEqual(r["claimed_epsilon"], 1.0, places=6)
        self.assertLess(abs(r["empirical_mu"] - r["claimed_mu"]), 0.2)
        self.assertLessEqual(r["false_alarm"], 0.06 + 1e-12)

    def test_the_torch_audit_refuses_what_does_not_apply(self):
        with self.assertRaisesRegex(ValueError, "linear canary only"):
            dptorch.audit(canary="quadratic-o2", runs=10)
        with self.assertRaisesRegex(TypeError, "caller"):
            dptorch.audit(caller=lambda records: None, runs=10)
        with self.assertRaisesRegex(ValueError, "runs must be at least 4"):
            dptorch.audit(runs=2)
        # A caller whose gradients are of the wrong shape fails the claim's reference run, in one line.
        with self.assertRaisesRegex(ValueError, "gradients returned"):
            dpsosp.audit(algo="dpsgd", runs=10, caller=lambda records: (lambda x, ids: np.zeros((len(ids), 3))))


def frozen_net(seed=0):
    """tiny_net with its first Linear frozen (requires_grad=False): only the head, 8 x 2 + 2 parameters, trains."""
    net = tiny_net(seed)
    net[0].requires_grad_(False)
    return net


def tiny_net(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


if __name__ == "__main__":
    unittest.main()
