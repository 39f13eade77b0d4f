"""Columns of numbers: a batch's named columns as one float64 matrix, every value checked.

The columns asked for are parsed by pyarrow (``pyarrow.csv`` or the Parquet reader) and
checked with vectorised numpy. Only when that fails (a column missing, a value that is not a
finite number, a CSV that pyarrow reads more strictly than pandas, such as blanks before a
number or ``True``) is the pandas frame of the batch used: it reads such a file as before,
or finds the first bad row and words the error. pandas is imported only then.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .arrow_csv import read_floats
from .batch import Batch, refuse_nested
from .errors import DataError

__all__ = ["MAX_MAGNITUDE", "numeric_columns", "too_large"]

#: Largest magnitude :func:`numeric_columns` accepts when asked to bound it: the square of a
#: larger value, summed over rows, overflows float64 (about 1.8e308) in X'X, variances or
#: squared distances.
MAX_MAGNITUDE = 1e150


def numeric_columns(batch: Batch, columns: Sequence[str], *,
                    max_magnitude: float | None = None, ones_first: bool = False) -> np.ndarray:
    """The named columns of a batch as a float64 matrix, every value checked.

    Parameters
    ----------
    batch : Batch
        The batch.
    columns : sequence of str
        Columns to take, in order.
    max_magnitude : float, optional
        Refuse a value larger than this in magnitude (usually :data:`MAX_MAGNITUDE`, for
        statistics that square the values).
    ones_first : bool
        Put a column of ones before the named columns (an intercept), in the same matrix.

    Returns
    -------
    numpy.ndarray
        Shape ``(rows, len(columns) + ones_first)``, in column-major (Fortran) order, as
        LAPACK's factorisations take it without a copy.

    Raises
    ------
    DataError
        Naming the file, the column and the first bad row: a missing column, a value that is
        not a number, NaN / missing, infinite, or above ``max_magnitude``.
    """
    bound = np.finfo(np.float64).max if max_magnitude is None else max_magnitude
    out = _arrow_columns(batch, columns, ones_first, bound)
    if out is not None:
        return out
    values = _frame_columns(batch, columns)
    out = np.empty((len(values), len(columns) + ones_first), order="F")
    if ones_first:
        out[:, 0] = 1.0
    out[:, int(ones_first):] = values
    if max_magnitude is not None:
        found = too_large(out[:, int(ones_first):], max_magnitude)
        if found is not None:
            i, j, message = found
            raise DataError(message, path=batch.name, column=columns[j], row=i + 1)
    return out


def too_large(values: np.ndarray, max_magnitude: float = MAX_MAGNITUDE
              ) -> tuple[int, int, str] | None:
    """The first value of a matrix above ``max_magnitude`` in magnitude, or None.

    The one check of the readers and of the estimators given arrays from Python.

    Returns
    -------
    tuple of (int, int, str) or None
        0-based row and column of the first such value (in row order) and the message.
    """
    big = np.abs(values) > max_magnitude
    if not big.any():
        return None
    i, j = (int(k) for k in np.argwhere(big)[0])
    return i, j, (f"value {values[i, j]:.6g} is too large: its square overflows the float64 "
                  f"sums of squares (limit {max_magnitude:.0e} in magnitude); rescale the "
                  f"column, for example divide it by a power of ten")


def _arrow_columns(batch: Batch, columns: Sequence[str], ones_first: bool,
                   bound: float) -> np.ndarray | None:
    """The columns read with pyarrow when every value is a number within +-bound, else None."""
    if batch.content is None or batch.has_frame or not columns:
        return None
    import pyarrow as pa
    if batch.kind == "parquet":
        try:
            import pyarrow.parquet as pq
            # ParquetFile.read, not read_table: the latter imports pandas.
            parquet = (batch.parsed.pop("parquet_file", None)
                       or pq.ParquetFile(pa.BufferReader(batch.content)))
            table = parquet.read(columns=list(columns))
        except Exception:  # noqa: BLE001 - the pandas path words the error
            return None
    else:
        table = read_floats(batch, columns)
    if table is None or table.num_columns != len(columns) or table.num_rows == 0:
        return None
    out = np.empty((table.num_rows, len(columns) + ones_first), order="F")
    if ones_first:
        out[:, 0] = 1.0
    for j, name in enumerate(columns, int(ones_first)):
        col = table.column(name)
        dtype = _numpy_dtype(pa, col.type)
        if col.null_count or dtype is None:
            return None
        row = 0
        for chunk in col.chunks:
            # The values buffer, viewed in place: Array.to_numpy would import pandas.
            values = np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk),
                                   offset=chunk.offset * dtype.itemsize)
            out[row:row + len(values), j] = values
            row += len(values)
    # Two reductions, no temporary: NaN makes max / min NaN, and inf exceeds any bound.
    if not (out.max() <= bound and out.min() >= -bound):
        return None
    return out


def _numpy_dtype(pa, kind) -> np.dtype | None:
    """The numpy dtype of an Arrow integer or floating type; None for any other type."""
    if pa.types.is_floating(kind):
        return np.dtype(f"float{kind.bit_width}")
    if pa.types.is_signed_integer(kind):
        return np.dtype(f"int{kind.bit_width}")
    if pa.types.is_unsigned_integer(kind):
        return np.dtype(f"uint{kind.bit_width}")
    return None


def _frame_columns(batch: Batch, columns: Sequence[str]) -> np.ndarray:
    """The columns of the batch's pandas frame as float64, or the error naming the first bad row."""
    import pandas as pd
    frame = batch.frame
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"missing column; the file has: {', '.join(map(str, frame.columns))}",
                        path=batch.name, column=missing[0])
    selected = frame[list(columns)]
    if all(pd.api.types.is_float_dtype(t) or pd.api.types.is_integer_dtype(t)
           for t in selected.dtypes):
        # Fast path: one conversion and one finiteness check for the whole block.
        out = selected.to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isfinite(out).all():
            return out
    # A fresh block: the one above may be a read-only view of the frame (copy-on-write).
    out = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, name in enumerate(columns):
        col = frame[name]
        refuse_nested(col, batch.name, name)
        if col.dtype == bool:
            col = col.astype(np.float64)
        values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            original = col.iloc[i]
            if pd.isna(original):
                what = "missing value (NaN)"
            elif np.isnan(values[i]):
                what = f"not a number: {original!r}"
            else:
                what = f"infinite value: {original!r}"
            raise DataError(what, path=batch.name, column=name, row=i + 1)
        out[:, j] = values
    return out
