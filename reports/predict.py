"""``bayescheck predict``: the table of predictions for new rows from a saved fit.

:func:`prediction_table` serves every model: the ``predict`` of the model's
:class:`~bayescheck.inference.families.registry.Family` gives the columns (class
probabilities, the minimum-risk decision and the expected risk of every option for the
classifiers; predictive intervals for the regressions; the next outcome for the count
models); this module reads the loss matrix given with ``--loss`` and makes the table.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from bayescheck.data.sources import DataSource
from bayescheck.inference.families import family
from bayescheck.models.errors import BayescheckError, DataError
from bayescheck.models.naive_bayes import NaiveBayes
from bayescheck.models.registry import MODELS
from bayescheck.models.semi_naive_bayes import SemiNaiveBayes
from bayescheck.models.spec import Spec

from .posterior_file import check_shape

__all__ = ["prediction_table", "read_loss", "rebuilt", "require_predictions"]


def read_loss(path: Path, classes: tuple) -> tuple[np.ndarray, tuple]:
    """Read a loss matrix CSV: header ``option,<class>,<class>,...``, one row per option.

    Returns the matrix with its columns in ``classes`` order, and the option labels.
    Wrong classes (shape) or negative / non-numeric entries are a :class:`DataError`.
    """
    try:
        frame = pd.read_csv(path, index_col=0, dtype=str)
    except FileNotFoundError:
        raise DataError("loss file not found", path=path) from None
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot read the loss matrix: {exc}", path=path) from None
    columns = [str(c) for c in frame.columns]
    if sorted(columns) != sorted(classes) or len(frame) < 1:
        raise DataError(f"expected a loss matrix with one column per class {list(classes)} "
                        f"(header: option,{','.join(classes)}) and at least one row, got "
                        f"columns {columns} and {len(frame)} row(s), shape "
                        f"({len(frame)}, {len(columns)})", path=path)
    loss = np.empty((len(frame), len(classes)))
    for j, c in enumerate(classes):
        col = frame.columns[columns.index(c)]
        values = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
        for i, v in enumerate(values):
            if not math.isfinite(v) or v < 0:
                raise DataError(f"expected a finite non-negative loss, got "
                                f"{frame[col].iloc[i]!r}", path=path, column=c, row=i + 1)
        loss[:, j] = values
    options = tuple(str(o) for o in frame.index)
    if len(set(options)) != len(options):
        raise DataError(f"option labels (first column) must be unique, got {list(options)}",
                        path=path)
    return loss, options


def _largest(value, key: str = "parameters") -> tuple[str, float]:
    """The key and value of the number of largest magnitude in nested dicts and lists."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return key, float(value)
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    found = [_largest(v, f"{key}.{k}" if isinstance(value, dict) else f"{key}[{k}]")
             for k, v in items]
    return max(found, key=lambda kv: abs(kv[1]), default=(key, 0.0))


def _all_finite(table: pd.DataFrame, where: str, posterior: dict, fit: str) -> None:
    """Refuse a prediction the arithmetic lost (an infinity, a NaN), naming row and column.

    The new rows' values are held to the fit's limits when read; this is the last line of
    defence, as for ``fit``: exit 0 never comes with a number that overflowed. The row's
    values or the fit's numbers may be the cause, so the message names both: the row, and
    the largest number of ``posterior.json`` (``fit``) with its key.
    """
    for column in table.columns:
        values = table[column]
        if values.dtype.kind != "f":
            continue
        bad = np.flatnonzero(~np.isfinite(values.to_numpy()))
        if bad.size:
            key, value = _largest(posterior.get("parameters"))
            raise DataError(f"the prediction {column!r} is {values.iloc[bad[0]]}: the row's "
                            f"values with the fit's numbers exceed the range of float64 "
                            f"arithmetic (the largest number of {fit} is {value:.6g}, at key "
                            f"'{key}'); rescale the columns and fit again", path=where,
                            row=int(bad[0]) + 1)


def rebuilt(predict, spec: Spec, posterior: dict, batch, *, where: str, **options) -> dict:
    """``predict(spec, posterior, batch, ...)``; an entry it cannot use: an error naming the file.

    :func:`~bayescheck.reports.posterior_file.validate_posterior` checks what the fits
    write; a value it let through that the model cannot be rebuilt from (a ``ValueError``,
    ``TypeError``, ``LookupError`` or ``OverflowError`` raised while the family reads the
    fit) is refused with exit 2 naming the file, not shown as a traceback.
    """
    try:
        return predict(spec, posterior, batch, where=where, **options)
    except BayescheckError:
        raise
    except (ValueError, TypeError, LookupError, OverflowError) as exc:
        raise BayescheckError(f"{where}: the fit cannot be rebuilt from it "
                              f"({type(exc).__name__}: {exc}); fit again with 'bayescheck "
                              f"fit' (posterior.json is written by bayescheck and not meant "
                              f"to be edited)") from None


def require_predictions(spec: Spec) -> None:
    """A :class:`BayescheckError` listing the models that predict, unless the spec's does."""
    if family(spec.model.name).predict is None:
        able = sorted(m for m in MODELS if family(m).predict is not None)
        raise BayescheckError(f"predict needs one of the models {', '.join(able)}; this one "
                              f"is {spec.model.name!r}")


def prediction_table(spec: Spec, posterior: dict, source: DataSource | None, *,
                     level: float = 0.9, loss: Path | None = None, target=None,
                     where: str = "posterior.json") -> pd.DataFrame:
    """Predictions of a saved fit for new rows (or for the next outcome), as one table.

    Parameters
    ----------
    spec : models.Spec
        The spec the fit came from.
    posterior : dict
        The content of ``posterior.json`` (``AnalyticFit.to_json()``).
    source : models.DataSource or None
        The new rows; None for the count models, whose prediction is the next outcome.
    level : float
        Mass of the central predictive interval (regression, ARD).
    loss : pathlib.Path, optional
        Naive and semi-naive Bayes only: the loss matrix CSV (default the spec's
        ``[decision]``).
    target : str or sequence of str, optional
        bayesian_network only: the node(s) to predict (default the spec's query targets).
    where : str
        Where ``posterior`` was read from, for error messages.

    Returns
    -------
    pandas.DataFrame
        ``row`` (and ``file`` for a glob of files), then the model's columns.

    Raises
    ------
    BayescheckError
        A model without predictions, a fit of another model, bad new data (naming file,
        column and row), ``--loss`` for a model other than naive or semi-naive Bayes,
        ``--target`` for a model other than bayesian_network.
    """
    name = spec.model.name
    require_predictions(spec)
    predict = family(name).predict
    if target is not None and name != "bayesian_network":
        raise BayescheckError(f"--target applies to bayesian_network only, not to {name!r}")
    if posterior.get("model") != name:
        raise BayescheckError(f"{where}: holds a {posterior.get('model')!r} fit, the spec is "
                              f"{name!r}")
    check_shape(posterior, spec, where)
    classifier = isinstance(spec.model, (NaiveBayes, SemiNaiveBayes))  # decisions under a loss
    if loss is not None and not classifier:
        raise BayescheckError(f"--loss applies to naive_bayes and semi_naive_bayes only, not "
                              f"to {name!r}")
    if source is None:
        if classifier:
            raise BayescheckError(f"predict for {name!r} needs --data NEW")
        return pd.DataFrame(rebuilt(predict, spec, posterior, None, level=level, where=where))
    extra = {}
    if loss is not None:
        classes = tuple(posterior.get("parameters", {}).get("classes", ()))
        extra["loss"] = read_loss(loss, classes)
    if target is not None:
        extra["target"] = target

    def one(batch):
        if len(batch.frame) == 0:
            raise DataError("no rows to predict", path=batch.name)
        t = pd.DataFrame(rebuilt(predict, spec, posterior, batch, level=level, where=where,
                                 **extra))
        _all_finite(t, batch.name, posterior, where)
        t.insert(0, "row", np.arange(1, len(t) + 1))
        return t

    batches = list(source.batches())
    tables = [one(batch) for batch in batches]
    if len(tables) > 1:  # several files: say which file each row comes from
        for batch, t in zip(batches, tables, strict=True):
            t.insert(0, "file", batch.name)
    return pd.concat(tables, ignore_index=True)
