"""One contract (include/dpsosp/options.hpp): run()'s keywords, their defaults and docstring, `dpsosp run
--help`, docs/parameters.md's option table and the estimators' defaults all come from the library's option
table."""
import inspect
import os
import re
import subprocess
import sys
import unittest

import dpsosp
import numpy as np
from dpsosp import _core, _options

CLI = os.environ.get("DPSOSP_CLI")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class OptionTable(unittest.TestCase):
    def test_keys_and_flags_are_unique(self):
        rows = _core.run_option_table()
        self.assertEqual(len({r["key"] for r in rows}), len(rows))
        self.assertEqual(len({r["flag"] for r in rows}), len(rows))
        for r in rows:
            self.assertTrue(r["help"], r["key"])
            if r["kind"] == "choice" and r["default"]:
                self.assertIn(r["default"], r["choices"], r["key"])

    def test_run_takes_every_option_with_its_default(self):
        params = inspect.signature(dpsosp.run).parameters
        for key, row in _options.SHARED.items():
            self.assertIn(key, params)
            self.assertEqual(params[key].default, _options.python_default(row), key)
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'batchsize'"):
            dpsosp.run("logistic", [[0.0]], [0.0], batchsize=10)

    def test_the_docstring_lists_every_option(self):
        for key in _options.SHARED:
            self.assertRegex(dpsosp.run.__doc__, r"\n    " + re.escape(key) + r" : ", key)  # numpydoc: "key : type"

    @unittest.skipUnless(CLI, "DPSOSP_CLI (the dpsosp binary) not set")
    def test_the_cli_help_is_the_table(self):
        help_text = subprocess.run([CLI, "run", "--help"], capture_output=True, text=True, check=True).stdout
        flat = " ".join(help_text.split())
        for key, row in _options.SHARED.items():
            flag = row["flag"]
            if row["default"] and row["kind"] not in ("flag", "overrides"):
                self.assertIn(f"{flag} TEXT={row['default']} ", flat, key)
            else:
                self.assertRegex(help_text, r"\n  " + re.escape(flag) + r"\b", key)
            self.assertIn(" ".join(row["help"].split()[:8]), flat, key)

    def test_the_estimators_docstrings_list_their_table_parameters(self):
        for cls in (dpsosp.DPClassifier, dpsosp.DPRegressor, dpsosp.DPPCA):
            for key, param in inspect.signature(cls.__init__).parameters.items():
                if key in _options.SHARED:
                    flat = " ".join(cls.__doc__.split())
                    self.assertRegex(flat, r" " + re.escape(key) + r" : [^:]*, default " +
                                     re.escape(repr(param.default)) + r" ", (cls.__name__, key))

    def test_the_docs_page_is_the_table(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        try:
            import option_docs
        finally:
            sys.path.pop(0)
        with open(option_docs.PAGE, encoding="utf-8") as f:
            page = f.read()
        self.assertEqual(option_docs.page_with(option_docs.table(), page), page,
                         "docs/parameters.md's option table is not the library's: run scripts/option_docs.py --write")

    def test_the_estimators_take_the_tables_defaults(self):
        from dpsosp import DPClassifier, DPPCA, DPRegressor
        # DPPCA keeps dpsgd at G = M = 1: at its start x0 = 0, the PCA objective's saddle, every per-example
        # gradient is zero, so the private medians of spider-mf-adaptive's default say nothing (docs/python.md).
        kept = {DPPCA: {"algo", "G", "M"}}
        for est in (DPClassifier, DPRegressor, DPPCA):
            params = est().get_params()
            shared = [k for k in params if k in _options.SHARED and k not in kept.get(est, ())]
            self.assertGreaterEqual(len(shared), 6, est.__name__)
            for key in shared:
                self.assertEqual(params[key], _options.python_default(_options.SHARED[key]), (est.__name__, key))

    def test_refusals_are_in_the_keywords_words(self):
        # A bad-input corpus through Python: each refusal names the keyword, never a C++ name.
        import numpy as np
        cxx = re.compile(r"::|(^|[\s(])([a-z]+_[a-z_]+): |\b(privacy|options|estimate)\.[a-z_]+|RunOptions")
        keywords = set(inspect.signature(dpsosp.run).parameters)
        X = np.random.default_rng(0).normal(size=(300, 3))
        y = (X[:, 0] > 0).astype(float)
        cases = [dict(epsilon=0), dict(delta=0.5), dict(tail=1.5), dict(algo="dpsgd", tail=0.5), dict(G=-1),
                 dict(sampling="sometimes"), dict(algo="spider", epsilon=2), dict(overrides={"gamma": 1}),
                 dict(algo="dpsgd", overrides={"sigma": 1}), dict(noise_key_file="/no/such/key"),
                 dict(scale_share=1.0), dict(bounds=[(1, 0)]), dict(o2=True, epochs=2), dict(bands=5000),
                 dict(batch_size=10 ** 6), dict(fit_intercept=True, classes=None, hidden=None), dict(epsilon=1000)]
        for kwargs in cases:
            model = "mlp" if "hidden" in kwargs else "logistic"
            with self.assertRaises(ValueError, msg=str(kwargs)) as raised:
                dpsosp.run(model, X, y, **{k: v for k, v in kwargs.items() if k not in ("classes", "hidden")})
            message = str(raised.exception)
            for m in cxx.finditer(message):  # a snake_case name is a keyword's, or a C++ name
                self.assertIn(m.group(2), keywords, message)


class PrivacyFigures(unittest.TestCase):
    """dpsosp.privacy and `dpsosp privacy` are one library function: the same figures, the same refusals."""

    CASES = [
        ((5, [1000, 500, 256], 1e-6), {}, ["--steps", "1000,500,256"]),
        ((1.1, 1000, 1e-5), {"sampling_rate": 0.01, "accountant": "pld", "epsilon": 2},
         ["--steps", "1000", "--sampling-rate", "0.01", "--accountant", "pld", "--epsilon", "2"]),
        ((2, 256, 1e-6), {"mechanism": "mf", "period": 64, "adjacency": "zero-out"},
         ["--steps", "256", "--mechanism", "mf", "--period", "64", "--adjacency", "zero-out"]),
        ((None, 1000, 1e-5), {"sampling_rate": 0.01, "target_epsilon": 3},
         ["--steps", "1000", "--sampling-rate", "0.01", "--target-epsilon", "3"]),
    ]

    @unittest.skipUnless(CLI, "DPSOSP_CLI (the dpsosp binary) not set")
    def test_the_same_figures_as_the_cli(self):
        import json
        for (z, steps, delta), options, flags in self.CASES:
            z_flag = [] if z is None else ["--noise-multiplier", repr(z)]
            cli = subprocess.run([CLI, "privacy", *z_flag, "--delta", repr(delta), *flags],
                                 capture_output=True, text=True, check=True).stdout
            self.assertEqual(dpsosp.privacy(z, steps, delta, **options), json.loads(cli), flags)

    def test_calibrate_gives_the_multiplier_for_the_target(self):
        # Each form's own accountant by default (pld for Poisson, gdp for the tree and mf), or the one asked for.
        for steps, epsilon, delta, options, figure in (
                (1000, 3.0, 1e-5, {"sampling_rate": 0.01}, "epsilon_pld"),
                (1000, 3.0, 1e-5, {"sampling_rate": 0.01, "accountant": "rdp"}, "epsilon"),
                ([1, 2, 4], 1.0, 1e-6, {}, "epsilon_gdp"),
                (256, 2.0, 1e-6, {"mechanism": "mf", "period": 64}, "epsilon_gdp")):
            with self.subTest(options=options):
                z = dpsosp.calibrate(steps, epsilon, delta, **options)
                figures = dpsosp.privacy(z, steps, delta, **options)
                self.assertLessEqual(figures[figure], epsilon)
                self.assertGreater(figures[figure], epsilon * (1 - 1e-3))
        with self.assertRaisesRegex(TypeError, "calibrate: takes epsilon"):
            dpsosp.calibrate(100, 1, 1e-6, target_epsilon=2)

    def test_refusals_name_the_keyword(self):
        X, y = np.ones((40, 2)), np.arange(40) % 2
        # An option that also takes auto says so (the CLI's words, with the keyword).
        with self.assertRaisesRegex(ValueError, r"^G: expected a finite number > 0, or auto, got -1"):
            dpsosp.run("logistic", X, y, G=-1)
        with self.assertRaisesRegex(ValueError, r"^scale_share: expected a number in \(0, 1\), or auto, got 2"):
            dpsosp.run("logistic", X, y, scale_share=2)
        with self.assertRaisesRegex(ValueError, r"^sampling_rate: expected a number in \(0, 1\]"):
            dpsosp.privacy(1, 100, 1e-6, sampling_rate=2)
        with self.assertRaisesRegex(ValueError, r"^period: applies to the mf form \(mechanism mf\)$"):
            dpsosp.privacy(1, 100, 1e-6, period=3)
        with self.assertRaisesRegex(ValueError, "unknown privacy option color"):
            dpsosp.privacy(1, 100, 1e-6, color=3)
        with self.assertRaises(TypeError):
            dpsosp.privacy(1, 100, 1e-6, epsilon=None)


if __name__ == "__main__":
    unittest.main()
