"""The run's options from the library's table (include/dpsosp/options.hpp): run()'s signature, defaults and
docstring are built from it, and each keyword a user gives is passed to the library as text, which checks it by
the table's rules and answers in the keyword's name. An option added to the table appears here, in
`dpsosp run --help` and in docs/parameters.md alike."""
import inspect
import numbers
import os
import textwrap

from . import _core

TABLE = _core.run_option_table()
# The options the library reads from text; the model's and the data's (classes, bounds, fit_intercept, ...)
# are run()'s own keywords, checked against the same rules in _api.py.
SHARED = {row["key"]: row for row in TABLE if not row["model_or_data"]}


def python_default(row):
    """The table's default as a Python value (None where it is computed or off)."""
    kind, text = row["kind"], row["default"]
    if kind == "flag":
        return False
    if kind == "switch":
        return None if text == "" else text == "on"
    if text == "" or kind == "overrides":
        return None
    if kind == "real":
        return float(text)
    if kind == "count":
        return int(text)
    return text


def _number(key, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{key}: expected a number, got {value!r}")
    return str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))


def _count(key, value, rule):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{key}: expected an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if not float(value).is_integer():
            raise ValueError(f"{key}: expected {rule}, got {value!r}")
        value = int(value)
    return str(int(value))


def option_text(key, value):
    """The text the library reads for a keyword's value; TypeError for a value of the wrong type."""
    row = SHARED[key]
    kind = row["kind"]
    if kind == "real":
        return _number(key, value)
    if kind == "count":
        return _count(key, value, row["rule"])
    if kind == "constant":
        return value if isinstance(value, str) else _number(key, value)
    if kind in ("switch", "flag"):
        if not isinstance(value, bool) and type(value).__name__ != "bool_":
            raise TypeError(f"{key}: expected True or False, got {value!r}")
        return ("on" if value else "off") if kind == "switch" else ("true" if value else "false")
    if kind == "choice":
        if not isinstance(value, str):
            raise TypeError(f"{key}: expected {row['rule']}, got {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{key}: expected a file name, got {value!r}")
        return os.fspath(value)
    raise TypeError(f"{key}: not a text option")


def overrides_text(overrides):
    """overrides={'alpha': 0.1, 'b': 500} as the library's name -> text."""
    if not isinstance(overrides, dict):
        raise TypeError(f"overrides: expected a dict of parameter names to numbers, got {overrides!r}")
    out = {}
    for name, value in overrides.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"overrides['{name}']: expected a number, got {value!r}")
        out[str(name)] = str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))
    return out


def given_options(options):
    """The keywords run() got that the table defines, as text (None: not given); overrides apart."""
    text = {}
    for key, value in options.items():
        if key == "overrides" or value is None:
            continue
        text[key] = option_text(key, value)
    return text, overrides_text(options.get("overrides") or {})


def signature(own):
    """run(model, X=None, y=None, *, <the table's options>, <own keywords>)."""
    P = inspect.Parameter
    params = [P("model", P.POSITIONAL_OR_KEYWORD), P("X", P.POSITIONAL_OR_KEYWORD, default=None),
              P("y", P.POSITIONAL_OR_KEYWORD, default=None)]
    params += [P(key, P.KEYWORD_ONLY, default=python_default(row)) for key, row in SHARED.items()]
    params += [P(key, P.KEYWORD_ONLY, default=value) for key, value in own.items()]
    return inspect.Signature(params)


def docs():
    """The options' part of run()'s docstring: each as the table gives it."""
    lines = ["Options (the library's table, the same as `dpsosp run --help`; None or absent: the default):", ""]
    for key, row in SHARED.items():
        default = python_default(row)
        head = f"{key} ({row['rule']}; default {default!r})" if default is not None else f"{key} ({row['rule']})"
        lines += textwrap.wrap(f"{head}: {row['help']}", width=112, initial_indent="    ",
                               subsequent_indent="        ")
    return "\n".join(lines)


def estimator_docs(cls):
    """The Parameters section of an estimator's docstring: each of its parameters that the library's table
    has, with the estimator's own default and the table's rule and help."""
    params = inspect.signature(cls.__init__).parameters
    lines = ["", "    Parameters shared with dpsosp.run and `dpsosp run` (the library's option table; the estimator's",
             "    defaults):", ""]
    for key, param in params.items():
        row = SHARED.get(key)
        if row is None:
            continue
        head = f"{key} ({row['rule']}; default {param.default!r})"
        lines += textwrap.wrap(f"{head}: {row['help']}", width=112, initial_indent="    ",
                               subsequent_indent="        ", break_on_hyphens=False)
    return "\n".join(lines) + "\n"
