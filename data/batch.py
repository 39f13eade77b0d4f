"""One batch of rows: a file's bytes (CSV or Parquet) or an in-memory frame.

:func:`read_batch` reads a file's bytes and checks its header; the rows are parsed only when
a reader asks for them: columns of numbers (:mod:`bayescheck.data.numbers`), of labels
(:mod:`bayescheck.data.labels`), or the whole pandas frame (:attr:`Batch.frame`, which the
NUTS check and the readers' error messages use).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DataError
from .fingerprints import file_fingerprint
from .remote import RemoteFile, data_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SUFFIXES", "Batch", "csv_header", "read_batch", "read_bytes"]

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
    def has_frame(self) -> bool:
        """True when the rows are in a pandas frame already (given, or parsed before)."""
        return self.given_frame is not None or "frame" in self.parsed

    @property
    def columns(self) -> list[str]:
        """The column names, without parsing the rows where the format allows."""
        if self.has_frame:
            return [str(c) for c in self.frame.columns]
        if self.kind == "csv":
            return csv_header(first_line(self.content), self.name)
        import pyarrow as pa
        import pyarrow.parquet as pq
        return list(pq.read_schema(pa.BufferReader(self.content)).names)


def read_bytes(path: Path | RemoteFile | str) -> bytes:
    """Every byte of a local file or a URL's object.

    Raises
    ------
    DataError
        When it cannot be read, with the system's reason.
    """
    try:
        source = data_file(path) if isinstance(path, str) else path
        return source.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None


def csv_header(line: bytes, path) -> list[str]:
    """The column names on the first line of a CSV file, checked.

    Parsed with the :mod:`csv` module rather than pandas, which is slow on very wide headers
    and renames a repeated name silently (``x1`` twice becomes ``x1``, ``x1.1``). A byte-order
    mark and the blanks around each name are dropped (``x1, x2, y`` names ``y``).

    Raises
    ------
    DataError
        On an empty header, text that is not UTF-8, an empty or a repeated name.
    """
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"the header is not UTF-8 text (byte {line[exc.start]:#04x} at offset "
                        f"{exc.start}); save the file as UTF-8", path=path) from None
    text = text.rstrip("\r\n")
    if not text.strip():
        raise DataError("file is empty (no header, no rows)", path=path)
    names = [name.strip() for name in next(csv.reader([text]))]
    seen: dict[str, int] = {}
    for i, name in enumerate(names, 1):
        if not name:
            raise DataError(f"column {i} of the header has no name", path=path)
        if name in seen:
            raise DataError(f"the header names this column twice (columns {seen[name]} and "
                            f"{i}); rename one of them", path=path, column=name)
        seen[name] = i
    return names


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
        batch.columns  # noqa: B018 - the header is checked now, as it always was
        if _only_header(content):
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


def first_line(content: bytes) -> bytes:
    """The bytes before the first newline (all of them without one), copying only those.

    Splitting the content at the newline would copy the whole rest of the file (0.1 s a time for a
    200 MB batch).
    """
    end = content.find(b"\n")
    return content if end < 0 else content[:end]


def _only_header(content: bytes) -> bool:
    """True when nothing but blanks follows the first line (without copying the rows)."""
    end = content.find(b"\n")
    if end < 0:
        return True
    rest = memoryview(content)[end + 1:]
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
    names = None if kind == "parquet" else csv_header(first_line(content), path)
    try:
        if kind == "parquet":
            frame = pd.read_parquet(io.BytesIO(content))
        else:
            as_text = dict(dtype=str, keep_default_na=False, na_values=[""]) if text else {}
            frame = pd.read_csv(io.BytesIO(content), skipinitialspace=True,
                                encoding="utf-8-sig", **as_text)
            frame.columns = names
    except pd.errors.EmptyDataError:
        raise DataError("file is empty (no header, no rows)", path=path) from None
    except Exception as exc:  # noqa: BLE001 - parser errors of either format are bad data
        raise DataError(f"cannot parse: {exc}", path=path) from None
    if len(frame) == 0:
        raise DataError("file has a header but no rows", path=path)
    return frame
