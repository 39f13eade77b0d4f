"""Reading the data: sources (a file, a glob of batches, frames), readers and value checks.

CSV files are parsed by ``pyarrow.csv`` (numbers as float64, labels dictionary-encoded),
Parquet files by pyarrow, URLs read through fsspec; a file whose reading pyarrow and pandas
could dispute, and every error, goes through its pandas frame. Every problem is a
:class:`DataError` naming the file, the column and the row.

This package imports nothing else of bayescheck's. Names are imported on first use, so
``import bayescheck.data`` loads neither numpy nor pyarrow.
"""

from importlib import import_module

_EXPORTS = {
    "Batch": "batch",
    "BayescheckError": "errors",
    "DataError": "errors",
    "DataSource": "sources",
    "MAX_MAGNITUDE": "numbers",
    "RemoteFile": "remote",
    "batch_column": "labels",
    "batch_rows": "labels",
    "category_codes": "labels",
    "category_codes_as": "labels",
    "cell_codes": "labels",
    "data_file": "remote",
    "file_fingerprint": "fingerprints",
    "fingerprint": "fingerprints",
    "frame_fingerprint": "fingerprints",
    "is_url": "remote",
    "numeric_columns": "numbers",
    "read_batch": "batch",
    "string_labels": "labels",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
