"""Counting models: Beta-Bernoulli and Dirichlet-categorical.

Beta-Bernoulli (``model = "beta_bernoulli"``): p ~ Beta(a, b), y_i ~ Bernoulli(p), with a target
column of 0/1 or true/false. Dirichlet-categorical (``model = "dirichlet_categorical"``):
pi ~ Dirichlet(alpha) over a fixed, ordered set of categories (dims ``category``),
y_i ~ Categorical(pi), with a target column of labels.

This module knows how to read and validate the labels of a batch (every bad value is a
:class:`DataError` naming file, column and 1-based row) and how to declare the models in PyMC.
Counting and the conjugate update live in :mod:`bayescheck.inference.engines.counts`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import PLAIN_INT, batch_column, cell_codes, is_plain_label
from bayescheck.data.sources import DataSource

from . import validation
from .errors import BayescheckError, DataError, SpecError
from .interface import Calibratable, Model
from .spec import SamplingConfig, Section, Spec
from .validation import InvalidArgument

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPEC_READERS",
    "BetaBernoulli",
    "DirichletCategorical",
    "beta_bernoulli_spec",
    "bernoulli_labels",
    "category_labels",
    "dirichlet_categorical_spec",
    "order_labels",
]

#: Up to this many rows the likelihood is declared row by row (Bernoulli / Categorical);
#: above it, on the counts (Binomial / Multinomial), which differs only by a constant.
MAX_ROWWISE = 100_000

_TRUE = {"1", "true"}
_FALSE = {"0", "false"}


def _plain(value):
    """A numpy scalar as the Python value it holds; integral floats as ints (for messages)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _missing(value) -> bool:
    import pandas as pd
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def bernoulli_labels(batch: Batch, column: str) -> np.ndarray:
    """The 0/1 outcomes of a batch's ``column``, validated.

    Accepted: the numbers 0 and 1, booleans, and the strings ``"0"``, ``"1"``, ``"true"``,
    ``"false"`` (case-insensitive, surrounding blanks ignored).

    Returns
    -------
    numpy.ndarray
        int8 array of 0 and 1, one per row.

    Raises
    ------
    DataError
        Naming the file, the column and the first bad 1-based row: a missing value (NaN) or
        any other value (2, -1, "yes", 0.5, ...).
    """
    read = cell_codes(batch, column)
    if read is not None and read[0].min() >= 0 and set(read[1]) <= {"0", "1"}:
        codes, cells = read
        return np.array([v == "1" for v in cells], dtype=np.int8)[codes]  # pandas: int64 0 / 1
    import pandas as pd
    col = batch_column(batch, column)
    if pd.api.types.is_bool_dtype(col.dtype) or pd.api.types.is_numeric_dtype(col.dtype):
        values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        good = (values == 0) | (values == 1)
        out = values
    else:
        out = np.full(len(col), np.nan)
        for i, v in enumerate(col.tolist()):
            if isinstance(v, (bool, np.bool_)):
                out[i] = float(v)
            elif isinstance(v, str):
                s = v.strip().lower()
                out[i] = 1.0 if s in _TRUE else 0.0 if s in _FALSE else np.nan
            elif isinstance(v, (int, float, np.integer, np.floating)) and v in (0, 1):
                out[i] = float(v)
        good = ~np.isnan(out)
    if not good.all():
        i = int(np.flatnonzero(~good)[0])
        original = col.iloc[i]
        what = ("missing value (NaN)" if _missing(original) else
                f"expected 0/1 or true/false, got {_plain(original)!r}")
        raise DataError(what, path=batch.name, column=column, row=i + 1)
    return out.astype(np.int8)


def _label(value) -> str:
    """The canonical string of one label: integral numbers without a decimal point."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    # A column mixing numbers and text is read as text: "3.0" is still the label "3".
    if math.isfinite(number) and number.is_integer():
        return str(int(number))
    return repr(number) if math.isfinite(number) else text


def _plain_category_labels(batch: Batch, column: str) -> np.ndarray | None:
    """:func:`category_labels` of a CSV column read by pyarrow (without pandas), or None.

    Only two kinds of column are taken, those pandas reads unambiguously: every cell a plain
    integer (an int64 column, labelled by its decimal form), or every cell a label pandas reads
    as a string (an object column, labelled by :func:`_label`). Anything else, and any error,
    is left to the pandas path.
    """
    read = cell_codes(batch, column)
    if read is None or read[0].min() < 0:
        return None
    codes, cells = read
    if all(PLAIN_INT.fullmatch(v) for v in cells):
        labels = [str(int(v)) for v in cells]
    elif all(is_plain_label(v, text=batch.text) for v in cells):
        labels = [_label(v) for v in cells]
    else:
        return None
    if "" in labels:
        return None
    return np.array(labels, dtype=object).astype(str)[codes]


def category_labels(batch: Batch, column: str,
                    categories: Sequence[str] | None = None) -> np.ndarray:
    """The labels of a batch's ``column`` as canonical strings, validated.

    Numbers become their decimal form (``3`` and ``3.0`` are both ``"3"``), strings are
    stripped of surrounding blanks, booleans become ``"true"`` / ``"false"``.

    Parameters
    ----------
    batch : Batch
        The rows.
    column : str
        The label column.
    categories : sequence of str, optional
        The declared label set; a label outside it is an error.

    Returns
    -------
    numpy.ndarray
        Array of str, one per row.

    Raises
    ------
    DataError
        Naming the file, the column and the first bad 1-based row: a missing value (NaN), an
        empty label, or a label outside ``categories``.
    """
    labels = _plain_category_labels(batch, column)
    if labels is not None and (categories is None or np.isin(
            labels, np.asarray(list(categories), dtype=str)).all()):
        return labels
    import pandas as pd
    col = batch_column(batch, column)
    missing = col.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise DataError("missing value (NaN)", path=batch.name, column=column, row=i + 1)
    if pd.api.types.is_integer_dtype(col.dtype):
        labels = col.astype(np.int64).astype(str).to_numpy(dtype=object)
    else:
        labels = np.array([_label(v) for v in col.tolist()], dtype=object)
    empty = labels == ""
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise DataError("empty label", path=batch.name, column=column, row=i + 1)
    labels = labels.astype(str)
    if categories is not None:
        outside = ~np.isin(labels, np.asarray(list(categories), dtype=str))
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise DataError(f"label {_plain(col.iloc[i])!r} is not one of the declared "
                            f"categories {list(categories)!r} ([data] categories or "
                            f"[states] {column})",
                            path=batch.name, column=column, row=i + 1)
    return labels


def order_labels(labels: Iterable[str]) -> tuple[str, ...]:
    """The order of categories that were not declared.

    Numeric when every label is a number (``"2"`` before ``"10"``), otherwise lexicographic.
    """
    unique = set(labels)
    try:
        return tuple(sorted(unique, key=lambda s: (float(s), s)))
    except ValueError:
        return tuple(sorted(unique))


def _positive(name: str, value: float) -> float:
    return validation.positive_number(value, name)


@dataclass(frozen=True)
class BetaBernoulli(Model, Calibratable):
    """p ~ Beta(a, b); y_i ~ Bernoulli(p).

    Parameters
    ----------
    target : str
        The column of outcomes (0/1 or true/false).
    a, b : float
        Positive prior shapes: prior successes and failures.
    """

    target: str
    a: float = 1.0
    b: float = 1.0

    name = "beta_bernoulli"

    def __post_init__(self):
        object.__setattr__(self, "a", _positive("a", self.a))
        object.__setattr__(self, "b", _positive("b", self.b))

    def outcomes(self, batch: Batch) -> np.ndarray:
        """The validated 0/1 outcomes of one batch (see :func:`bernoulli_labels`)."""
        return bernoulli_labels(batch, self.target)

    def calibration_model(self, fit) -> BetaBernoulli:
        """The model calibrated: this one (the fit holds nothing fixed)."""
        return self

    def simulated_frame(self, frame: pd.DataFrame, observed: dict) -> pd.DataFrame:
        """A copy of ``frame`` whose target holds one simulation's outcomes (calibration).

        From the row-wise declaration the outcomes themselves; from the one on totals, the
        simulated number of successes as that many ones (the order of exchangeable outcomes
        does not matter).
        """
        out = frame.copy()
        if "y" in observed:
            out[self.target] = np.asarray(observed["y"], dtype=np.int64)
        else:
            k = int(observed["successes"])
            out[self.target] = (np.arange(len(out)) < k).astype(np.int64)
        return out

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source``: parameter ``p``."""
        y = np.concatenate([self.outcomes(batch) for batch in source.batches()])
        return self.pymc_model(y)

    def pymc_model(self, y: np.ndarray):
        """The PyMC declaration on outcomes ``y``.

        Up to :data:`MAX_ROWWISE` rows, ``y ~ Bernoulli(p)`` row by row; beyond, the
        equivalent ``k ~ Binomial(n, p)`` on the total (same posterior: the likelihoods differ
        by the constant binomial coefficient).
        """
        import pymc as pm

        y = np.asarray(y, dtype=np.int64)
        with pm.Model() as model:
            p = pm.Beta("p", alpha=self.a, beta=self.b)
            if y.size <= MAX_ROWWISE:
                pm.Bernoulli("y", p=p, observed=y)
            else:
                pm.Binomial("successes", n=y.size, p=p, observed=int(y.sum()))
        return model


@dataclass(frozen=True, eq=False)
class DirichletCategorical(Model, Calibratable):
    """pi ~ Dirichlet(alpha) over ordered categories; y_i ~ Categorical(pi).

    Parameters
    ----------
    target : str
        The column of labels.
    concentration : float or tuple of float
        The prior alpha: one value for every category, or one per declared category.
    categories : tuple of str or None
        The declared label set and its order; None takes the labels seen in the data, in
        :func:`order_labels` order (then a per-category concentration is not possible).
    """

    target: str
    concentration: float | tuple[float, ...] = 1.0
    categories: tuple[str, ...] | None = None

    name = "dirichlet_categorical"

    def __post_init__(self):
        if self.categories is not None:
            cats = tuple(_label(c) for c in self.categories)
            if len(cats) < 2 or len(set(cats)) != len(cats):
                raise InvalidArgument("categories", f"expected at least 2 distinct labels, got "
                                                    f"{cats!r}")
            object.__setattr__(self, "categories", cats)
        if np.ndim(self.concentration) == 0:
            object.__setattr__(self, "concentration",
                               _positive("concentration", self.concentration))
        else:
            conc = tuple(_positive("concentration", c) for c in self.concentration)
            if self.categories is None or len(conc) != len(self.categories):
                raise InvalidArgument("concentration", "a concentration per category needs the "
                                                       "categories declared, one value each")
            object.__setattr__(self, "concentration", conc)

    def labels(self, batch: Batch) -> np.ndarray:
        """The validated labels of one batch (see :func:`category_labels`)."""
        return category_labels(batch, self.target, self.categories)

    def alpha(self, categories: Sequence[str]) -> np.ndarray:
        """The prior concentration vector over ``categories``."""
        if np.ndim(self.concentration) == 0:
            return np.full(len(categories), float(self.concentration))
        return np.asarray(self.concentration, dtype=np.float64)

    def resolve_categories(self, seen: Iterable[str], *, where: str = "") -> tuple[str, ...]:
        """The declared categories, or the ordered labels ``seen`` (at least two)."""
        if self.categories is not None:
            return self.categories
        cats = order_labels(seen)
        if len(cats) < 2:
            raise DataError(f"only one category ({', '.join(map(repr, cats))}) occurs in "
                            f"column {self.target!r}; declare the others with [data] "
                            f"categories", path=where or None)
        return cats

    def calibration_model(self, fit) -> DirichletCategorical:
        """A copy whose categories are the fit's (declared, or seen in the spec's data).

        Every simulated data set then has the same label set as the declaration, whichever
        labels it happens to contain.
        """
        if self.categories is not None:
            return self
        return replace(self, categories=tuple(fit.posterior.parameters["pi"]["categories"]))

    def simulated_frame(self, frame: pd.DataFrame, observed: dict) -> pd.DataFrame:
        """A copy of ``frame`` whose target holds one simulation's labels (calibration).

        Needs the categories fixed (:meth:`calibration_model`), so that every simulated data
        set has the same label set as the declaration.
        """
        if self.categories is None:
            raise BayescheckError("simulated_frame needs the categories fixed: use "
                                  "calibration_model(fit) first")
        cats = np.asarray(self.categories, dtype=object)
        if "y" in observed:
            labels = cats[np.asarray(observed["y"], dtype=np.int64)]
        else:
            labels = np.repeat(cats, np.asarray(observed["counts"], dtype=np.int64))
        out = frame.copy()
        out[self.target] = labels
        return out

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source``: parameter ``pi`` (dims ``category``)."""
        labels = np.concatenate([self.labels(batch) for batch in source.batches()])
        cats = self.resolve_categories(labels, where=source.label)
        return self.pymc_model(labels, cats)

    def pymc_model(self, labels: np.ndarray, categories: Sequence[str]):
        """The PyMC declaration on ``labels`` over ``categories``.

        Up to :data:`MAX_ROWWISE` rows, ``y ~ Categorical(pi)`` row by row; beyond, the
        equivalent ``counts ~ Multinomial(n, pi)`` (same posterior).
        """
        import pandas as pd
        import pymc as pm

        cats = list(categories)
        codes = pd.Categorical(np.asarray(labels, dtype=str), categories=cats).codes
        if (codes < 0).any():
            raise ValueError("a label is outside the categories")
        with pm.Model(coords={"category": cats}) as model:
            pi = pm.Dirichlet("pi", a=self.alpha(cats), dims="category")
            if codes.size <= MAX_ROWWISE:
                pm.Categorical("y", p=pi, observed=codes.astype(np.int64))
            else:
                counts = np.bincount(codes, minlength=len(cats))
                pm.Multinomial("counts", n=int(codes.size), p=pi, observed=counts,
                               dims="category")
        return model


def _data_section(top: Section, path: Path):
    data = top.subsection("data")
    source = DataSource(data.string("path"), base=path.parent)
    target = data.string("target")
    return data, source, target


def _check_target(source: DataSource, target: str, path: Path) -> None:
    columns = source.columns()
    if target not in columns:
        raise SpecError(f"column {target!r} is not in {source.files()[0]}; it has: "
                        f"{', '.join(columns)}", path=path, key="data.target")


def beta_bernoulli_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "beta_bernoulli"``.

    Keys: ``[data] path, target``; ``[prior] a, b`` (default 1, 1: uniform); ``[sampling]``.
    """
    data, source, target = _data_section(top, path)
    data.finish()
    _check_target(source, target, path)
    prior = top.subsection("prior")
    a = prior.number("a", 1.0, positive=True)
    b = prior.number("b", 1.0, positive=True)
    prior.finish()
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    return Spec(model=BetaBernoulli(target=target, a=a, b=b), data=source, sampling=sampling,
                path=path, raw=top.table)


def _categories(data: Section, key: str = "categories"):
    value = data.raw(key, None)
    if value is None:
        return None
    if not isinstance(value, list) or not all(
            isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise data.error(key, f"expected a list of labels (strings or integers), got {value!r}")
    cats = [_label(v) for v in value]
    if len(cats) < 2:
        raise data.error(key, f"expected at least 2 categories, got {value!r}")
    if "" in cats:
        raise data.error(key, "a category label is empty")
    if len(set(cats)) != len(cats):
        dup = next(c for i, c in enumerate(cats) if c in cats[:i])
        raise data.error(key, f"labels must be distinct; {dup!r} appears twice")
    return tuple(cats)


def _declared_categories(top: Section, target: str, categories):
    """``[states] <target> = [...]``: the categories, as ``[data] categories`` gives them."""
    states = top.subsection("states")
    for key in states.table:
        if key != target:
            raise states.error(key, f"not the target column: [states] of dirichlet_categorical "
                                    f"names the target {target!r}")
        if categories is not None:
            raise states.error(key, "the categories are given by [data] categories already; "
                                    "give one of the two")
    declared = _categories(states, target) if target in states else None
    states.finish()
    return categories if declared is None else declared


def dirichlet_categorical_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "dirichlet_categorical"``.

    Keys: ``[data] path, target, categories`` (optional: the label set and its order; or
    ``[states] <target> = [...]``, the same); ``[prior] concentration`` (a number, default
    1, or one per declared category);
    ``[sampling]``.
    """
    data, source, target = _data_section(top, path)
    categories = _declared_categories(top, target, _categories(data))
    data.finish()
    _check_target(source, target, path)
    prior = top.subsection("prior")
    conc = prior.array("concentration", np.float64(1.0))
    if conc.ndim == 0:
        if not conc > 0:
            raise prior.error("concentration", f"expected a positive number, got {float(conc)!r}")
        concentration = float(conc)
    elif conc.ndim == 1:
        if categories is None:
            raise prior.error("concentration", "one value per category needs [data] categories "
                                               "to fix which category each value belongs to")
        if conc.size != len(categories):
            raise prior.error("concentration", f"expected a number or {len(categories)} numbers "
                                               f"(one per category: {', '.join(categories)}), "
                                               f"got {conc.size}")
        if np.any(conc <= 0):
            raise prior.error("concentration", f"expected positive numbers, got {conc.tolist()}")
        concentration = tuple(float(c) for c in conc)
    else:
        raise prior.error("concentration", f"expected a number or a list of numbers, got an "
                                           f"array of shape {conc.shape}")
    prior.finish()
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    model = DirichletCategorical(target=target, concentration=concentration,
                                 categories=categories)
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {
    "beta_bernoulli": beta_bernoulli_spec,
    "dirichlet_categorical": dirichlet_categorical_spec,
}
