"""A regression's design from a formula (``y ~ x1 + np.log(x2) + C(region) + x1:x3``).

The formula is read and encoded by formulaic (https://matthewwardrop.github.io/formulaic/),
not by a parser of ours. formulaic rather than formulae (the library Bambi uses): formulaic
gives a :class:`formulaic.ModelSpec` that re-applies a fitted encoding to new rows
(``model_spec.get_model_matrix(new_data)``), takes its categories from a pandas categorical
dtype, and names its columns as statsmodels and patsy do (``C(region)[T.north]``); it is
maintained, has no compiled parts, and is small. formulae ties its design to the frame it was
built on and names its columns Bambi's way.

One encoding for every batch of a stream: the categorical columns (those of a ``C()`` term,
or text) are found on the first batch, every level of each comes from a first pass over all
files (:func:`bayescheck.data.levels.column_levels`: pyarrow reads only those columns), and
each batch's categorical columns are given those levels before formulaic encodes them. So a
batch lacking a level still has its column, and a level no pass has seen (a new row at
``predict``, a later ``partial_fit``) is refused, naming the file, row and level; formulaic
alone would encode it as all zeros. A stateful transform (``center(x)``, ``scale(x)``,
``bs(x)``) takes its state from the first batch and keeps it.

The design is saved in ``posterior.json`` (:meth:`FormulaDesign.to_json`): the formula, the
levels, the transforms' state and the column names, which is all ``predict`` needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.errors import DataError
from bayescheck.data.numbers import MAX_MAGNITUDE

__all__ = ["FormulaDesign", "FormulaError", "design_from_formula", "parse_formula"]


class FormulaError(ValueError):
    """A formula formulaic cannot read, or one this package cannot fit (the reason says)."""


def parse_formula(text: str):
    """The formula's response column and its right-hand side, as formulaic reads them.

    Returns
    -------
    target : str
        The response: one column, named as in the data.
    rhs : formulaic.Formula
        The terms.

    Raises
    ------
    FormulaError
        Not a string, not a formula formulaic reads, no ``~``, or a response that is not one
        column (``np.log(y) ~ x``: transform the column in the data instead, so that
        calibration and ``predict`` see the same response).
    """
    from formulaic import Formula

    if not isinstance(text, str) or not text.strip():
        raise FormulaError(f"expected a formula such as \"y ~ x1 + C(region)\", got {text!r}")
    try:
        formula = Formula(text)
    except Exception as exc:  # noqa: BLE001 - formulaic's parser errors are the user's
        raise FormulaError(f"formulaic cannot read {text!r}: {exc}") from None
    lhs = getattr(formula, "lhs", None)
    if lhs is None:
        raise FormulaError(f"{text!r} has no response: write it as \"y ~ terms\"")
    names = [str(t) for t in lhs]
    variables = {v for v in lhs.required_variables if v.source in (None, "data")}
    if len(names) != 1 or len(variables) != 1 or names[0] != str(next(iter(variables))):
        raise FormulaError(f"the response of {text!r} must be one column of the data, got "
                           f"{' + '.join(names) or 'nothing'}; transform it in the data")
    return names[0], formula.rhs


def _json_state(value, where: str):
    """A transform's state with numpy values made JSON values (lists, floats, ints)."""
    if isinstance(value, dict):
        return {str(k): _json_state(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_state(v, where) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise FormulaError(f"the state of the transform {where!r} ({type(value).__name__}) "
                       f"cannot be saved in posterior.json; transform the column in the data")


@dataclass(frozen=True, eq=False)
class FormulaDesign:
    """A formula with its encoding fixed: what turns rows into ``[X | y]``.

    Parameters
    ----------
    formula : str
        The formula as written (``y ~ ...``).
    levels : dict of str to list
        Each categorical column's levels, sorted (the first is the reference level).
    columns : tuple of str
        The design's column names (formulaic's: ``Intercept``, ``C(region)[T.north]``, ...).
    transform_state : dict
        formulaic's state of the stateful transforms, as JSON values.
    """

    formula: str
    levels: dict
    columns: tuple[str, ...]
    transform_state: dict = field(default_factory=dict)

    @property
    def target(self) -> str:
        """The response column."""
        return parse_formula(self.formula)[0]

    @property
    def variables(self) -> list[str]:
        """The data columns the terms read (the response not included), sorted."""
        rhs = parse_formula(self.formula)[1]
        return sorted(str(v) for v in rhs.required_variables if v.source in (None, "data"))

    @property
    def has_intercept(self) -> bool:
        """Whether the design has formulaic's column of ones, ``Intercept``."""
        return "Intercept" in self.columns

    def to_json(self) -> dict:
        """The design as ``posterior.json`` keeps it."""
        return {"formula": self.formula, "levels": self.levels, "columns": list(self.columns),
                "transform_state": self.transform_state}

    @classmethod
    def from_json(cls, record: dict) -> FormulaDesign:
        """The design :meth:`to_json` wrote."""
        return cls(formula=record["formula"], levels=dict(record["levels"]),
                   columns=tuple(record["columns"]),
                   transform_state=dict(record.get("transform_state") or {}))

    def matrix(self, batch: Batch) -> np.ndarray:
        """New rows as the design ``X``, ``(rows, d)``; no response needed.

        Raises
        ------
        DataError
            A missing column or value, a level outside :attr:`levels`, or a term that is not
            a finite number (``np.log(0)``), naming the file, the column or term, and the row.
        """
        return _encode(self, batch, self.variables)

    def joint(self, batch: Batch) -> np.ndarray:
        """One batch as ``[X | y]``, ``(rows, d + 1)``, every value checked."""
        target = self.target
        X = _encode(self, batch, [*self.variables, target])
        y = _response(batch, target)
        return np.asfortranarray(np.column_stack([X, y]))


def _frame(batch: Batch, variables: list[str]):
    """The batch's frame, each variable present and without missing values."""
    frame = batch.frame
    for v in variables:
        if v not in frame.columns:
            raise DataError(f"missing column; the file has: {', '.join(map(str, frame.columns))}",
                            path=batch.name, column=v)
        missing = np.flatnonzero(frame[v].isna().to_numpy())
        if len(missing):
            raise DataError("missing value", path=batch.name, column=v, row=int(missing[0]) + 1)
    return frame


def _with_levels(frame, levels: dict, where: str):
    """A copy of the frame whose categorical columns have exactly ``levels``; others refused."""
    import pandas as pd

    frame = frame.copy(deep=False)
    for column, known in levels.items():
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        unseen = np.flatnonzero(~values.isin(known).to_numpy())
        if len(unseen):
            row = int(unseen[0])
            level = values.iloc[row]
            level = level.item() if isinstance(level, np.generic) else level
            raise DataError(f"level {level!r} was not seen when the encoding was "
                            f"fixed (levels: {', '.join(map(repr, known))}); a new level has "
                            f"no coefficient", path=where, column=column, row=row + 1)
        frame[column] = pd.Categorical(values, categories=known)
    return frame


def _model_spec(design: FormulaDesign):
    from formulaic import ModelSpec

    rhs = parse_formula(design.formula)[1]
    return ModelSpec(formula=rhs, transform_state=design.transform_state, na_action="raise")


def _checked(X: np.ndarray, names, where: str) -> np.ndarray:
    bad = ~(np.abs(X) <= MAX_MAGNITUDE)  # NaN too
    if bad.any():
        row, col = map(int, np.argwhere(bad)[0])
        raise DataError(f"the term is {X[row, col]!r}, not a finite number of magnitude at "
                        f"most {MAX_MAGNITUDE:g}", path=where, column=names[col], row=row + 1)
    return X


def _encode(design: FormulaDesign, batch: Batch, variables: list[str]) -> np.ndarray:
    frame = _with_levels(_frame(batch, variables), design.levels, batch.name)
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # checked below
            matrix = _model_spec(design).get_model_matrix(frame)
    except Exception as exc:  # noqa: BLE001 - formulaic's evaluation errors are the data's
        raise DataError(f"formulaic cannot evaluate {design.formula!r} here: {exc}",
                        path=batch.name) from None
    names = list(matrix.columns)
    if tuple(names) != design.columns:
        raise DataError(f"the formula gives the columns {names} here, not the fit's "
                        f"{list(design.columns)}", path=batch.name)
    return _checked(np.asarray(matrix, dtype=np.float64), names, batch.name)


def _response(batch: Batch, target: str) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(batch.frame[target], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~(np.abs(values) <= MAX_MAGNITUDE))
    if len(bad):
        row = int(bad[0])
        raise DataError(f"expected a finite number, got {batch.frame[target].iloc[row]!r}",
                        path=batch.name, column=target, row=row + 1)
    return values


def _categorical_columns(rhs, frame, where: str) -> list[str]:
    """The data columns formulaic encodes as categories (``C()`` terms, text columns)."""
    from formulaic import ModelSpec

    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # checked later
            matrix = ModelSpec(formula=rhs, na_action="raise").get_model_matrix(frame)
    except Exception as exc:  # noqa: BLE001 - formulaic's evaluation errors are the data's
        raise DataError(f"formulaic cannot evaluate {str(rhs)!r} here: {exc}",
                        path=where) from None
    spec = matrix.model_spec
    categorical, numerical = set(), set()
    for factor, (kind, _) in spec.encoder_state.items():
        names = {str(v) for v in spec.factor_variables.get(factor, ())
                 if v.source in (None, "data")}
        (categorical if str(getattr(kind, "value", kind)) == "categorical"
         else numerical).update(names)
    both = sorted(categorical & numerical)
    if both:
        raise FormulaError(f"the column {both[0]!r} is used both as a category and as a "
                           f"number; use one, or copy the column under another name")
    return sorted(categorical)


def design_from_formula(formula: str, source) -> FormulaDesign:
    """Fix a formula's encoding on a source: its categorical levels, transforms and columns.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + np.log(x2) + C(region) + x1:x3"``.
    source : bayescheck.data.sources.DataSource
        Every batch of the data (the levels come from all of them).

    Raises
    ------
    FormulaError
        The formula cannot be read or fitted (see :func:`parse_formula`).
    DataError
        A column missing from the data, a missing value, a term formulaic cannot evaluate.
    """
    from bayescheck.data.levels import column_levels

    target, rhs = parse_formula(formula)
    first = next(iter(source.batches()))
    variables = sorted(str(v) for v in rhs.required_variables if v.source in (None, "data"))
    if target in variables:
        raise FormulaError(f"the response {target!r} is also among the terms")
    frame = _frame(first, [*variables, target])
    categorical = _categorical_columns(rhs, frame, first.name)
    levels = column_levels(source, categorical)
    for column, known in levels.items():
        if len(known) < 2 and len(known):
            raise FormulaError(f"the categorical column {column!r} has one level "
                               f"({known[0]!r}) in every file: its term has no column")
    from formulaic import ModelSpec

    fixed = _with_levels(frame, levels, first.name)
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # checked later
            matrix = ModelSpec(formula=rhs, na_action="raise").get_model_matrix(fixed)
    except Exception as exc:  # noqa: BLE001 - formulaic's evaluation errors are the data's
        raise DataError(f"formulaic cannot evaluate {formula!r} here: {exc}",
                        path=first.name) from None
    state = _json_state(matrix.model_spec.transform_state, "formula")
    columns = tuple(str(c) for c in matrix.columns)
    if not columns:
        raise FormulaError(f"{formula!r} has no terms")
    return FormulaDesign(formula=formula, levels=levels, columns=columns, transform_state=state)
