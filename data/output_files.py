"""Files bayescheck writes: one opener, never through a link, whole or not at all.

Every file bayescheck writes into an output folder (``posterior.json``, ``checkpoint.npz``,
``posterior.nc``, the summaries and reports) goes through :func:`write_file`: the content is
written to a temporary file made by :func:`tempfile.mkstemp` in the same folder (a fresh
name, opened with ``O_EXCL | O_NOFOLLOW``), flushed to disk, and renamed over the final name
with :func:`os.replace`. A rename replaces a symbolic link planted under the final name
instead of following it, so in a shared folder (0777, 1777) another user's link never makes
bayescheck write into a file of their choosing; a crash leaves the old file or the new one.
The lock is opened by :func:`open_lock`, with ``O_NOFOLLOW``.

Each folder keeps a manifest of the names bayescheck wrote there
(:data:`MANIFEST_NAME`). A file that exists under a name the manifest does not list is the
user's: it is neither replaced nor removed (:func:`foreign_files`, :func:`remove_listed`).

Any :class:`OSError` while writing (a full disk, a read-only folder) becomes a
:class:`~bayescheck.data.errors.BayescheckError` naming the file, and the temporary file is
removed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from .errors import BayescheckError

__all__ = ["MANIFEST_NAME", "flush_to_disk", "foreign_files", "listed_files", "open_lock",
           "remove_listed", "write_file"]

#: The list of the files bayescheck wrote in a folder, kept in that folder.
MANIFEST_NAME = ".bayescheck-manifest.json"
MANIFEST_FORMAT = 1


def flush_to_disk(fh: BinaryIO) -> None:
    """Flush ``fh``'s buffers and the kernel's cache of it to the disk.

    A full disk is often reported here rather than by the write (delayed allocation).
    """
    fh.flush()
    os.fsync(fh.fileno())


def _umask() -> int:
    """The process's umask, read without changing it (Linux); 0o022 where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def listed_files(folder: Path) -> set[str]:
    """The names the manifest of ``folder`` lists (empty when there is none or it is damaged).

    A damaged or foreign manifest lists nothing: no file is then taken for bayescheck's.
    """
    try:
        fd = os.open(Path(folder) / MANIFEST_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return set()
    try:
        with os.fdopen(fd, "rb") as fh:
            content = json.loads(fh.read(1 << 20))
    except (OSError, ValueError):
        return set()
    files = content.get("files") if isinstance(content, dict) else None
    if content.get("format") != MANIFEST_FORMAT or not isinstance(files, list):
        return set()
    return {f for f in files if isinstance(f, str) and f and "/" not in f}


def _register(folder: Path, name: str) -> None:
    listed = listed_files(folder)
    if name in listed:
        return
    text = json.dumps({"format": MANIFEST_FORMAT, "files": sorted(listed | {name})}, indent=1)
    _replace(Path(folder) / MANIFEST_NAME, (text + "\n").encode())


def foreign_files(folder: Path, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that exist in ``folder`` (a link too) and its manifest does not list."""
    listed = listed_files(folder)
    return [n for n in names if n not in listed and os.path.lexists(Path(folder) / n)]


def remove_listed(folder: Path, names: Iterable[str]) -> None:
    """Remove those of ``names`` that the manifest of ``folder`` lists; leave the others.

    A link is removed itself, never its target.

    Raises
    ------
    BayescheckError
        When a listed file cannot be removed, naming it.
    """
    listed = listed_files(folder)
    for name in names:
        if name in listed:
            path = Path(folder) / name
            try:
                path.unlink(missing_ok=True)
            except IsADirectoryError:
                raise BayescheckError(f"{path}: is a folder where bayescheck wrote a file; "
                                      f"remove it or choose another output folder") from None
            except OSError as exc:
                raise BayescheckError(f"{path}: cannot remove the previous run's file: "
                                      f"{exc.strerror}") from None


def _replace(path: Path, content: bytes | str | Callable[[BinaryIO], None]) -> None:
    """Write ``content`` to a fresh temporary file beside ``path``, then rename it."""
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise BayescheckError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as a plain open would create it
        with os.fdopen(fd, "w+b") as fh:  # h5netcdf reads back what it writes
            if callable(content):
                content(fh)
            else:
                fh.write(content.encode() if isinstance(content, str) else content)
            flush_to_disk(fh)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise BayescheckError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise
    _sync_folder(folder)


def write_file(path: str | os.PathLike, content: bytes | str | Callable[[BinaryIO], None],
               *, manifest: bool = True) -> None:
    """Write a whole file through a temporary one and a rename, never through a link.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    content : bytes, str or callable
        The content (text is written as UTF-8), or a function that writes it into the open
        binary file it is given (a netCDF writer, a CSV writer).
    manifest : bool
        Record the name in the folder's manifest, and refuse to replace a file of that name
        the manifest does not list (the user's own). False for a file the user named
        (``predict --out FILE``).

    Raises
    ------
    BayescheckError
        Naming the file: it cannot be written (a full disk, a read-only folder: nothing is
        left behind), or it exists and bayescheck did not write it.
    """
    path = Path(path)
    if manifest:
        if foreign_files(path.parent, [path.name]):
            raise BayescheckError(f"{path}: exists and was not written by bayescheck (not in "
                                  f"{MANIFEST_NAME}); move it away or choose another output "
                                  f"folder")
        _register(path.parent, path.name)
    _replace(path, content)


def open_lock(path: str | os.PathLike) -> int:
    """Open (or create) a lock file for reading and writing, refusing a symbolic link.

    Returns
    -------
    int
        The file descriptor.

    Raises
    ------
    BayescheckError
        When ``path`` is a link (never followed) or cannot be opened, naming it.
    """
    path = Path(path)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise BayescheckError(f"{path}: is a symbolic link; bayescheck does not follow "
                                  f"links in its output folder: remove it") from None
        raise BayescheckError(f"{path}: cannot open the lock: {exc.strerror or exc}") from None
