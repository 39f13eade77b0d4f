"""Files named by an fsspec URL (``s3://bucket/part-0.parquet``), and the files' natural order."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from .errors import DataError

__all__ = ["RemoteFile", "data_file", "is_url", "natural_key", "remote_files"]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")


def is_url(path) -> bool:
    """True for an fsspec URL (``s3://bucket/key``, ``memory://...``), not for a local path."""
    return _URL.match(str(path)) is not None


def natural_key(path) -> list:
    """Sort key of a file by its name, numbers by value: ``2.csv`` before ``10.csv``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


class RemoteFile:
    """A file named by an fsspec URL, read through fsspec.

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


def remote_files(pattern: str) -> list[RemoteFile]:
    """The files an fsspec URL or URL glob names, in natural order.

    Raises
    ------
    DataError
        When fsspec or the protocol's package is missing, the URL cannot be opened or
        listed, or nothing matches.
    """
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
    return sorted((RemoteFile(fs.unstrip_protocol(p)) for p in found), key=natural_key)
