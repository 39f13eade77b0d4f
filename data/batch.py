"""One batch of rows: a file's bytes (CSV or Parquet) or an in-memory frame.

:func:`read_batch` reads a file's bytes and checks its header; the rows are parsed only when
a reader asks for them: columns of numbers (:mod:`bayescheck.data.numbers`), of labels
(:mod:`bayescheck.data.labels`), or the whole pandas frame (:attr:`Batch.frame`, which the
NUTS check and the readers' error messages use).
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DataError
from .fingerprints import file_fingerprint
from .remote import RemoteFile, data_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SUFFIXES", "Batch", "csv_header", "file_kind", "read_batch", "read_bytes",
           "read_local", "read_local_header", "refuse_nested"]

#: The file types a batch may have, by suffix.
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True, eq=False)
class Batch:
    """One file of a stream (or an in-memory frame).

    Attributes
    ----------
    name : str
        The file path, or a label for in-memory data.
    fingerprint : str
        :func:`~bayescheck.data.fingerprints.fingerprint` of the file's bytes
        (:func:`~bayescheck.data.fingerprints.frame_fingerprint` for in-memory data).
    frame : pandas.DataFrame
        The rows; for a file, parsed with pandas on first use (the column readers do not
        need it).
    content : bytes or None
        The file's bytes (None for an in-memory frame).
    kind : str or None
        ``"csv"`` or ``"parquet"`` for a file.
    text : bool
        Parse a CSV file's columns as strings, only an empty cell missing.
    """

    name: str
    fingerprint: str
    given_frame: Any = field(default=None, repr=False)
    content: bytes | None = field(default=None, repr=False)
    kind: str | None = None
    text: bool = False
    #: What the readers parsed from ``content``, kept for the next reader of this batch.
    parsed: dict = field(default_factory=dict, repr=False)

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a pandas frame (parsed from the file's bytes on first use)."""
        if self.given_frame is not None:
            return self.given_frame
        if "frame" not in self.parsed:
            self.parsed["frame"] = parse_frame(self.content, self.kind, Path(self.name),
                                               text=self.text)
        return self.parsed["frame"]

    @property
    def header(self) -> tuple[list[str], int]:
        """A CSV file's column names and the offset of the first byte after its header."""
        if "header" not in self.parsed:
            self.parsed["header"] = csv_header(self.content, self.name)
        return self.parsed["header"]

    def rows_buffer(self):
        """A CSV file's bytes after its header, as a ``pyarrow.Buffer`` (no copy)."""
        import pyarrow as pa
        return pa.py_buffer(self.content).slice(self.header[1])

    @property
    def has_frame(self) -> bool:
        """True when the rows are in a pandas frame already (given, or parsed before)."""
        return self.given_frame is not None or "frame" in self.parsed

    @property
    def columns(self) -> list[str]:
        """The column names, without parsing the rows where the format allows."""
        if self.has_frame:
            return [str(c) for c in self.frame.columns]
        if self.kind == "csv":
            return self.header[0]
        import pyarrow as pa
        import pyarrow.parquet as pq
        return list(pq.read_schema(pa.BufferReader(self.content)).names)


def read_bytes(path: Path | RemoteFile | str) -> bytes:
    """Every byte of a local file or a URL's object.

    Raises
    ------
    DataError
        When it cannot be read, with the system's reason, or a local name is not a regular
        file (a device such as ``/dev/zero``, a pipe or a socket, which would be read for
        ever or block).
    """
    source = data_file(path) if isinstance(path, str) else path
    if isinstance(source, Path):
        return read_local(source)
    try:
        return source.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None


def read_local(path: Path, limit: int | None = None) -> bytes:
    """A local file's bytes (the first ``limit`` of them): a regular file or a named pipe.

    A regular file is opened without blocking and checked on its open descriptor, so a link
    swapped after an earlier check to a device is caught too. A named pipe (a producer's
    stream, a shell's process substitution) is read as it arrives: it waits for its writer.

    Raises
    ------
    DataError
        Not a regular file, or the system cannot read it.
    """
    try:
        pipe = stat.S_ISFIFO(os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | (0 if pipe else getattr(os, "O_NONBLOCK", 0)))
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                raise DataError(f"not a regular file ({file_kind(mode)}); a data file must be "
                                f"a CSV or Parquet file", path=path)
            return fh.read() if limit is None else fh.read(limit)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (from its ``st_mode``)."""
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a file of bytes"


def read_local_header(path: Path) -> list[str]:
    """The column names of a local CSV file, reading only as much of it as the header takes.

    Raises
    ------
    DataError
        As :func:`read_local` and :func:`csv_header`.
    """
    size = 1 << 16
    while True:
        head = read_local(path, size)
        found = csv_header(head, path, whole=len(head) < size)
        if found is not None:
            return found[0]
        size *= 4


#: Where a physical line ends in a CSV file: CR LF, LF, or a lone CR (old Mac files).
_LINE_END = re.compile(rb"\r\n|\n|\r")


def csv_header(content: bytes, path, *, whole: bool = True) -> tuple[list[str], int] | None:
    """The column names of a CSV file and the offset of the first byte after its header.

    The header is the first record as RFC 4180 and pandas read it: lines may end in LF,
    CR LF or a lone CR, and a quoted name may hold a comma or a line break. Parsed with the
    :mod:`csv` module rather than pandas, which is slow on very wide headers and renames a
    repeated name silently (``x1`` twice becomes ``x1``, ``x1.1``). A byte-order mark and the
    blanks around each name are dropped (``x1, x2, y`` names ``y``).

    Parameters
    ----------
    content : bytes
        The file, or its first bytes.
    path
        The file, for messages.
    whole : bool
        ``content`` is the whole file. When it is not and the header does not end within it,
        the result is None: read more.

    Raises
    ------
    DataError
        On an empty header, text that is not UTF-8, an empty or a repeated name.
    """
    ends: list[int] = []
    lines = _physical_lines(content, whole, ends)
    try:
        record = next(csv.reader(lines), None)
    except _NotText as exc:
        raise DataError(f"the header is not UTF-8 text (byte {exc.byte:#04x} at offset "
                        f"{exc.offset}); save the file as UTF-8", path=path) from None
    if ends and ends[-1] < 0:
        return None
    if not record or not "".join(record).strip():
        raise DataError("file is empty (no header, no rows)", path=path)
    names = [name.strip() for name in record]
    seen: dict[str, int] = {}
    for i, name in enumerate(names, 1):
        if not name:
            raise DataError(f"column {i} of the header has no name", path=path)
        if name in seen:
            raise DataError(f"the header names this column twice (columns {seen[name]} and "
                            f"{i}); rename one of them", path=path, column=name)
        seen[name] = i
    return names, ends[-1] if ends else len(content)


def _physical_lines(content: bytes, whole: bool, ends: list[int]):
    """The lines of ``content`` as text with their ends; ``ends`` gets where each one ends.

    A last line without its end is given only when ``content`` is the whole file; else
    ``ends`` gets -1 and the lines stop (the caller reads more).
    """
    start = 0
    for match in _LINE_END.finditer(content):
        line = _decode(content, start, match.end())
        start = match.end()
        ends.append(start)
        yield line
    if start < len(content):
        if not whole:
            ends.append(-1)
            return
        line = _decode(content, start, len(content))
        ends.append(len(content))
        yield line


def _decode(content: bytes, start: int, end: int) -> str:
    """One line as text (a byte-order mark dropped at the start of the file)."""
    try:
        text = content[start:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _NotText(start + exc.start, content[start + exc.start]) from None
    return text.removeprefix("\ufeff") if start == 0 else text


class _NotText(Exception):
    """A header line that is not UTF-8: the offset and value of its first bad byte."""

    def __init__(self, offset: int, byte: int):
        super().__init__(offset, byte)
        self.offset, self.byte = offset, byte


def read_batch(path: Path | RemoteFile, *, text: bool = False) -> Batch:
    """Read one file's bytes and fingerprint them; the rows are parsed when first asked for.

    ``text``: every CSV column as strings, only an empty cell missing (no ``NA`` / ``None`` /
    ``null`` conversion, no numbers).

    Raises
    ------
    DataError
        When the file cannot be read, is empty or has a header but no rows.
    """
    content = read_bytes(path)
    # bytes.strip() copies the whole file when it ends in a newline: look at the head first
    if not content[:4096].strip() and not content.strip():
        raise DataError("file is empty (no header, no rows)", path=path)
    kind = SUFFIXES[path.suffix.lower()]
    batch = Batch(str(path), file_fingerprint(content, kind), content=content, kind=kind,
                  text=text)
    if kind == "csv":
        if _blank_after(content, batch.header[1]):  # the header is checked now
            raise DataError("file has a header but no rows", path=path)
    else:
        parquet = parquet_file(content)
        rows = None if parquet is None else parquet.metadata.num_rows
        # Kept for the column readers, which read the columns through the same footer.
        batch.parsed["parquet_file"] = parquet
        if rows is None:
            batch.frame  # noqa: B018 - an unreadable file: parse it for the error's words
        elif rows == 0:
            raise DataError("file has a header but no rows", path=path)
    return batch


def _blank_after(content: bytes, start: int) -> bool:
    """True when nothing but blanks follows ``start`` (without copying the rows)."""
    rest = memoryview(content)[start:]
    # blanks as bytes.strip() sees them; a non-blank byte is usually within the first few
    return len(bytes(rest[:4096]).strip()) == 0 and len(bytes(rest).strip()) == 0


def parquet_file(content: bytes):
    """A ``pyarrow.parquet.ParquetFile`` of the bytes (footer read), None when it cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        return pq.ParquetFile(pa.BufferReader(content))
    except Exception:  # noqa: BLE001 - the pandas parse words the error
        return None


def parse_frame(content: bytes, kind: str, path: Path, *, text: bool = False) -> pd.DataFrame:
    """A file's bytes as a pandas frame (the reader every family can use).

    ``text`` as in :func:`read_batch`.

    Raises
    ------
    DataError
        When the file cannot be parsed or has no rows.
    """
    import pandas as pd
    header = None if kind == "parquet" else csv_header(content, path)
    try:
        if kind == "parquet":
            frame = pd.read_parquet(io.BytesIO(content))
        else:
            as_text = dict(dtype=str, keep_default_na=False, na_values=[""]) if text else {}
            frame = pd.read_csv(io.BytesIO(content), skipinitialspace=True,
                                encoding="utf-8-sig", **as_text)
            if frame.shape[1] != len(header[0]) or frame.isna().to_numpy().any():
                # a short row reads as missing cells: find it before anything else
                _refuse_ragged(content, header, path)
            frame.columns = header[0]
    except pd.errors.EmptyDataError:
        raise DataError("file is empty (no header, no rows)", path=path) from None
    except pd.errors.ParserError as exc:
        _refuse_ragged(content, header, path)
        raise DataError(f"cannot parse: {exc}", path=path) from None
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - parser errors of either format are bad data
        raise DataError(f"cannot parse: {exc}", path=path) from None
    if len(frame) == 0:
        raise DataError("file has a header but no rows", path=path)
    return frame


def refuse_nested(column: pd.Series, path, name: str) -> None:
    """Refuse a column whose cells hold lists, arrays or records (a Parquet list or struct).

    A label or a number is one value per cell; such a cell has no label pandas could hash
    nor a number, and would fail deep in a reader.

    Raises
    ------
    DataError
        Naming the file, the column and the first such row.
    """
    if column.dtype != object:
        return
    import pandas as pd
    nested = column.map(lambda v: not pd.api.types.is_scalar(v)).to_numpy(dtype=bool)
    if nested.any():
        i = int(nested.argmax())
        raise DataError(f"the cells hold {type(column.iloc[i]).__name__} values (a Parquet list "
                        f"or struct column?); every cell must be one label or number",
                        path=path, column=name, row=i + 1)


def _refuse_ragged(content: bytes, header: tuple[list[str], int], path) -> None:
    """Refuse a CSV file with a row of more or fewer values than its header names.

    A short row is not read as missing cells: the values may belong to other columns.
    Rows are counted as pandas counts them (blank lines skipped, a quoted line break inside
    one row).

    Raises
    ------
    DataError
        Naming the first such row.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    names, start = header
    found = []

    def note(row) -> str:
        found.append(row)
        return "error"

    try:
        pcsv.read_csv(pa.py_buffer(content).slice(start),
                      read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
                      parse_options=pcsv.ParseOptions(newlines_in_values=True,
                                                      invalid_row_handler=note),
                      convert_options=pcsv.ConvertOptions(
                          include_columns=names[:1], column_types={names[0]: pa.string()}))
    except Exception:  # noqa: BLE001 - any other parse failure: pandas words it
        pass
    if found:
        row = found[0]
        raise DataError(f"the row has {row.actual_columns} values but the header names "
                        f"{row.expected_columns} columns; every row needs one value per "
                        f"column (an empty cell for a missing one)", path=path,
                        row=row.number)
