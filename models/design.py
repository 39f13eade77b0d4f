"""The columns of a regression: a target, feature columns, an optional intercept.

Shared by every family whose data are a design matrix and a response (linear regression,
ARD): how the ``[data]`` section names them, and how a batch becomes ``[X | y]``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.numbers import MAX_MAGNITUDE, numeric_columns
from bayescheck.data.sources import DataSource

from .errors import SpecError
from .resources import require_memory, square_matrices
from .spec import Section

__all__ = ["INTERCEPT", "check_intercept_first", "data_columns", "feature_matrix", "joint_design",
           "read_design_section"]

#: Name of the column of ones that ``intercept = true`` adds, first.
INTERCEPT = "intercept"


def check_intercept_first(features: tuple[str, ...], intercept: bool) -> None:
    """Refuse ``intercept=True`` whose ``features`` do not start with ``"intercept"``.

    The design puts the column of ones first and names it ``"intercept"``; features that
    leave it out would give a design one column wider than the coefficients.

    Raises
    ------
    InvalidArgument
        Naming ``features``.
    """
    if intercept and (not features or features[0] != INTERCEPT):
        from .validation import InvalidArgument

        raise InvalidArgument("features", f"with intercept=True the first feature must be "
                                          f"{INTERCEPT!r} (the column of ones the design adds), "
                                          f"got {list(features)!r}; write features=("
                                          f"{INTERCEPT!r}, *names) or intercept=False")


def data_columns(features, intercept: bool) -> list[str]:
    """The feature columns read from the data (the intercept is made, not read)."""
    return [f for f in features if not (intercept and f == INTERCEPT)]


def joint_design(batch: Batch, *, target: str, features, intercept: bool) -> np.ndarray:
    """One batch as ``[X | y]``, validated.

    The shape is ``(rows, d + 1)``: the intercept column first when requested, then the
    features in order, then the target.

    Keeping X and y in one block lets an engine take X'X, X'y and y'y from one product.
    """
    return numeric_columns(batch, [*data_columns(features, intercept), target],
                           max_magnitude=MAX_MAGNITUDE, ones_first=intercept)


def feature_matrix(batch: Batch, *, features, intercept: bool) -> np.ndarray:
    """New rows as the design ``X`` of a fit, ``(rows, d)``: no target needed.

    The intercept column of ones comes first when requested, as in :func:`joint_design`;
    a missing or non-numeric column is a :class:`~bayescheck.models.errors.DataError` naming it,
    and so is a value beyond the fit's limit (:data:`~bayescheck.data.numbers.MAX_MAGNITUDE`),
    which would overflow the predictive variance.
    """
    return numeric_columns(batch, data_columns(features, intercept), ones_first=intercept,
                           max_magnitude=MAX_MAGNITUDE)


def read_design_section(top: Section, path: Path):
    """Read ``[data] path`` and either ``formula`` or ``target, features, intercept``.

    Returns
    -------
    source, target, features, intercept, formula
        ``features`` defaults to every column but the target and starts with
        ``"intercept"`` when one is added. With ``formula``, ``formula`` is the
        :class:`~bayescheck.models.formula.FormulaDesign` fixed on the data, ``features`` its
        column names and ``intercept`` False (the formula has its own ``Intercept``);
        otherwise ``formula`` is None.
    """
    data = top.subsection("data")
    source = DataSource(data.string("path"), base=path.parent)
    if "formula" in data:
        given = [k for k in ("target", "features", "intercept") if k in data]
        if given:
            raise data.error(given[0], f"cannot be given with formula (the formula names the "
                                       f"response and the terms); remove "
                                       f"{', '.join('data.' + k for k in given)}")
        text = data.string("formula")
        data.finish()
        return _read_formula(text, source, path)
    data.raw("formula", None)  # absent here; listed among the valid keys
    target = data.string("target")
    features = data.strings("features", None)
    intercept = data.boolean("intercept", False)
    data.finish()

    columns = source.columns()
    where = source.files()[0]
    if target not in columns:
        raise SpecError(f"column {target!r} is not in {where}; it has: {', '.join(columns)}",
                        path=path, key="data.target")
    if features is None:
        features = [c for c in columns if c != target]
    else:
        present = set(columns)
        for f in features:
            if f not in present:
                raise SpecError(f"column {f!r} is not in {where}; it has: "
                                f"{', '.join(columns)}", path=path, key="data.features")
        if target in features:
            raise SpecError(f"the target {target!r} is also listed as a feature",
                            path=path, key="data.features")
    if intercept:
        if INTERCEPT in features:
            raise SpecError("intercept = true adds a column named 'intercept', but the data "
                            "already have one", path=path, key="data.intercept")
        features = [INTERCEPT, *features]
    if not features:
        raise SpecError("no features: the data have only the target column",
                        path=path, key="data.features")
    # The engines hold a few d x d matrices (prior, precision, its factor, the covariance).
    d = len(features)
    require_memory(square_matrices(6, d), f"{d} features (6 matrices of {d} x {d})",
                   path=path, key="data.features")
    return source, target, list(features), intercept, None


def _read_formula(text: str, source: DataSource, path: Path):
    from .formula import FormulaError, design_from_formula

    try:
        design = design_from_formula(text, source)
    except FormulaError as exc:
        raise SpecError(str(exc), path=path, key="data.formula") from None
    d = len(design.columns)
    require_memory(square_matrices(6, d), f"{d} terms (6 matrices of {d} x {d})",
                   path=path, key="data.formula")
    return source, design.target, list(design.columns), False, design


def design_on(formula: str, data):
    """A formula's :class:`~bayescheck.models.formula.FormulaDesign` fixed on Python data.

    ``data`` is a pandas frame or a :class:`~bayescheck.data.sources.DataSource`; a formula
    formulaic cannot read or this package cannot fit is a ``ValueError``.
    """
    from .formula import design_from_formula

    source = data if isinstance(data, DataSource) else DataSource.from_frame(data)
    return design_from_formula(formula, source)


def check_formula_model(model) -> None:
    """A model with a formula design has its columns as features and its response as target.

    Raises
    ------
    ValueError
        Features, target or intercept given that disagree with the formula.
    """
    design = model.formula
    if design is None:
        return
    if tuple(model.features) != tuple(design.columns):
        raise ValueError(f"features {list(model.features)} are not the formula's columns "
                         f"{list(design.columns)}")
    if model.target != design.target:
        raise ValueError(f"target {model.target!r} is not the formula's response "
                         f"{design.target!r}")
    if model.intercept:
        raise ValueError("intercept = True cannot be given with a formula: the formula has its "
                         "own (remove it with '- 1')")


def prior_arrays(mean, cov, d: int) -> tuple[np.ndarray, np.ndarray]:
    """A prior mean ``(d,)`` and covariance ``(d, d)`` from numbers or arrays.

    A number for the mean is every coefficient's; a number for the covariance is a multiple
    of the identity.
    """
    mean = np.asarray(mean, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    return (np.full(d, float(mean)) if mean.ndim == 0 else mean,
            float(cov) * np.eye(d) if cov.ndim == 0 else cov)
