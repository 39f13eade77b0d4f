"""The levels of categorical columns over every batch of a source, reading only those columns.

A formula's categorical terms (``C(region)``, a text column) are encoded with one column per
level but the first; a stream keeps one encoding only when every level is known before the
first batch is encoded. :func:`column_levels` is that first pass: pyarrow parses only the named
columns of each file (the Parquet reader reads only their column chunks), and the values are
collected as pandas would read them into the batch's frame.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from .batch import SUFFIXES, read_bytes
from .errors import DataError
from .remote import RemoteFile

__all__ = ["column_levels"]


def _sorted_levels(values: set, column: str, where) -> list:
    try:
        return sorted(values)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values})
        raise DataError(f"holds values of several types ({', '.join(kinds)}) across the "
                        f"files; a categorical column holds one type", path=where,
                        column=column) from None


def _file_table(path, columns: list[str]):
    """The named columns of one file as a ``pyarrow.Table``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    kind = SUFFIXES[Path(str(path)).suffix.lower()]
    try:
        if kind == "parquet":
            source = path if not isinstance(path, RemoteFile) else pa.BufferReader(
                read_bytes(path))
            return pq.read_table(source, columns=columns)
        content = read_bytes(path)
        table = pacsv.read_csv(io.BytesIO(content),
                               convert_options=pacsv.ConvertOptions(include_columns=columns))
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError) as exc:
        raise DataError(f"cannot read the categorical columns {columns}: {exc}",
                        path=path) from None
    # pandas (the batch's frame) skips the blanks before a cell: so do the levels
    import pyarrow.compute as pc

    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(i, field.name, pc.utf8_ltrim_whitespace(table.column(i)))
    return table


def column_levels(source, columns: Sequence[str]) -> dict[str, list]:
    """Every value (but missing ones) of each named column over all batches, sorted.

    Parameters
    ----------
    source : bayescheck.data.sources.DataSource
        The files (or frames) of the stream.
    columns : sequence of str
        The categorical columns.

    Returns
    -------
    dict of str to list
        Column -> its distinct values in sorted order (as Python numbers, strings or
        booleans, the values pandas reads).

    Raises
    ------
    DataError
        A file without one of the columns, or a column whose values cannot be ordered.
    """
    columns = list(columns)
    seen: dict[str, set] = {c: set() for c in columns}
    if not columns:
        return {}
    files = source.files()
    if not files:  # in-memory frames
        for batch in source.batches():
            frame = batch.frame
            for c in columns:
                if c not in frame.columns:
                    raise DataError("missing column", path=batch.name, column=c)
                seen[c].update(v.item() if hasattr(v, "item") else v
                               for v in frame[c].dropna().unique())
        return {c: _sorted_levels(seen[c], c, source.label) for c in columns}
    import pyarrow.compute as pc

    for path in files:
        table = _file_table(path, columns)
        for c in columns:
            seen[c].update(pc.unique(pc.drop_null(table.column(c))).to_pylist())
    return {c: _sorted_levels(seen[c], c, source.label) for c in columns}
