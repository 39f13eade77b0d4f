"""What the estimators share: arrays to named columns, the spec round trip, random generators.

A spec (TOML) holds a model's hyperparameters and where its data are; an estimator holds the
same hyperparameters and gets its data from ``fit``. :func:`spec_text` writes the sections an
estimator knows (``[data]``'s path, target and features come from the caller), and
:func:`load_model` reads a spec file back into the model object the estimator's
``from_spec`` maps onto its parameters.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["category_codes", "feature_names", "load_model", "rng", "spec_text"]


def feature_names(estimator, n_features: int) -> tuple[str, ...]:
    """The columns' names: the DataFrame's (``feature_names_in_``), else ``x0, x1, ...``."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return tuple(str(n) for n in names)
    return tuple(f"x{j}" for j in range(n_features))


def category_codes(estimator, X, y=None, *, reset: bool, fit: bool = False,
                   allow_nan: bool = False):
    """``X`` (``fit``: ``(X, y)``) validated as category codes ``0, 1, ...``, as int64.

    With ``allow_nan`` a missing cell (NaN) is kept as the code -1.

    Raises
    ------
    ValueError
        A negative value ("Negative values in data", scikit-learn's wording) or one that is
        not an integer.
    """
    from sklearn.utils.validation import validate_data

    nan = "allow-nan" if allow_nan else True
    X, y = (validate_data(estimator, X, y, reset=reset, ensure_all_finite=nan)
            if fit else (validate_data(estimator, X, reset=reset, ensure_all_finite=nan), None))
    missing = np.isnan(X) if allow_nan else np.zeros(X.shape, bool)
    values = np.where(missing, 0, X)
    if np.any(values < 0):
        raise ValueError("Negative values in data: X must hold category codes 0, 1, ...")
    if np.any(values != np.floor(values)):
        raise ValueError("X must hold category codes (integers 0, 1, ...) or categories (text "
                         "or pandas categorical columns): encode other numbers with "
                         "sklearn.preprocessing.OrdinalEncoder")
    codes = np.where(missing, -1, values).astype(np.int64)
    return (codes, y) if fit else codes


def rng(random_state) -> np.random.Generator:
    """A numpy Generator from None, an int, a Generator or a RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def load_model(path: str | Path, name: str):
    """The model object of the spec at ``path``, which must be a ``model = name`` spec."""
    from bayescheck.models.errors import SpecError
    from bayescheck.models.spec import load_spec

    spec = load_spec(path)
    if spec.model.name != name:
        raise SpecError(f"is a {spec.model.name!r} spec; this estimator reads {name!r} specs",
                        path=Path(path), key="model")
    return spec.model


def _toml_value(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} in a spec")


def spec_text(model: str, sections: dict[str, dict], top: dict | None = None) -> str:
    """TOML text of a spec: ``model = ...``, the ``top`` keys, then one table per section.

    Keys whose value is None are left out (the spec's default applies).
    """
    lines = [f"model = {_toml_value(model)}"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in (top or {}).items() if v is not None]
    for name, table in sections.items():
        body = [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None]
        if body:
            lines += ["", f"[{name}]", *body]
    return "\n".join(lines) + "\n"
