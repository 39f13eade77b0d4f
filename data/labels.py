"""Columns of labels: classes, categories and network states, as strings or integer codes.

A CSV batch's label columns are parsed by pyarrow into dictionary-encoded text
(:func:`bayescheck.data.arrow_csv.read_text`): one pass over the bytes, each chunk's labels
hashed once in C++, no Python object per cell. The labels are then the ones pandas reads:
a label pyarrow and pandas could read differently (one pandas reads as missing, a number or
a boolean, or one holding a quote) sends the batch to its pandas frame, which reads it as
before and words any error. A Parquet file or an in-memory frame is read through pandas, each
label the ``str`` of its value.

Every label, whichever reader gave it, is stripped of the blanks around it in one place
(:func:`_tidy_piece`): ``Yes ``, `` Yes`` and ``Yes`` are one class. In a CSV file a cell
that is blank, or (outside ``text``) one that pandas reads as missing once stripped (`` NA``
and ``NA ``), is missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .arrow_csv import read_text
from .batch import Batch, refuse_nested
from .errors import DataError
from .fingerprints import arrow_text_chunks

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PLAIN_INT", "batch_column", "batch_rows", "category_codes", "category_codes_as",
           "cell_codes", "is_plain_label", "string_labels"]

#: An integer as pandas reads it into an int64 column (at most 18 digits: no overflow).
PLAIN_INT = re.compile(r"-?\d{1,18}")

#: Cells pandas reads as missing by default (``pandas.read_csv``'s ``na_values``).
_PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                        "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                        "nan", "null"})


def is_plain_label(value: str, *, text: bool) -> bool:
    """Whether pandas reads this cell (as pyarrow gives it, stripped) as this string.

    Not missing, nor a number, a boolean, nor one holding a quote (pyarrow and pandas
    unquote a cell with blanks before its quote differently). With ``text`` (every column
    read as strings, only an empty cell missing) any non-empty cell without quotes.
    """
    value = value.strip()
    if not value or '"' in value:
        return False
    if text:
        return True
    if value in _PANDAS_NA or value.lower() in ("true", "false"):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def batch_column(batch: Batch, column: str) -> pd.Series:
    """One column of a batch's pandas frame; a missing column is a :class:`DataError`.

    So is a column of lists or records (:func:`~bayescheck.data.batch.refuse_nested`).
    """
    frame = batch.frame
    if column not in frame.columns:
        raise DataError(f"missing column; the file has: {', '.join(map(str, frame.columns))}",
                        path=batch.name, column=column)
    refuse_nested(frame[column], batch.name, column)
    return frame[column]


def batch_rows(batch: Batch) -> int:
    """The number of rows of a batch (without pandas for a CSV pyarrow reads, or Parquet)."""
    if not batch.has_frame and batch.kind == "csv":
        known = batch.parsed.get("text", {})
        text = read_text(batch, list(known)[:1] or batch.columns[:1])
        if text is not None:
            return len(next(iter(text.values())))
    elif not batch.has_frame and batch.kind == "parquet":
        from .batch import parquet_file
        parquet = batch.parsed.get("parquet_file") or parquet_file(batch.content)
        if parquet is not None:
            return parquet.metadata.num_rows
    return len(batch.frame)


def cell_codes(batch: Batch, column: str) -> tuple[np.ndarray, list[str]] | None:
    """A CSV column's cells as written, factorised: ``(codes, labels)``, or None.

    ``codes[i]`` (int32) indexes ``labels`` (each label once, in order of first appearance),
    ``-1`` for an empty cell. The caller decides which labels it can interpret as pandas
    would, and reads :attr:`Batch.frame` otherwise. None for a batch that is not a CSV file
    (or whose frame is parsed already), an absent column, or a file pyarrow cannot parse.
    The other columns of the batch are parsed in the same pass (a classifier reads them
    next).
    """
    if batch.has_frame or batch.kind != "csv" or column not in batch.columns:
        return None
    text = read_text(batch, [column, *batch.columns])
    if text is None:
        return None
    try:
        pieces = [_tidy_piece(p, batch) for p in _encoded_pieces(text[column].chunks)]
    except UnicodeDecodeError:
        return None
    index: dict[str, int] = {}
    (codes, _), = _as_codes([pieces], [index], grow=True)
    return np.asarray(codes, dtype=np.int32), list(index)


def string_labels(batch: Batch, column: str) -> np.ndarray:
    """A column of category labels as strings, as read (classifiers' classes and features).

    Returns
    -------
    numpy.ndarray
        Object array of str, one per row.

    Raises
    ------
    DataError
        Naming the file and the column: a missing column, or a missing value (with its
        1-based row).
    """
    if column not in batch.columns:
        batch_column(batch, column)  # raises, naming the columns the file has
    (codes, labels), = category_codes(batch, [column])
    if len(codes) and codes.min() < 0:
        raise DataError("missing value", path=batch.name, column=column,
                        row=int(np.flatnonzero(codes < 0)[0]) + 1)
    return np.array(labels, dtype=object)[codes]


def category_codes(batch: Batch, columns: Sequence[str]) -> list[tuple[np.ndarray, list[str]]]:
    """Columns of category labels as integer codes and the labels they stand for.

    Each column is factorised once: ``codes[i]`` indexes ``labels`` (``-1`` for a missing
    value), and each label is the value as text (``str`` of a frame's or a Parquet file's
    value; a CSV cell as pandas reads it). A label may appear more than once in ``labels``
    (a CSV column read in chunks, or ``1`` and ``"1"`` in an object column); callers map
    labels, not codes (:func:`category_codes_as` does that mapping in the same pass). A
    pandas categorical column gives its own codes and its categories as labels, without
    hashing a cell: a category that no row holds is among the labels too.

    Parameters
    ----------
    batch : Batch
    columns : sequence of str
        The columns, all present (check :attr:`Batch.columns` first).

    Returns
    -------
    list of (numpy.ndarray, list of str)
        One ``(codes, labels)`` pair per column; codes are ``int32`` or ``int64``.
    """
    out = []
    for pieces in _column_pieces(batch, columns):
        if len(pieces) == 1 and pieces[0].missing is None:
            out.append((pieces[0].codes, pieces[0].labels))
            continue
        parts, labels = [], []
        for piece in pieces:
            codes = piece.codes.astype(np.int32) + np.int32(len(labels))
            codes[piece.codes < 0] = -1
            if piece.missing is not None:
                codes[piece.missing] = -1
            parts.append(codes)
            labels.extend(piece.labels)
        out.append((np.concatenate(parts) if parts else np.zeros(0, np.int32), labels))
    return out


def category_codes_as(batch: Batch, columns: Sequence[str], index: Sequence[dict[str, int]],
                      *, grow: bool = True,
                      unknown: Callable[[int, str, int], Exception] | None = None
                      ) -> list[tuple[np.ndarray, bool]]:
    """Columns of category labels as codes of the states in ``index``, one pass each.

    What :func:`category_codes` followed by mapping its labels would give, without the
    intermediate arrays: each chunk's codes go through a small table of its labels straight
    into the column's codes (a CSV read in 200 chunks costs one gather per column instead of
    a copy per chunk, a join, a gather and a scan for missing cells). A single chunk whose
    labels are already the states in order is returned as it is (no copy).

    Parameters
    ----------
    batch : Batch
    columns : sequence of str
        The columns, all present.
    index : sequence of dict
        Per column, state label -> code. With ``grow``, a label not in it is appended
        (code ``len(index[j])``), in the order the chunks first show it.
    grow : bool
        False: a label not in ``index`` is an error, raised as ``unknown(j, label, row)``
        with the 0-based row of its first cell.
    unknown : callable, optional
        Builds that error (default ``KeyError``).

    Returns
    -------
    list of (numpy.ndarray, bool)
        Per column, the codes (``int32`` or ``int64``; ``-1`` for a missing cell; possibly a
        read-only view) and whether it has a missing cell.
    """
    return _as_codes(_column_pieces(batch, columns), index, grow=grow, unknown=unknown)


def _as_codes(columns: list[list[_Piece]], index: Sequence[dict[str, int]], *, grow: bool,
              unknown: Callable[[int, str, int], Exception] | None = None
              ) -> list[tuple[np.ndarray, bool]]:
    """:func:`category_codes_as` of columns already read as pieces."""
    out = []
    for j, pieces in enumerate(columns):
        states = index[j]
        maps = []
        for piece in pieces:
            mapping = np.empty(len(piece.labels) + 1, np.int32)
            for i, w in enumerate(piece.labels):
                k = states.get(w)
                if k is None:
                    if grow:
                        k = states[w] = len(states)
                    else:
                        k = -2  # found below, to name its row
                mapping[i] = k
            mapping[-1] = -1  # a code -1 (a missing cell) stays -1
            maps.append(mapping)
        if len(pieces) == 1 and pieces[0].missing is None and \
                np.array_equal(maps[0][:-1], np.arange(len(pieces[0].labels))):
            codes = pieces[0].codes  # already the codes of the states: no copy
            out.append((codes, bool(pieces[0].signed and len(codes) and codes.min() < 0)))
            continue
        codes = np.empty(sum(len(p.codes) for p in pieces), np.int32)
        start, gap = 0, False
        for piece, mapping in zip(pieces, maps, strict=True):
            part = codes[start:start + len(piece.codes)]
            if piece.signed:
                part[:] = mapping[piece.codes]  # -1 indexes the trailing -1
                gap = gap or bool(len(part) and part.min() < 0)
            else:  # every code indexes a label: no bounds to check, no -1 to wrap
                np.take(mapping, piece.codes, out=part, mode="clip")
            if piece.missing is not None:
                part[piece.missing] = -1
                gap = True
            start += len(piece.codes)
        if any((m == -2).any() for m in maps) and (codes == -2).any():
            # (a categorical column's unused category maps to -2 without being a row's)
            row = int(np.flatnonzero(codes == -2)[0])
            for piece in pieces:  # the label of that row
                if row < len(piece.codes):
                    break
                row -= len(piece.codes)
            label = piece.labels[int(piece.codes[row])]
            row = int(np.flatnonzero(codes == -2)[0])
            raise (unknown or (lambda _j, w, _r: KeyError(w)))(j, label, row)
        out.append((codes, gap))
    return out


@dataclass(frozen=True)
class _Piece:
    """One chunk of a column: ``codes`` index ``labels``.

    ``signed``: a code may be -1 (a missing cell); ``missing``: else the rows that are
    missing (Arrow's nulls, whose codes are meaningless), or None.
    """

    codes: np.ndarray
    labels: list[str]
    signed: bool = False
    missing: np.ndarray | None = None


def _column_pieces(batch: Batch, columns: Sequence[str]) -> list[list[_Piece]]:
    """Every column's chunks as codes and labels: pyarrow's for a CSV, else the frame's."""
    if not batch.has_frame and batch.kind == "csv":
        out = _csv_pieces(batch, columns)
        if out is not None:
            return out
    import pandas as pd
    frame = batch.frame
    arrow = [arrow_text_chunks(frame[name].array) for name in columns]
    out: list = [None] * len(columns)
    text = [i for i, chunks in enumerate(arrow) if chunks is not None]
    for i, pieces in zip(text, _map_columns(_encoded_pieces, [arrow[i] for i in text],
                                            len(frame)), strict=True):
        out[i] = pieces
    for i, name in enumerate(columns):
        if arrow[i] is None:
            col = frame[name]
            if isinstance(col.dtype, pd.CategoricalDtype):
                # the frame's own codes (no hashing): every category is a label, used or
                # not, so callers drop labels that no row holds
                out[i] = [_Piece(col.array.codes, [str(u) for u in col.cat.categories],
                                 signed=True)]
                continue
            refuse_nested(col, batch.name, name)
            codes, uniques = pd.factorize(col)
            out[i] = [_Piece(codes, [str(u) for u in uniques], signed=True)]
    return [[_tidy_piece(p, batch) for p in pieces] for pieces in out]


def _tidy_piece(piece: _Piece, batch: Batch) -> _Piece:
    """The piece with its labels stripped of blanks: the one place labels are tidied.

    pandas skips the blanks before a CSV cell but keeps those after it, and pyarrow keeps
    both; stripping here makes ``Yes ``, `` Yes`` and ``Yes`` one label, whichever reader
    gave it. In a CSV file a label that is blank once stripped is missing, and so (outside
    ``text``) is one pandas reads as missing (``NA `` as `` NA``). Two labels may strip to
    one: callers map labels, not codes.
    """
    labels = [w.strip() for w in piece.labels]
    csv = batch.kind == "csv" and batch.given_frame is None
    gone = [i for i, w in enumerate(labels)
            if csv and (not w or (not batch.text and w in _PANDAS_NA))]
    if not gone:
        return _Piece(piece.codes, labels, piece.signed, piece.missing)
    lost = np.isin(piece.codes, gone)
    if piece.signed:
        codes = np.where(lost, -1, piece.codes).astype(piece.codes.dtype)
        return _Piece(codes, labels, True, piece.missing)
    missing = lost if piece.missing is None else (lost | piece.missing)
    return _Piece(piece.codes, labels, False, missing)


def _csv_pieces(batch: Batch, columns: Sequence[str]) -> list[list[_Piece]] | None:
    """:func:`_column_pieces` of a CSV read by pyarrow, or None to use the pandas frame.

    None when pyarrow cannot parse the file, a label is not UTF-8, or one might read
    differently in pandas (:func:`is_plain_label`). In a ``text`` batch an empty cell is
    missing, as in pandas there; otherwise pandas reads more cells as missing, and those are
    not plain.
    """
    if not columns:
        return []
    text = read_text(batch, columns)
    if text is None:
        return None
    out = []
    for name in columns:
        try:
            pieces = _encoded_pieces(text[name].chunks)
        except UnicodeDecodeError:
            return None
        if not all(is_plain_label(w, text=batch.text) or not w.strip()
                   for p in pieces for w in p.labels):
            return None
        out.append([_tidy_piece(p, batch) for p in pieces])
    return out


#: Cells below which columns are factorised on the calling thread alone.
_THREADED_CELLS = 2_000_000


def _map_columns(f, items: list, rows: int) -> list:
    """``[f(x) for x in items]``, on two threads when there is enough work.

    Arrow's hashing releases the GIL, so two columns are encoded at once on two cores;
    small batches stay on the calling thread (a pool costs more than it saves there).
    """
    workers = min(2, os.cpu_count() or 1, len(items))
    if workers < 2 or rows * len(items) < _THREADED_CELLS:
        return [f(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(f, items))


def _encoded_pieces(chunks) -> list[_Piece]:
    """Every chunk of an Arrow string (or dictionary) column as a piece (Arrow's hashing)."""
    return [_dictionary_piece(chunk) for chunk in chunks]


def _dictionary_piece(chunk) -> _Piece:
    """An Arrow string (or dictionary) array as a piece: its dictionary indices, no copy.

    Codes in order of first appearance (Arrow's hash-based dictionary encoding, in C++ with
    no Python object per value); a read-only view of Arrow's index buffer. A dictionary of
    bytes (a CSV's) is decoded as UTF-8.

    Raises
    ------
    UnicodeDecodeError
        A label of bytes that are not UTF-8.
    """
    import pyarrow as pa
    encoded = chunk if pa.types.is_dictionary(chunk.type) else chunk.dictionary_encode()
    indices = encoded.indices
    values = np.frombuffer(indices.buffers()[1], dtype=np.int32, count=len(indices),
                           offset=indices.offset * 4)
    missing = None
    if indices.null_count:
        bits = np.unpackbits(np.frombuffer(indices.buffers()[0], dtype=np.uint8),
                             bitorder="little")
        missing = bits[indices.offset:indices.offset + len(indices)] == 0
    labels = encoded.dictionary.to_pylist()
    if pa.types.is_binary(encoded.dictionary.type):
        labels = [w.decode("utf-8") for w in labels]
    return _Piece(values, labels, missing=missing)
