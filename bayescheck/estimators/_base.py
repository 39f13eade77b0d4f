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

__all__ = ["category_codes", "feature_names", "load_model", "require_code_tables", "rng",
           "spec_text", "within_range"]


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


def require_code_tables(estimator, sizes, n_classes: int, *, pairs: bool = False) -> None:
    """Refuse category tables, sized by each column's largest code, this machine cannot hold.

    Parameters
    ----------
    estimator : object
        For the columns' names.
    sizes : array_like of int
        Categories per column (its largest code + 1).
    n_classes : int
        Classes (every table has a row per class).
    pairs : bool
        Tables of every pair of columns too (one-dependence estimators).

    Raises
    ------
    bayescheck.models.resources.TooLarge
        A ``ValueError`` naming the column with the largest code, the tables' size and the
        machine's memory.
    """
    from bayescheck.models.resources import require_category_tables

    sizes = [int(n) for n in sizes]
    require_category_tables(feature_names(estimator, len(sizes)), sizes, n_classes,
                            pairs=pairs,
                            remedy="the tables are sized by each column's largest code (here "
                                   f"up to {max(sizes, default=1) - 1:,}): encode the values "
                                   "as codes 0, 1, ..., k-1 (sklearn.preprocessing."
                                   "OrdinalEncoder)")


def within_range(X, y=None):
    """``X`` (and ``y``) within the limit `bayescheck fit` puts on a data file's values.

    Beyond :data:`bayescheck.data.numbers.MAX_MAGNITUDE` the squares summed into variances
    and precisions overflow float64, and a fit returns NaN or collapses; the CLI refuses such
    a file naming its row and column, and the estimators refuse the array the same way.

    Raises
    ------
    ValueError
        Naming the first such entry.
    """
    from bayescheck.data.numbers import too_large

    for name, values in (("X", X), ("y", y)):
        if values is None:
            continue
        values = np.asarray(values, dtype=np.float64)
        found = too_large(values.reshape(len(values), -1))
        if found is not None:
            i, j, message = found
            raise ValueError(f"{name}[{i}, {j}]: {message}" if values.ndim > 1 else
                             f"{name}[{i}]: {message}")


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
