"""Where the data come from: one CSV or Parquet file, a glob of batch files, or frames.

A :class:`DataSource` yields :class:`~bayescheck.data.batch.Batch` objects one at a time, in
natural sorted order (``2.csv`` before ``10.csv``), so a stream of files is never held in
memory together. Each batch carries a fingerprint of its bytes, so a batch fed twice can be
recognised. Every problem is a :class:`~bayescheck.data.errors.DataError` naming the file,
the column and the 1-based data row.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .batch import SUFFIXES, Batch, file_kind, read_batch, read_bytes, read_local_header
from .errors import DataError
from .fingerprints import file_fingerprint, frame_fingerprint
from .remote import RemoteFile, is_url, natural_key, remote_files

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DataSource"]


class DataSource:
    """One data file, a glob of batch files, or frames given from Python.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        A file or a glob pattern (``batches/*.csv``), or an fsspec URL (``s3://...``).
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
            files = remote_files(self.pattern)
        else:
            pattern = Path(self.pattern)
            if not pattern.is_absolute():
                pattern = self.base / pattern
            if glob.has_magic(str(pattern)):
                files = sorted((Path(p) for p in glob.glob(str(pattern))
                                if not Path(p).is_dir()), key=natural_key)
                if not files:
                    raise DataError("no file matches this pattern", path=pattern)
            else:
                if not pattern.exists():
                    raise DataError("data file not found", path=pattern)
                files = [pattern]
        for f in files:
            if f.suffix.lower() not in SUFFIXES:
                raise DataError(f"unsupported file type {f.suffix!r}; expected .csv or .parquet",
                                path=f)
            if isinstance(f, Path):
                _refuse_special(f)
        return files

    def columns(self) -> list[str]:
        """Column names of the first batch, read without loading its rows where possible."""
        if self._frames is not None:
            return [str(c) for c in self._frames[0].columns]
        first = self.files()[0]
        if isinstance(first, RemoteFile):
            return read_batch(first).columns
        if SUFFIXES[first.suffix.lower()] == "parquet":
            import pyarrow.parquet as pq
            try:
                return list(pq.read_schema(first).names)
            except Exception as exc:  # noqa: BLE001 - any reader failure is bad data
                raise DataError(f"cannot read Parquet schema: {exc}", path=first) from None
        return read_local_header(first)

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
        one (:func:`bayescheck.inference.scale.streaming.run_stream`). The batches in ``skip`` are
        verified here, as the iteration reaches them.
        """
        skip = skip or {}
        if self._frames is not None:
            items = [(f"frame {i}", frame) for i, frame in enumerate(self._frames)]
            _all_present(skip, {name for name, _ in items})
            for name, frame in items:
                digest = frame_fingerprint(frame)
                if not _skipped(name, digest, skip):
                    yield partial(Batch, name, digest, frame)
            return
        # The same file may be named differently from one run to the next (the spec named
        # by a relative path, an absolute one, a symbolic link): match on the real path.
        real = {_real_path(name): name for name in skip}
        files = self.files()
        _all_present({_real_path(name): name for name in skip},
                     {_real_path(f) for f in files})
        for f in files:
            name = real.get(_real_path(f))
            if name is not None:
                _skipped(name, file_fingerprint(read_bytes(f), SUFFIXES.get(f.suffix.lower())),
                         skip)
                continue
            yield partial(read_batch, f, text=self.text)

    def read_all(self) -> pd.DataFrame:
        """Every batch in one frame (for the NUTS check, which needs the rows together)."""
        import pandas as pd
        return pd.concat([b.frame for b in self.batches()], ignore_index=True)


def _all_present(skip: Mapping[str, str], present: set[str]) -> None:
    """Refuse a resumed stream whose checkpoint counted a batch the source no longer has.

    Its rows are in the checkpoint's state, so the result would hold data that is gone.
    """
    for key, name in skip.items():
        if key not in present:
            raise DataError("absorbed into the checkpoint but no longer matched by [data] "
                            "path (deleted or renamed?); start afresh without --resume, or "
                            "put the file back", path=name)


def _refuse_special(path: Path) -> None:
    """Refuse a name that is neither a regular file nor a named pipe, links followed.

    ``/dev/zero`` would be read for ever (a named pipe is read as its writer sends it); the
    readers check again on the file they open (:func:`bayescheck.data.batch.read_local`).
    """
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise DataError(f"not a regular file ({file_kind(mode)}); a data file must be a CSV "
                        f"or Parquet file", path=path)


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
