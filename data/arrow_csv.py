"""A CSV batch's columns parsed by ``pyarrow.csv``: numbers as float64, labels as text.

The header was read and checked by :func:`bayescheck.data.batch.csv_header`; pyarrow is
given its names and the bytes after it, and parses only the rows, only the columns asked
for, on its own threads. A file pyarrow cannot parse this way gives None, and the caller
reads the pandas frame of the batch instead, which parses it or words the error.
"""

from __future__ import annotations

from collections.abc import Sequence

from .batch import Batch

__all__ = ["read_floats", "read_text"]

#: Cells in an empty text cell's place: the only cell read as missing when reading text.
_EMPTY = [""]

#: Bytes pyarrow parses at a time (its unit of work on a thread, one chunk of each column).
#: Against its default of 1 MiB, a quarter of the chunks halves the CPU of turning a large
#: file's chunks into codes; the parse itself costs the same.
BLOCK_BYTES = 4 << 20


def read_floats(batch: Batch, columns: Sequence[str]):
    """The columns as a ``pyarrow.Table`` of float64, or None where pyarrow cannot read them.

    None also when a column is absent or the file has no rows.
    """
    if batch.kind != "csv" or batch.content is None or not columns \
            or set(columns) - set(batch.columns):
        return None
    import pyarrow as pa
    import pyarrow.csv as pcsv
    try:
        table = pcsv.read_csv(
            pa.BufferReader(batch.rows_buffer()),
            read_options=pcsv.ReadOptions(column_names=batch.columns),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(columns), column_types=dict.fromkeys(columns, pa.float64())))
    except Exception:  # noqa: BLE001 - any parse failure: the pandas frame words it
        return None
    return table if table.num_rows else None


def read_text(batch: Batch, columns: Sequence[str]) -> dict | None:
    """The columns' cells as written, dictionary-encoded: name -> ``pyarrow.ChunkedArray``.

    Each column is ``dictionary<int32, binary>`` (one dictionary per chunk, its labels in
    order of first appearance, as bytes: decode them as UTF-8, a label that is not is the
    pandas frame's to word); an empty cell, quoted or not, is null and nothing else is.
    Columns read before are kept on the batch, so a batch is parsed once for the columns its
    readers ask for together. None for a batch that is not a CSV file, a missing column, a
    file pyarrow cannot parse (a row with another number of values than the header, a
    quoted value over two lines) or one without rows.
    """
    if batch.kind != "csv" or batch.content is None or "text_failed" in batch.parsed:
        return None
    known = batch.parsed.setdefault("text", {})
    wanted = [c for c in dict.fromkeys(columns) if c not in known]
    if wanted:
        if set(wanted) - set(batch.columns):
            return None
        import pyarrow as pa
        import pyarrow.csv as pcsv
        try:
            table = pcsv.read_csv(
                pa.BufferReader(batch.rows_buffer()),
                read_options=pcsv.ReadOptions(column_names=batch.columns,
                                              block_size=BLOCK_BYTES),
                convert_options=pcsv.ConvertOptions(
                    include_columns=wanted,
                    # Encoded while parsing, on pyarrow's threads, as bytes: only each
                    # chunk's dictionary is then decoded as UTF-8 (not every cell checked),
                    # which takes about 40 % off the parse of a large categorical file.
                    column_types=dict.fromkeys(wanted, pa.dictionary(pa.int32(), pa.binary())),
                    null_values=_EMPTY, strings_can_be_null=True,
                    quoted_strings_can_be_null=True))
            if table.num_rows == 0:
                raise ValueError("no rows")
        except Exception:  # noqa: BLE001 - any parse failure: the pandas frame words it
            batch.parsed["text_failed"] = True
            return None
        known.update({name: table.column(name) for name in wanted})
    return {name: known[name] for name in columns}

