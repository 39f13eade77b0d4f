"""What each model's entries of ``posterior.json`` look like, checked before ``predict`` uses them.

:func:`check_entries` holds, per model, the shapes the fit writes: every list as long as
what it indexes (class counts per class, a mean per class and feature, a loss matrix of
options x classes, ...), label lists that are non-empty and hold distinct non-empty strings,
counts that are whole numbers between 0 and the number of rows, positive shapes and scales,
and locations within the fit's limit on values
(:data:`~bayescheck.data.numbers.MAX_MAGNITUDE`: a mean of values below it is below it).
A failed check is a :class:`Bad` naming the key; :mod:`.posterior_file` words the refusal.
"""

from __future__ import annotations

import math

import numpy as np
from bayescheck.data.numbers import MAX_MAGNITUDE

__all__ = ["Bad", "check_entries", "labels", "numbers", "positive_definite"]


class Bad(Exception):
    """An entry no fit writes: ``key`` (``parameters.theta.mean[1]``) and why."""

    def __init__(self, key: str, why: str):
        super().__init__(key, why)
        self.key, self.why = key, why


def _nan_for_none(value):
    if isinstance(value, list):
        return [_nan_for_none(v) for v in value]
    return math.nan if value is None else value


def numbers(value, key: str, shape: tuple | None = None, *,
            undefined: bool = False) -> np.ndarray:
    """``value`` (a number or nested lists of numbers) as a float array; finite.

    With ``shape``, the array must have it (a ``None`` in ``shape``: any length there). With
    ``undefined``, null stands for a moment that does not exist and becomes NaN.
    """
    def ok(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def walk(v, path):
        if isinstance(v, list):
            for i, item in enumerate(v):
                walk(item, f"{path}[{i}]")
        elif v is None and undefined:
            return
        elif not ok(v):
            raise Bad(path, f"expected a number, got {v!r:.60}")
        elif not math.isfinite(v):
            raise Bad(path, f"expected a finite number, got {v!r}")

    walk(value, key)
    try:
        array = np.asarray(_nan_for_none(value) if undefined else value, dtype=float)
    except ValueError:
        raise Bad(key, "expected a rectangular table of numbers") from None
    if shape is not None and (array.ndim != len(shape) or any(
            n is not None and n != m for n, m in zip(shape, array.shape, strict=True))):
        want = " x ".join("any" if n is None else str(n) for n in shape) or "a single number"
        got = " x ".join(map(str, array.shape)) or "a single number"
        raise Bad(key, f"expected shape {want}, got {got}")
    return array


def positive_definite(cov: np.ndarray, key: str) -> None:
    """A covariance: square, symmetric, positive definite.

    Rows and columns of zeros (a weight ARD pruned) are left aside.
    """
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise Bad(key, f"expected a square matrix, got shape {cov.shape}")
    scale = max(float(np.abs(cov).max(initial=0.0)), np.finfo(float).tiny)
    if not np.allclose(cov, cov.T, rtol=1e-9, atol=1e-12 * scale):
        raise Bad(key, "the covariance is not symmetric")
    kept = np.flatnonzero(np.abs(cov).sum(axis=0) > 0)
    try:
        np.linalg.cholesky(cov[np.ix_(kept, kept)])
    except np.linalg.LinAlgError:
        raise Bad(key, "the covariance is not positive definite") from None


def _table(parent: dict, name: str, key: str) -> dict:
    value = parent.get(name)
    if not isinstance(value, dict):
        raise Bad(f"{key}.{name}", f"expected a table, got {value!r:.60}")
    return value


def labels(value, key: str, *, at_least: int = 1) -> list[str]:
    """A list of at least ``at_least`` distinct, non-empty strings (classes, states, ...)."""
    if not isinstance(value, list):
        raise Bad(key, f"expected a list of labels, got {value!r:.60}")
    if len(value) < at_least:
        raise Bad(key, f"expected at least {at_least} label(s), got {len(value)}")
    for i, label in enumerate(value):
        if not isinstance(label, str) or not label.strip():
            raise Bad(f"{key}[{i}]", f"expected a non-empty label, got {label!r:.60}")
    if len(set(value)) != len(value):
        twice = next(v for v in value if value.count(v) > 1)
        raise Bad(key, f"the label {twice!r} appears twice")
    return value


def _same(value, expected: list, key: str, what: str) -> None:
    if value != expected:
        raise Bad(key, f"expected {what} {expected}, got {value!r:.100}")


def _counts(value, key: str, shape: tuple, n_rows: int | None) -> np.ndarray:
    """Whole numbers from 0 to the number of rows, of ``shape``."""
    array = numbers(value, key, shape)
    bad = (array < 0) | (array != np.floor(array))
    if n_rows is not None:
        bad |= array > n_rows
    if bad.any():
        at = np.argwhere(bad)[0]
        where = key + "".join(f"[{i}]" for i in at)
        most = "" if n_rows is None else f" and {n_rows} (the fit's rows)"
        raise Bad(where, f"expected a count, a whole number between 0{most}, got "
                         f"{array[tuple(at)]!r}")
    return array


def _positive(value, key: str, shape: tuple = ()) -> np.ndarray:
    array = numbers(value, key, shape)
    if (array <= 0).any():
        raise Bad(key, "expected positive number(s)")
    return array


def _within_limit(array: np.ndarray, key: str, limit: float = MAX_MAGNITUDE) -> None:
    if array.size and np.abs(array).max() > limit:
        at = np.unravel_index(int(np.abs(array).argmax()), array.shape)
        raise Bad(key + "".join(f"[{i}]" for i in at),
                  f"{array[at]:.6g} is beyond what a fit writes (a value of at most "
                  f"{limit:.0e} in magnitude, the fit's limit on the data's values)")


def _decision(par: dict, classes: list) -> None:
    if "decision" not in par:
        return
    key = "parameters.decision"
    entry = _table(par, "decision", "parameters")
    options = labels(entry.get("options"), f"{key}.options")
    saved = labels(entry.get("classes"), f"{key}.classes", at_least=2)
    if sorted(saved) != sorted(classes):
        raise Bad(f"{key}.classes", f"expected the classes {classes}, got {saved}")
    if (numbers(entry.get("loss"), f"{key}.loss", (len(options), len(classes))) < 0).any():
        raise Bad(f"{key}.loss", "a negative loss")


def _naive_bayes(par: dict, n_rows: int | None) -> None:
    key = "parameters.statistics"
    st = _table(par, "statistics", "parameters")
    classes = labels(st.get("classes"), f"{key}.classes", at_least=2)
    if "classes" in par:
        _same(par["classes"], classes, "parameters.classes", "the classes of statistics")
    features = labels(st.get("features"), f"{key}.features")
    kinds = st.get("kinds")
    if not isinstance(kinds, list) or len(kinds) != len(features) or any(
            k not in ("categorical", "gaussian") for k in kinds):
        raise Bad(f"{key}.kinds", f"expected 'categorical' or 'gaussian' for each of the "
                                  f"{len(features)} features, got {kinds!r:.100}")
    K = len(classes)
    categorical = [f for f, k in zip(features, kinds, strict=True) if k == "categorical"]
    G = len(features) - len(categorical)
    per_class = _counts(st.get("class_counts"), f"{key}.class_counts", (K,), n_rows)
    if n_rows is not None and per_class.sum() > n_rows:
        raise Bad(f"{key}.class_counts", f"the counts add up to more than the fit's "
                                         f"{n_rows} rows")
    mean = numbers(st.get("gaussian_mean"), f"{key}.gaussian_mean", (K, G))
    _within_limit(mean, f"{key}.gaussian_mean")
    if (numbers(st.get("gaussian_m2"), f"{key}.gaussian_m2", (K, G)) < 0).any():
        raise Bad(f"{key}.gaussian_m2", "a negative sum of squares")
    categories = _table(st, "categories", key)
    counts = _table(st, "category_counts", key)
    _same(list(categories), categorical, f"{key}.categories", "the categorical features")
    _same(list(counts), categorical, f"{key}.category_counts", "the categorical features")
    for f in categorical:
        states = labels(categories[f], f"{key}.categories.{f}")
        table = _counts(counts[f], f"{key}.category_counts.{f}", (K, len(states)), n_rows)
        over = np.flatnonzero(table.sum(axis=1) > per_class)
        if over.size:
            raise Bad(f"{key}.category_counts.{f}[{over[0]}]",
                      f"more values counted than the class's {int(per_class[over[0]])} rows")
    _decision(par, classes)


def _semi_naive_bayes(par: dict, n_rows: int | None) -> None:
    classes = labels(par.get("classes"), "parameters.classes", at_least=2)
    categories = _table(par, "categories", "parameters")
    features = labels(list(categories), "parameters.categories")
    sizes = [len(labels(categories[f], f"parameters.categories.{f}")) for f in features]
    K = len(classes)
    st = _table(par, "statistics", "parameters")
    key = "parameters.statistics"
    _same(st.get("cardinality"), [K, *sizes], f"{key}.cardinality",
          "the numbers of classes and categories")
    pairs = sum(K * sizes[i] * sizes[j] for i in range(len(sizes))
                for j in range(i + 1, len(sizes)))
    _counts(st.get("counts"), f"{key}.counts", (K + K * sum(sizes) + pairs,), n_rows)
    structure = _table(par, "structure", "parameters")
    kind = structure.get("kind")
    if kind not in ("spode", "tan", "aode"):
        raise Bad("parameters.structure.kind", f"expected spode, tan or aode, got {kind!r:.60}")
    if kind != "aode":
        parents = _table(structure, "parents", "parameters.structure")
        _same(list(parents), features, "parameters.structure.parents", "the features")
        for f, p in parents.items():
            if p is not None and (p not in features or p == f):
                raise Bad(f"parameters.structure.parents.{f}",
                          f"expected another feature or null, got {p!r:.60}")
    _decision(par, classes)


def _network(par: dict, n_rows: int | None) -> None:
    labels(par.get("nodes"), "parameters.nodes")


def _gaussian_mixture(par: dict, n_rows: int | None) -> None:
    weights = _table(par, "weights", "parameters")
    components = labels(weights.get("components"), "parameters.weights.components")
    K = len(components)
    numbers(weights.get("estimate"), "parameters.weights.estimate", (K,))
    means = _table(par, "means", "parameters")
    _same(means.get("components"), components, "parameters.means.components",
          "the components of weights")
    D = len(labels(means.get("features"), "parameters.means.features"))
    _within_limit(numbers(means.get("estimate"), "parameters.means.estimate", (K, D)),
                  "parameters.means.estimate")
    if "covariances" in par:
        covariances = _table(par, "covariances", "parameters")
        numbers(covariances.get("estimate"), "parameters.covariances.estimate", (K, D, D))
    else:
        sds = _table(par, "sds", "parameters")
        numbers(sds.get("estimate"), "parameters.sds.estimate", (K, D))


def _linear_regression(par: dict, n_rows: int | None) -> None:
    theta = _table(par, "theta", "parameters")
    P = len(labels(theta.get("features"), "parameters.theta.features"))
    for name, shape in (("mean", (P,)), ("sd", (P,)), ("cov", (P, P)), ("scale", (P,)),
                        ("scale_matrix", (P, P))):
        if name in theta:
            numbers(theta[name], f"parameters.theta.{name}", shape)
    if "scale_matrix" in theta:
        positive_definite(numbers(theta["scale_matrix"], "parameters.theta.scale_matrix"),
                          "parameters.theta.scale_matrix")
    sigma2 = _table(par, "sigma2", "parameters")
    for name in ("value", "shape", "scale"):
        if name in sigma2:
            _positive(sigma2[name], f"parameters.sigma2.{name}")
    # the Inverse-Gamma's shape is the prior's (not negative) plus half the rows, less half
    # the coefficients under a flat prior
    if "shape" in sigma2 and n_rows is not None and sigma2["shape"] < (n_rows - P) / 2:
        raise Bad("parameters.sigma2.shape", f"expected at least (rows - coefficients) / 2 = "
                                             f"{(n_rows - P) / 2:g} (the fit's {n_rows} rows, "
                                             f"{P} coefficients), got {sigma2['shape']!r}")


def _ard(par: dict, n_rows: int | None) -> None:
    w = _table(par, "w", "parameters")
    features = labels(w.get("features"), "parameters.w.features")
    numbers(w.get("mean"), "parameters.w.mean", (len(features),))
    kept = w.get("cov_features")
    if not isinstance(kept, list) or kept:  # an empty list: every weight pruned
        kept = labels(kept, "parameters.w.cov_features")
    if any(f not in features for f in kept):
        raise Bad("parameters.w.cov_features", "a feature that is not among w.features")
    numbers(w.get("cov"), "parameters.w.cov", (len(kept), len(kept)) if kept else None)
    _positive(_table(par, "sigma2", "parameters").get("value"), "parameters.sigma2.value")


def _beta_bernoulli(par: dict, n_rows: int | None) -> None:
    p = _table(par, "p", "parameters")
    for name in ("a", "b"):
        _positive(p.get(name), f"parameters.p.{name}")


def _dirichlet_categorical(par: dict, n_rows: int | None) -> None:
    pi = _table(par, "pi", "parameters")
    n = len(labels(pi.get("categories"), "parameters.pi.categories"))
    _positive(pi.get("alpha"), "parameters.pi.alpha", (n,))


_CHECKS = {"naive_bayes": _naive_bayes, "semi_naive_bayes": _semi_naive_bayes,
           "bayesian_network": _network, "gaussian_mixture": _gaussian_mixture,
           "linear_regression": _linear_regression, "ard": _ard,
           "beta_bernoulli": _beta_bernoulli, "dirichlet_categorical": _dirichlet_categorical}


def check_entries(model: str, parameters: dict, n_rows) -> None:
    """The checks of ``model``'s entries (see the module's description); :class:`Bad` if not.

    Parameters
    ----------
    model : str
        The model's name (``posterior.json``'s ``"model"``); a model without checks here
        passes.
    parameters : dict
        ``posterior.json``'s ``"parameters"``.
    n_rows : int or None
        The fit's rows (bounds every count), None when the file does not say.
    """
    if not isinstance(n_rows, int) or isinstance(n_rows, bool) or n_rows < 0:
        n_rows = None
    check = _CHECKS.get(model)
    if check is not None:
        check(parameters, n_rows)
