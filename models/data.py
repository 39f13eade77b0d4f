"""Where the data come from: one CSV or Parquet file, or a glob of batch files.

A :class:`DataSource` yields :class:`Batch` objects one at a time, in natural sorted order
(``2.csv`` before ``10.csv``), so a stream of files is never held in memory together. Each
batch carries a fingerprint of its bytes (XXH3-128, :func:`fingerprint`), so a batch fed
twice can be recognised. Every problem is a :class:`DataError` naming the file, the column
and the 1-based data row.

Numbers are read lean: :func:`numeric_columns` parses only the columns asked for, with
pyarrow (Parquet, or ``pyarrow.csv``), and checks them with vectorised numpy. Only when that
fails (a column missing, a value that is not a finite number, a CSV that pyarrow reads
differently) does it fall back to the pandas frame of the batch (:attr:`Batch.frame`, parsed
on first use), which finds the first bad row and words the error. pandas is imported only
then, and by the families that need a frame (labels, categories) of a file that is not plain.

A small plain CSV file (at most :data:`SMALL_CSV` bytes, no quote character, one value per
column on every line) is split with ``str.split`` instead, and neither pyarrow nor pandas is
imported: importing them costs more than reading such a file. That path takes only values
whose meaning the two readers cannot dispute (a number written plainly, a label pandas would
not read as a number, a boolean or missing) and declines the batch otherwise, so the numbers
and labels are the ones the readers above give, and so are the errors (which it leaves to
them).
"""

from __future__ import annotations

import csv
import glob
import io
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from .errors import DataError
from .file_read import read_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_MAGNITUDE", "PLAIN_INT", "SMALL_CSV", "Batch", "DataSource", "RemoteFile",
           "batch_column", "batch_rows", "category_codes", "category_codes_as", "data_file",
           "fingerprint", "frame_fingerprint", "is_plain_label", "is_url", "label_values",
           "numeric_columns", "plain_cells", "string_labels"]

_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _natural_key(path: Path):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")


def is_url(path) -> bool:
    """True for an fsspec URL (``s3://bucket/key``, ``memory://...``), not for a local path."""
    return _URL.match(str(path)) is not None


class RemoteFile:
    """A file named by an fsspec URL (``s3://bucket/part-0.parquet``), read through fsspec.

    The few parts of :class:`pathlib.Path` the readers use: ``name``, ``suffix``,
    ``read_bytes()``, ``stat().st_size``, ``exists()``, ``is_dir()``; ``str()`` is the URL.
    fsspec and the protocol's package (``s3fs``, ``gcsfs``, ``adlfs``) are imported on first
    use.
    """

    def __init__(self, url: str):
        self.url = str(url)

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"RemoteFile({self.url!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RemoteFile) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    @property
    def name(self) -> str:
        """The last part of the URL."""
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        """The file name's suffix (``.parquet``)."""
        return Path(self.name).suffix

    def _fs(self):
        import fsspec.core
        return fsspec.core.url_to_fs(self.url)

    def read_bytes(self) -> bytes:
        """The whole file."""
        fs, path = self._fs()
        return fs.cat_file(path)

    def stat(self):
        """A stat result of which only ``st_size`` is filled."""
        fs, path = self._fs()
        return os.stat_result((0, 0, 0, 0, 0, 0, int(fs.size(path) or 0), 0, 0, 0))

    def exists(self) -> bool:
        """True when the object exists."""
        fs, path = self._fs()
        return fs.exists(path)

    def is_dir(self) -> bool:
        """True for a directory (a prefix)."""
        fs, path = self._fs()
        return fs.isdir(path)


def data_file(name: str | Path) -> Path | RemoteFile:
    """A file of a stream from its name: a :class:`RemoteFile` for a URL, else a Path."""
    return RemoteFile(name) if is_url(name) else Path(name)


def _remote_files(pattern: str) -> list[RemoteFile]:
    """The files an fsspec URL or URL glob names, in natural order (as :meth:`files`)."""
    try:
        import fsspec.core
        fs, path = fsspec.core.url_to_fs(pattern)
    except ImportError as exc:
        raise DataError(f"reading URLs needs fsspec and the package of this protocol "
                        f"({exc})", path=pattern) from None
    except (ValueError, OSError) as exc:
        raise DataError(f"cannot open this URL: {exc}", path=pattern) from None
    try:
        if glob.has_magic(path):
            found = [p for p in fs.glob(path) if not fs.isdir(p)]
            if not found:
                raise DataError("no file matches this pattern", path=pattern)
        elif fs.exists(path) and not fs.isdir(path):
            found = [path]
        else:
            raise DataError("data file not found", path=pattern)
    except OSError as exc:
        raise DataError(f"cannot list: {exc}", path=pattern) from None
    return sorted((RemoteFile(fs.unstrip_protocol(p)) for p in found), key=_natural_key)


def fingerprint(content: bytes) -> str:
    """The fingerprint of a batch's bytes: XXH3-128 as 32 hexadecimal digits.

    Not a cryptographic hash: it recognises a batch fed twice or changed by accident (two
    different batches share one with probability about 2^-128), at memory speed (about
    10 GB/s here, where SHA-256 runs at 0.5-2 GB/s and would cost as much as the parsing).
    """
    return xxhash.xxh3_128_hexdigest(content)


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """The fingerprint of an in-memory frame: XXH3-128 of its column names, types and values.

    Equal frames (the same columns, dtypes and values, whatever their index) give equal
    fingerprints; a change of any cell changes it (with probability about 1 - 2^-128). The
    bytes hashed are the values' own buffers where they have them: a numpy column's array,
    an Arrow-backed text column's offsets (as lengths, so slicing and chunking do not
    matter), characters and nulls, a categorical column's codes and categories. Only object
    and other columns are hashed value by value (``pandas.util.hash_pandas_object``), which
    is about 10x slower.
    """
    import pandas as pd
    whole = xxhash.xxh3_128()
    whole.update(repr((len(frame), [str(c) for c in frame.columns],
                       [str(t) for t in frame.dtypes])).encode())
    for name in frame.columns:
        col = frame[name]
        h = xxhash.xxh3_128()
        chunks = _arrow_text_chunks(col.array)
        if chunks is not None:
            parts = (xxhash.xxh3_128(), xxhash.xxh3_128(), xxhash.xxh3_128())
            start = 0
            for chunk in chunks:
                _hash_text_chunk(parts, chunk, start)
                start += len(chunk)
            for part in parts:
                h.update(part.digest())
        elif isinstance(col.dtype, np.dtype) and col.dtype.kind in "biufcmM":
            h.update(np.ascontiguousarray(col.to_numpy()).view(np.uint8).data)
        elif isinstance(col.dtype, pd.CategoricalDtype):
            # the codes' buffer (no copy) and the categories (values, order, ordered)
            h.update(np.ascontiguousarray(col.array.codes).view(np.uint8).data)
            h.update(repr((col.cat.categories.tolist(), col.cat.ordered)).encode())
        else:
            h.update(pd.util.hash_pandas_object(col, index=False).to_numpy().data)
        whole.update(h.digest())
    return whole.hexdigest()


def _arrow_text_chunks(array) -> list | None:
    """The Arrow chunks of a pandas column of Arrow-backed text (no copy), else None."""
    to_arrow = getattr(array, "__arrow_array__", None)
    if to_arrow is None or getattr(array.dtype, "storage", None) != "pyarrow":
        return None
    import pyarrow as pa
    try:
        chunked = to_arrow()
    except Exception:  # noqa: BLE001 - not convertible: hashed another way
        return None
    chunks = getattr(chunked, "chunks", [chunked])
    if not all(pa.types.is_string(c.type) or pa.types.is_large_string(c.type)
               for c in chunks):
        return None
    return chunks


def _hash_text_chunk(hashers, chunk, start: int) -> None:
    """Feed one Arrow string array's lengths, characters and null rows to three hashers.

    ``start`` is the position of the chunk's first row in the column; three hashers, so
    that how the column is chunked does not matter.
    """
    lengths, characters, nulls = hashers
    import pyarrow as pa
    width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    _, offsets, data = chunk.buffers()
    off = np.frombuffer(offsets, dtype=width, count=len(chunk) + 1,
                        offset=chunk.offset * np.dtype(width).itemsize)
    # the lengths as int64 in one pass (a diff then a cast would be two)
    lengths.update(np.subtract(off[1:], off[:-1], dtype=np.int64).data)
    if data is not None and off[-1] > off[0]:
        characters.update(memoryview(data)[int(off[0]):int(off[-1])])
    if chunk.null_count:
        nulls.update((np.flatnonzero(chunk.is_null().to_numpy(zero_copy_only=False)) + start)
                 .astype(np.int64).data)


@dataclass(frozen=True, eq=False)
class Batch:
    """One file of a stream (or an in-memory frame).

    Attributes
    ----------
    name : str
        The file path, or a label for in-memory data.
    fingerprint : str
        :func:`fingerprint` of the file's bytes (:func:`frame_fingerprint` for in-memory
        data).
    frame : pandas.DataFrame
        The rows; for a file, parsed with pandas on first use (:func:`numeric_columns` does
        not need it).
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
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a pandas frame (parsed from the file's bytes on first use)."""
        if self.given_frame is not None:
            return self.given_frame
        if "frame" not in self._cache:
            self._cache["frame"] = _parse_frame(self.content, self.kind, Path(self.name),
                                                text=self.text)
        return self._cache["frame"]

    @property
    def columns(self) -> list[str]:
        """The column names, without parsing the rows where the format allows."""
        if self.given_frame is not None or "frame" in self._cache:
            return [str(c) for c in self.frame.columns]
        if self.kind == "csv":
            return csv_header(_first_line(self.content), self.name)
        import pyarrow as pa
        import pyarrow.parquet as pq
        return list(pq.read_schema(pa.BufferReader(self.content)).names)


class DataSource:
    """One data file, a glob of batch files, or frames given from Python.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        A file or a glob pattern (``batches/*.csv``).
    base : pathlib.Path, optional
        Folder that a relative ``path`` is relative to (the spec's folder).
    frames : sequence of pandas.DataFrame, optional
        In-memory batches instead of files.
    text : bool
        Read every CSV column as text, with only an empty cell missing: for categorical data,
        whose states may be spelt ``None``, ``NA``, ``null`` or ``nan`` (pandas would read
        those as missing) or ``01`` (read as the number 1). Frames and Parquet files keep
        their types.
    """

    def __init__(self, path: str | Path | None = None, *, base: Path | None = None,
                 frames: Sequence[pd.DataFrame] | None = None, text: bool = False):
        if (path is None) == (frames is None):
            raise ValueError("give exactly one of path and frames")
        self.text = bool(text)
        self.pattern = None if path is None else str(path)
        self.base = Path(base) if base is not None else Path.cwd()
        self._frames = None if frames is None else list(frames)

    @classmethod
    def from_frame(cls, *frames: pd.DataFrame) -> DataSource:
        """Use in-memory data frames as the batches, in the order given."""
        return cls(frames=frames)

    def __repr__(self) -> str:
        return f"DataSource({self.pattern!r})" if self._frames is None else \
            f"DataSource(<{len(self._frames)} frames>)"

    @property
    def label(self) -> str:
        """What to call the data in messages and reports."""
        return self.pattern if self._frames is None else f"{len(self._frames)} in-memory frame(s)"

    def files(self) -> list[Path]:
        """The files of the stream, in natural sorted order.

        Raises
        ------
        DataError
            When nothing matches, or a file has an unsupported suffix.
        """
        if self._frames is not None:
            return []
        if is_url(self.pattern):
            files = _remote_files(self.pattern)
            for f in files:
                if f.suffix.lower() not in _SUFFIXES:
                    raise DataError(f"unsupported file type {f.suffix!r}; expected .csv or "
                                    f".parquet", path=f)
            return files
        pattern = Path(self.pattern)
        if not pattern.is_absolute():
            pattern = self.base / pattern
        if glob.has_magic(str(pattern)):
            files = sorted((Path(p) for p in glob.glob(str(pattern)) if not Path(p).is_dir()),
                           key=_natural_key)
            if not files:
                raise DataError("no file matches this pattern", path=pattern)
        else:
            if not pattern.exists():
                raise DataError("data file not found", path=pattern)
            files = [pattern]
        for f in files:
            if f.suffix.lower() not in _SUFFIXES:
                raise DataError(f"unsupported file type {f.suffix!r}; expected .csv or .parquet",
                                path=f)
        return files

    def columns(self) -> list[str]:
        """Column names of the first batch, read without loading its rows where possible."""
        if self._frames is not None:
            return [str(c) for c in self._frames[0].columns]
        first = self.files()[0]
        if isinstance(first, RemoteFile):
            return read_batch(first).columns
        if _SUFFIXES[first.suffix.lower()] == "parquet":
            import pyarrow.parquet as pq
            try:
                return list(pq.read_schema(first).names)
            except Exception as exc:  # noqa: BLE001 - any reader failure is bad data
                raise DataError(f"cannot read Parquet schema: {exc}", path=first) from None
        try:
            with open(first, "rb") as fh:
                line = fh.readline()
        except OSError as exc:
            raise DataError(f"cannot read: {exc.strerror}", path=first) from None
        return csv_header(line, first)

    def batches(self, skip: Mapping[str, str] | None = None) -> Iterator[Batch]:
        """Yield the batches one at a time.

        Parameters
        ----------
        skip : mapping of str to str, optional
            Batch name -> fingerprint of batches already absorbed (a resumed stream). Each is
            re-fingerprinted, not parsed, and skipped; one whose content changed is an error.
        """
        for load in self.loaders(skip):
            yield load()

    def loaders(self, skip: Mapping[str, str] | None = None) -> Iterator[Callable[[], Batch]]:
        """Like :meth:`batches`, but yield for each batch a function that reads it.

        A stream can call them on other threads, to read the next batches while it absorbs
        one (:func:`bayescheck.inference.streaming.run_stream`). The batches in ``skip`` are verified
        here, as the iteration reaches them.
        """
        skip = skip or {}
        if self._frames is not None:
            items = ((f"frame {i}", frame) for i, frame in enumerate(self._frames))
            for name, frame in items:
                digest = frame_fingerprint(frame)
                if not _skipped(name, digest, skip):
                    yield partial(Batch, name, digest, frame)
            return
        # The same file may be named differently from one run to the next (the spec named
        # by a relative path, an absolute one, a symbolic link): match on the real path.
        real = {_real_path(name): name for name in skip}
        for f in self.files():
            name = real.get(_real_path(f))
            if name is not None:
                _skipped(name, fingerprint(_read_bytes(f)), skip)
                continue
            yield partial(read_batch, f, text=self.text)

    def read_all(self) -> pd.DataFrame:
        """Every batch in one frame (for the NUTS check, which needs the rows together)."""
        import pandas as pd
        return pd.concat([b.frame for b in self.batches()], ignore_index=True)


def _skipped(name: str, fingerprint: str, skip: Mapping[str, str]) -> bool:
    if name not in skip:
        return False
    if skip[name] != fingerprint:
        raise DataError("content changed since this batch was absorbed into the checkpoint; "
                        "start afresh without --resume", path=name)
    return True


def _real_path(name) -> str:
    """A local file's real path (links resolved); a URL as it is."""
    return str(name) if is_url(name) else os.path.realpath(name)


def _read_bytes(path: Path | RemoteFile) -> bytes:
    try:
        source = data_file(path) if isinstance(path, str) else path
        return read_file(source) if isinstance(source, Path) else source.read_bytes()
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


def read_batch(path: Path, *, text: bool = False) -> Batch:
    """Read one file's bytes and fingerprint them; the rows are parsed when first asked for.

    ``text``: every CSV column as strings, only an empty cell missing (no ``NA`` / ``None`` /
    ``null`` conversion, no numbers).

    Raises
    ------
    DataError
        When the file cannot be read, is empty or has a header but no rows.
    """
    content = _read_bytes(path)
    # bytes.strip() copies the whole file when it ends in a newline: look at the head first
    if not content[:4096].strip() and not content.strip():
        raise DataError("file is empty (no header, no rows)", path=path)
    kind = _SUFFIXES[path.suffix.lower()]
    batch = Batch(str(path), fingerprint(content), content=content, kind=kind, text=text)
    if kind == "csv":
        batch.columns  # noqa: B018 - the header is checked now, as it always was
        if _only_header(content):
            raise DataError("file has a header but no rows", path=path)
    else:
        parquet = _parquet_file(content)
        rows = None if parquet is None else parquet.metadata.num_rows
        # Kept for numeric_columns, which reads the columns through the same footer.
        batch._cache["parquet_file"] = parquet
        if rows is None:
            batch.frame  # noqa: B018 - an unreadable file: parse it for the error's words
        elif rows == 0:
            raise DataError("file has a header but no rows", path=path)
    return batch


def _first_line(content: bytes) -> bytes:
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


def _parquet_file(content: bytes):
    """A ``pyarrow.parquet.ParquetFile`` of the bytes (footer read), None when it cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        return pq.ParquetFile(pa.BufferReader(content))
    except Exception:  # noqa: BLE001 - the pandas parse words the error
        return None


def _parse_frame(content: bytes, kind: str, path: Path, *, text: bool = False) -> pd.DataFrame:
    """A file's bytes as a pandas frame (the reader every family can use).

    ``text`` as in :func:`read_batch`.
    """
    import pandas as pd
    names = None if kind == "parquet" else csv_header(_first_line(content), path)
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


#: Largest magnitude :func:`numeric_columns` accepts when asked to bound it: the square of a
#: larger value, summed over rows, overflows float64 (about 1.8e308) in X'X, variances or
#: squared distances.
MAX_MAGNITUDE = 1e150


def batch_column(batch: Batch, column: str) -> pd.Series:
    """One column of a batch; a missing column is a :class:`DataError` listing the file's."""
    frame = batch.frame
    if column not in frame.columns:
        raise DataError(f"missing column; the file has: {', '.join(map(str, frame.columns))}",
                        path=batch.name, column=column)
    return frame[column]


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
    values = label_values(batch, column)
    if values is not None and all(v is not None for v in values):
        return values
    col = batch_column(batch, column)
    missing = col.isna().to_numpy()
    if missing.any():
        raise DataError("missing value", path=batch.name, column=column,
                        row=int(np.flatnonzero(missing)[0]) + 1)
    return col.astype(str).to_numpy(dtype=object)


def category_codes(batch: Batch, columns: Sequence[str]) -> list[tuple[np.ndarray, list[str]]]:
    """Columns of category labels as integer codes and the labels they stand for.

    Each column is factorised once: ``codes[i]`` indexes ``labels`` (``-1`` for a missing
    value), and each label is the value as text (``str`` of a frame's or a Parquet file's
    value; a CSV cell as written when the batch reads text). A label may appear more than
    once in ``labels`` (a CSV column read in chunks, or ``1`` and ``"1"`` in an object
    column); callers map labels, not codes (:func:`category_codes_as` does that mapping in
    the same pass). A pandas categorical column gives its own codes and its categories as
    labels, without hashing a cell: a category that no row holds is among the labels too.

    A plain text CSV is read by the compiled reader of :mod:`bayescheck.models.csv_codes` (one pass over
    the bytes, no Python object per cell); any other text CSV, or when that reader is not
    available, with ``pyarrow.csv`` straight into dictionary-encoded columns. When a label
    starts with a blank or holds a quote (pandas' ``skipinitialspace`` reads those
    differently), or pyarrow cannot parse the file, the pandas frame of the batch is used,
    with the same result as before.

    Parameters
    ----------
    batch : Batch
    columns : sequence of str
        The columns, all present (check :attr:`Batch.columns` first).

    Returns
    -------
    list of (numpy.ndarray, list of str)
        One ``(codes, labels)`` pair per column; codes are ``int8`` (the compiled CSV
        reader's, when no column has more than 128 labels: widen them before arithmetic),
        ``int32`` or ``int64``.
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
        Per column, the codes (``int8``, ``int32`` or ``int64``: the compiled CSV reader's
        are ``int8`` when no column has more than 128 labels, so widen them before any
        arithmetic that can pass 127; ``-1`` for a missing cell; possibly a read-only view)
        and whether it has a missing cell.
    """
    out = []
    for j, pieces in enumerate(_column_pieces(batch, columns)):
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
    """Every column's chunks as codes and labels, from the cheapest reader that applies."""
    plain = [label_values(batch, name) for name in columns]  # a small plain file: no pyarrow
    if all(values is not None for values in plain):
        return [[_Piece(*_plain_codes(values), signed=True)] for values in plain]
    if batch.content is not None and batch.kind == "csv" and batch.text \
            and "frame" not in batch._cache:
        out = _compiled_text_pieces(batch, columns)
        if out is None:
            out = _arrow_text_pieces(batch, columns)
        if out is not None:
            return out
    import pandas as pd
    frame = batch.frame
    arrow = [_arrow_text_chunks(frame[name].array) for name in columns]
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
            codes, uniques = pd.factorize(col)
            out[i] = [_Piece(codes, [str(u) for u in uniques], signed=True)]
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


def _plain_codes(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes and labels of a :func:`label_values` column (None, an empty cell, is -1)."""
    labels = sorted({v for v in values if v is not None})
    index = {label: k for k, label in enumerate(labels)}
    codes = np.fromiter((-1 if v is None else index[v] for v in values), dtype=np.int64,
                        count=len(values))
    return codes, labels


def _encoded_pieces(chunks) -> list[_Piece]:
    """Every chunk of an Arrow string (or dictionary) column as a piece (Arrow's hashing)."""
    return [_dictionary_piece(chunk) for chunk in chunks]


def _compiled_text_pieces(batch: Batch, columns: Sequence[str]):
    r""":func:`_column_pieces` of a plain text CSV read by :mod:`bayescheck.models.csv_codes`, or None.

    None (then pyarrow reads the file) unless the result is what :func:`_arrow_text_pieces`
    gives: the compiled reader declines a ``"`` anywhere, a ``\r`` that does not end a line
    and a line with another number of fields than the header (on all of which pyarrow
    quotes, splits or fails differently); here a header it would split otherwise, a label
    that is not UTF-8 (pyarrow fails) or starts with a blank (pandas reads it then) and a
    batch without rows are declined. Empty lines are skipped and an empty cell is missing,
    as pyarrow does; labels come in order of first appearance, so after
    :func:`category_codes_as` the states and counts are pyarrow's.
    """
    from . import csv_codes

    if not columns or len(set(columns)) != len(columns) or csv_codes.library() is None:
        return None
    content = batch.content
    end = content.find(b"\n")
    header = content if end < 0 else content[:end]
    names = batch.columns
    if end < 0 or b"\r" in header[:-1] or header.count(b",") + 1 != len(names) \
            or b'"' in content:  # one memchr, where a quote would cost a whole parse first
        return None
    where = {name: j for j, name in enumerate(names)}
    if any(c not in where for c in columns):
        return None  # the pyarrow path words the error
    read = csv_codes.parse(content, end + 1, len(names), [where[c] for c in columns])
    if isinstance(read, str) or not len(read[0][0]):
        return None
    out = []
    for codes, spans in zip(*read, strict=True):
        try:
            labels = [content[at:at + n].decode("utf-8") for at, n in spans]
        except UnicodeDecodeError:
            return None
        if any(w[:1] in (" ", "\t") for w in labels):
            return None
        out.append([_Piece(codes, labels, signed=True)])
    return out


def _arrow_text_pieces(batch: Batch, columns: Sequence[str]):
    """:func:`_column_pieces` of a text CSV read by pyarrow, or None to use pandas."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    if not columns:
        return []
    try:
        table = pcsv.read_csv(
            pa.BufferReader(batch.content),
            read_options=pcsv.ReadOptions(column_names=batch.columns, skip_rows=1),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(columns),
                # dictionary-encoded while parsing, on pyarrow's threads
                column_types={c: pa.dictionary(pa.int32(), pa.string()) for c in columns},
                null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True))
    except Exception:  # noqa: BLE001 - the pandas path reads it or words the error
        return None
    if table.num_rows == 0:
        return None
    out = []
    for name in columns:
        pieces = _encoded_pieces(table.column(name).chunks)
        if any(w[:1] in (" ", "\t") or '"' in w for p in pieces for w in p.labels):
            return None
        out.append(pieces)
    return out


def _dictionary_piece(chunk) -> _Piece:
    """An Arrow string (or dictionary) array as a piece: its dictionary indices, no copy.

    Codes in order of first appearance (Arrow's hash-based dictionary encoding, in C++ with
    no Python object per value); a read-only view of Arrow's index buffer.
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
    return _Piece(values, encoded.dictionary.to_pylist(), missing=missing)


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
    out = _small_numeric(batch, columns, ones_first, bound)
    if out is None:
        out = _arrow_columns(batch, columns, ones_first, bound)
    if out is not None:
        return out
    values = _numeric_columns(batch, columns)
    out = np.empty((len(values), len(columns) + ones_first), order="F")
    if ones_first:
        out[:, 0] = 1.0
    out[:, int(ones_first):] = values
    if max_magnitude is not None:
        values = out[:, int(ones_first):]
        big = np.abs(values) > max_magnitude
        if big.any():
            i, j = np.argwhere(big)[0]
            raise DataError(f"value {values[i, j]:.6g} is too large: its square overflows the "
                            f"float64 sums of squares (limit {max_magnitude:.0e} in "
                            f"magnitude); rescale the column, for example divide it by a "
                            f"power of ten", path=batch.name, column=columns[j], row=int(i) + 1)
    return out


def _arrow_columns(batch: Batch, columns: Sequence[str], ones_first: bool,
                   bound: float) -> np.ndarray | None:
    """The columns read with pyarrow when every value is a number within +-bound, else None.

    None sends the caller to the pandas path, which reads the file as before and words the
    error (or, for a CSV that pyarrow parses more strictly than pandas, such as blanks before
    a number, reads it).
    """
    if batch.content is None or "frame" in batch._cache or not columns:
        return None
    import pyarrow as pa
    try:
        if batch.kind == "parquet":
            import pyarrow.parquet as pq
            # ParquetFile.read, not read_table: the latter imports pandas.
            parquet = (batch._cache.pop("parquet_file", None)
                       or pq.ParquetFile(pa.BufferReader(batch.content)))
            table = parquet.read(columns=list(columns))
        else:
            import pyarrow.csv as pcsv
            names = batch.columns
            if len(set(columns) - set(names)):
                return None
            table = pcsv.read_csv(
                pa.BufferReader(batch.content),
                read_options=pcsv.ReadOptions(column_names=names, skip_rows=1),
                convert_options=pcsv.ConvertOptions(
                    include_columns=list(columns),
                    column_types={c: pa.float64() for c in columns}))
    except Exception:  # noqa: BLE001 - the pandas path words the error
        return None
    if table.num_columns != len(columns) or table.num_rows == 0:
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


def _numeric_columns(batch: Batch, columns: Sequence[str]) -> np.ndarray:
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


# ---- small plain CSV files, read without pyarrow or pandas ---------------------------------

#: Largest CSV file (bytes) read by splitting its lines (about 20,000 cells): below it,
#: importing pyarrow (or pandas) costs more than reading the file in Python.
SMALL_CSV = 256 * 1024

#: A number as ``pyarrow.csv`` and Python's ``float`` read it alike (both round correctly):
#: digits, an optional point and exponent, an optional minus; no blanks, no ``+``, no
#: ``inf`` / ``nan``, no digit separators.
_PLAIN_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

#: An integer as pandas reads it into an int64 column (at most 18 digits: no overflow).
PLAIN_INT = re.compile(r"-?\d{1,18}")

#: Cells pandas reads as missing by default (``pandas.read_csv``'s ``na_values``).
_PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                        "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                        "nan", "null"})


def _plain_table(batch: Batch) -> dict[str, list[str]] | None:
    """The cells of a small plain CSV batch, column name -> list of str; None otherwise.

    Plain: at most :data:`SMALL_CSV` bytes of UTF-8, no ``"`` anywhere (so a comma always
    separates two values), LF or CR LF line ends, no blank line but at the end, and
    as many values on every line as the header names.
    """
    if "plain" in batch._cache:
        return batch._cache["plain"]
    table = None
    content = batch.content
    if batch.kind == "csv" and content is not None and len(content) <= SMALL_CSV \
            and b'"' not in content and "frame" not in batch._cache:
        table = _split_plain(content, batch.name)
    batch._cache["plain"] = table
    return table


def _split_plain(content: bytes, name: str) -> dict[str, list[str]] | None:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        return None
    head, _, body = text.partition("\n")
    names = csv_header(head.encode(), name)
    lines = body.rstrip("\n").split("\n")
    if not lines or any(not line.strip() for line in lines):
        return None
    rows = [line.split(",") for line in lines]
    if any(len(row) != len(names) for row in rows):
        return None
    return {n: list(cells) for n, cells in zip(names, zip(*rows, strict=True), strict=True)}


def _small_numeric(batch: Batch, columns: Sequence[str], ones_first: bool,
                   bound: float) -> np.ndarray | None:
    """:func:`numeric_columns` of a small plain CSV, or None.

    None unless every value is a plain number within +-bound: the other readers then take the
    batch and word any error.
    """
    table = _plain_table(batch)
    if table is None or not columns or any(c not in table for c in columns):
        return None
    cells = [table[c] for c in columns]
    if not all(_PLAIN_NUMBER.fullmatch(v) for col in cells for v in col):
        return None
    out = np.empty((len(cells[0]), len(columns) + ones_first), order="F")
    if ones_first:
        out[:, 0] = 1.0
    for j, col in enumerate(cells, int(ones_first)):
        out[:, j] = [float(v) for v in col]
    if not (out.max() <= bound and out.min() >= -bound):
        return None
    return out


def is_plain_label(value: str, *, text: bool) -> bool:
    """Whether pandas reads this cell as exactly this string.

    Not missing, nor a number, a boolean, or a string with its leading blanks skipped. With
    ``text`` (every column read as strings, only an empty cell missing) any non-empty cell
    without leading blanks.
    """
    if not value or value[0].isspace():
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


def plain_cells(batch: Batch, column: str) -> list[str] | None:
    """A column of a small plain CSV batch as the text of its cells; None otherwise.

    The caller decides which cells it can interpret as pandas would, and leaves the batch to
    :attr:`Batch.frame` otherwise.
    """
    table = _plain_table(batch)
    return None if table is None else table.get(column)


def label_values(batch: Batch, column: str) -> np.ndarray | None:
    """A column of a small plain CSV batch as read for labels, or None.

    Returns
    -------
    numpy.ndarray or None
        Object array of str, one per row, with None for an empty cell of a ``text`` batch
        (what pandas reads as missing there); None when the batch is not a small plain CSV,
        the column is absent, or a cell might read differently in pandas (then use
        :attr:`Batch.frame`, which also words any error).
    """
    cells = plain_cells(batch, column)
    if cells is None:
        return None
    if not all(is_plain_label(v, text=batch.text) or (batch.text and v == "") for v in cells):
        return None
    out = np.empty(len(cells), dtype=object)
    out[:] = [v if v else None for v in cells]
    return out


def batch_rows(batch: Batch) -> int:
    """The number of rows of a batch (without pandas for a small plain CSV)."""
    table = _plain_table(batch)
    if table is not None:
        return len(next(iter(table.values())))
    return len(batch.frame)
