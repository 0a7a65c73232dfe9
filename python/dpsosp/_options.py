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


def _numpydoc_type(row):
    """The numpydoc type of an option: its kind in Python's words."""
    kind = row["kind"]
    if kind == "choice":
        return "{" + ", ".join(repr(c) for c in row["choices"]) + "}"
    if kind == "constant":
        return "float or 'auto'"
    return {"real": "float", "count": "int", "switch": "bool", "flag": "bool", "text": "str or os.PathLike",
            "overrides": "dict of str to float"}.get(kind, "str")


def _entry(key, row, default):
    """One numpydoc parameter: "key : type, default D" and the table's help and rule, indented below it."""
    head = f"    {key} : {_numpydoc_type(row)}, default {default!r}"
    help_text = row["help"].rstrip()
    body = help_text + ("" if help_text.endswith(".") else ".")
    if row["kind"] not in ("choice", "flag", "switch"):  # the type names those rules already
        body += f" Rule: {row['rule']}."
    return [head] + textwrap.wrap(body, width=112, initial_indent="        ", subsequent_indent="        ",
                                  break_on_hyphens=False)


def docs():
    """The options' entries of run()'s Parameters section (numpydoc): each as the table gives it, with the
    default run() takes (None: the library's, computed or off)."""
    lines = []
    for key, row in SHARED.items():
        lines += _entry(key, row, python_default(row))
    return "\n".join(lines).lstrip()


def estimator_docs(cls, own=None):
    """The entries of an estimator's Parameters section (numpydoc), in the order of its signature: those the
    library's table has with the estimator's own default and the table's rule and help; the others from own
    ({name: entry text}, where given)."""
    lines = []
    for key, param in inspect.signature(cls.__init__).parameters.items():
        row = SHARED.get(key)
        if row is not None:
            lines += _entry(key, row, param.default)
        elif (own or {}).get(key):
            lines.append("    " + own[key])
    return "\n".join(lines).lstrip()
