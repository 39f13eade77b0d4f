"""Declared state spaces: the ``[states]`` table of the discrete models.

``[states]`` lists, for some columns of a discrete model (a network's nodes, a classifier's
class and categorical features), every state the column can take, in order::

    [states]
    ThisCarCost = ["Thousand", "TenThou", "HundredThou", "Million"]

A declared column's states are those, in that order, whether or not the data hold each one:
a state no row holds keeps its prior mass (the Dirichlet has one entry per declared state),
and ``predict`` accepts it. A value in the data outside the declared states is refused,
naming the file, row, column and value. A column not listed keeps its states read from the
data (sorted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from .errors import DataError

__all__ = ["declared_order", "not_declared", "outside_declared", "outside_error", "read_states",
           "state_codes", "state_label"]


def state_label(value) -> str | None:
    """A state as the data are read (a string); None for a value that is not a label."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def read_states(top, columns: Sequence[str], *, what: str = "node"
                ) -> dict[str, tuple[str, ...]]:
    """The ``[states]`` table of a spec: column -> its declared states, in order.

    Parameters
    ----------
    top : bayescheck.models.spec.Section
        The spec's top-level section (``[states]`` is consumed from it).
    columns : sequence of str
        The columns that may be declared (the model's discrete columns).
    what : str
        What a column is called in messages ("node", "column").

    Raises
    ------
    SpecError
        A key that is not one of ``columns``, or a value that is not a non-empty list of
        distinct labels (naming ``states.<key>``).
    """
    section = top.subsection("states")
    out: dict[str, tuple[str, ...]] = {}
    for key in list(section.table):
        value = section.raw(key)
        if key not in columns:
            raise section.error(key, f"not a {what} of the model: a [states] key names one of "
                                     f"{', '.join(columns) or '(none)'}")
        labels = ([state_label(v) for v in value] if isinstance(value, list) else [None])
        if not labels or any(v is None or v == "" for v in labels):
            raise section.error(key, f"expected a non-empty list of state labels (strings or "
                                     f"numbers), got {value!r}")
        if len(set(labels)) != len(labels):
            dup = next(s for i, s in enumerate(labels) if s in labels[:i])
            raise section.error(key, f"states must be distinct; {dup!r} appears twice")
        out[key] = tuple(labels)
    section.finish()
    return out


def declared_order(declared: Mapping[str, Sequence[str]] | None, column: str,
                   seen: Iterable[str], *, order: Callable = sorted) -> tuple[str, ...]:
    """A column's states: the declared ones in order, else ``order(seen)``.

    The caller has checked that ``seen`` holds no state outside the declared ones
    (:func:`outside_declared`).
    """
    if declared and column in declared:
        return tuple(declared[column])
    return tuple(order(seen))


def outside_declared(declared: Mapping[str, Sequence[str]] | None,
                     seen: Mapping[str, Iterable[str]]) -> tuple[str, str] | None:
    """The first ``(column, value)`` of ``seen`` outside the declared states, or None."""
    for column, states in (declared or {}).items():
        allowed = set(states)
        extra = sorted(set(seen.get(column, ())) - allowed)
        if extra:
            return column, extra[0]
    return None


def outside_error(batches, column: str, value: str, states: Sequence[str],
                  labels: Callable) -> DataError:
    """The refusal of ``value`` in ``column``: a :class:`DataError` naming its first row.

    ``batches``: the data's batches (read again only on this path); ``labels(batch,
    column)``: a column's labels as strings, as the model reads them.
    """
    for batch in batches:
        found = np.flatnonzero(np.asarray(labels(batch, column), dtype=object) == value)
        if len(found):
            return not_declared(value, states, path=batch.name, column=column,
                                row=int(found[0]) + 1)
    return not_declared(value, states, column=column)


def not_declared(value: str, states: Sequence[str], **where) -> DataError:
    """The error for a value outside a column's declared states (``where``: path, row...)."""
    return DataError(f"value {value!r} is not one of the declared states "
                     f"({', '.join(map(repr, states))}) of [states] {where.get('column')}",
                     **where)


def state_codes(labels: np.ndarray, states: Sequence[str]) -> np.ndarray:
    """The code of each label in ``states`` (any order); -1 for a label outside them."""
    index = {s: k for k, s in enumerate(states)}
    return np.fromiter((index.get(v, -1) for v in np.asarray(labels, dtype=object).tolist()),
                       dtype=np.int64, count=len(labels))

