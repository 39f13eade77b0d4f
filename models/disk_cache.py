"""Bounded on-disk caches: marking an entry as used, and evicting old entries and leftovers.

bayescheck keeps two caches of compiled code that would otherwise only grow: nutpie's Numba
models (:mod:`bayescheck.inference.numba_cache`) and the precompiled header of PyTensor's C
modules (:mod:`bayescheck.inference.pytensor_pch`). An entry
goes dead when what it was compiled for changes (another source, compiler, flags, PyTensor or
Numba version, another model) and nothing would ever remove it. Each of them follows the
policy here:

* An entry's last use is the newest modification time of its files. A process that loads an
  entry sets that of one of its files (its marker) to now, at most once a day
  (:func:`mark_used`; otherwise a load costs one ``stat`` more), while it holds a shared lock
  on it (:func:`using`, or :func:`hold` for the process's whole life).
* Only a process that has just written a new entry into a cache evicts from it (a run that
  only loads does nothing more): every other entry not used for :data:`MAX_AGE_SECONDS`
  (31 days, PyTensor's own age for deleting its compiled modules), then, least recently used
  first, entries until the cache holds no more than its cap of bytes, never one used in the
  last :data:`FRESH_SECONDS` (an hour) nor the new one (:func:`evict`). Temporary files older
  than :data:`FRESH_SECONDS` whose writer is gone (a compile killed before its rename) are
  removed too (:func:`remove_temporaries`).
* An entry is removed under an exclusive lock on its marker taken without waiting, after its
  age is looked at again: an entry another process is loading (which holds the shared lock)
  is left, and a process that opened the marker just before it was removed sees that the file
  it locked is no longer the one at that path (:func:`using` then opens it anew).
* Every failure of an eviction (a file that vanished meanwhile, one that cannot be removed, a
  lock that cannot be had) is silent: the entry is left as it is, or was already gone.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["FRESH_SECONDS", "MARK_EVERY_SECONDS", "MAX_AGE_SECONDS", "Entry", "evict", "hold",
           "mark_used", "remove_temporaries", "using", "writer_alive", "writer_pid"]

#: An entry not used for this long is removed when a new entry is written (31 days).
MAX_AGE_SECONDS = 31 * 86400.0
#: A loaded entry's marker is set to now when it is older than this (a day).
MARK_EVERY_SECONDS = 86400.0
#: Never evicted for the size cap when used more recently; temporary files younger are left.
FRESH_SECONDS = 3600.0

# Markers held with a shared lock until the process exits (see hold()).
_HELD: list[int] = []


class Entry:
    """One entry of a cache: its files, removed together.

    Parameters
    ----------
    key : str
        Its name within the cache (what :func:`evict`'s ``keep`` names).
    files : list of pathlib.Path
        Every file of the entry (the marker included, if it exists).
    marker : pathlib.Path, optional
        The file locked while the entry is loaded (:func:`using`); locked exclusively before
        the entry is removed. None when no process locks this kind of entry.
    create_marker : bool
        Whether the marker is created when missing (so that a process loading the entry
        meanwhile locks the same file); otherwise a missing marker means the entry is gone.
    directory : pathlib.Path, optional
        A directory removed after the files, when it is then empty.
    """

    # a plain class: a dataclass costs a millisecond to define, on the CSV reader's path
    __slots__ = ("create_marker", "directory", "files", "key", "marker", "size", "used")

    def __init__(self, key: str, files: list[Path], marker: Path | None = None,
                 create_marker: bool = False, directory: Path | None = None):
        self.key, self.files, self.marker = key, files, marker
        self.create_marker, self.directory = create_marker, directory
        self.used: float | None = None
        self.size = 0

    def __repr__(self) -> str:
        return f"Entry({self.key!r}, {len(self.files)} files)"


def mark_used(path: Path, mtime: float | None = None) -> None:
    """Set ``path``'s modification time to now if it is older than a day (never raises).

    Parameters
    ----------
    path : pathlib.Path
        The entry's marker.
    mtime : float, optional
        Its modification time, when the caller has just read it.
    """
    try:
        if mtime is None:
            mtime = os.stat(path).st_mtime
        if time.time() - mtime > MARK_EVERY_SECONDS:
            os.utime(path)
    except OSError:
        pass  # a read-only or shared cache: the entry may be evicted earlier, nothing worse


def _lock_shared(path: Path, create: bool) -> int | None:
    """A descriptor of ``path`` holding a shared lock, that file still being at ``path``.

    None when the file is missing (and not to be created) or cannot be opened. When locks
    are not supported, the descriptor holds none.
    """
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | (os.O_CREAT if create else 0), 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:  # no locks on this file system: as before, unprotected
            mark_used(path)
            return fd
        try:
            held, there = os.fstat(fd), os.stat(path)
            if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino):
                mark_used(path, held.st_mtime)
                return fd
        except OSError:
            pass
        os.close(fd)  # removed (evicted) while we waited: the file at the path is another
    return None


@contextmanager
def using(path: Path, create: bool = False) -> Iterator[bool]:
    """Hold a shared lock on the entry's marker ``path`` while its entry is loaded.

    Marks the entry as used (:func:`mark_used`). An evicting process does not remove an
    entry whose marker is locked so.

    Parameters
    ----------
    path : pathlib.Path
        The marker.
    create : bool
        Create the marker if it is missing.

    Yields
    ------
    bool
        Whether the marker is there (False: the entry is gone, or the marker cannot be
        opened).
    """
    fd = _lock_shared(path, create)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)


def hold(path: Path, create: bool = True) -> bool:
    """As :func:`using`, with the lock kept until this process (and its forks) exit.

    For an entry another program reads as long as the process runs (the precompiled header,
    read by every ``g++`` run). Returns whether the marker is held.
    """
    fd = _lock_shared(path, create)
    if fd is None:
        return False
    _HELD.append(fd)
    return True


def writer_pid(name: str, prefix: str) -> int | None:
    """The process id in a temporary file's name ``PREFIX PID.rest`` (None when it has none)."""
    pid = name[len(prefix):].split(".")[0] if name.startswith(prefix) else ""
    return int(pid) if pid.isdigit() else None


def writer_alive(pid: int | None) -> bool:
    """Whether the process ``pid`` (a temporary file's writer) may still be running here.

    None (a name without the writer's process id) counts as gone: age alone decides.
    """
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_temporaries(temporaries: Iterable[tuple[Path, int | None]],
                       now: float | None = None) -> int:
    """Remove the temporary files older than :data:`FRESH_SECONDS` whose writer is gone.

    Parameters
    ----------
    temporaries : iterable of (pathlib.Path, int or None)
        Each file and the process id of its writer, when its name holds it. Every writer
        here renames or removes its file within minutes (a compile has a timeout), so an hour
        without a change means it was killed.
    now : float, optional
        The time to compare with (default: now).

    Returns
    -------
    int
        How many were removed.
    """
    now = time.time() if now is None else now
    removed = 0
    for path, pid in temporaries:
        try:
            if now - os.stat(path).st_mtime <= FRESH_SECONDS or writer_alive(pid):
                continue
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed


def _last_use(files: Iterable[Path]) -> tuple[float | None, int]:
    """The newest modification time of ``files`` (None if none is left) and their bytes."""
    newest, size = None, 0
    for path in files:
        try:
            found = os.stat(path)
        except OSError:
            continue  # vanished meanwhile
        newest = found.st_mtime if newest is None else max(newest, found.st_mtime)
        size += found.st_size
    return newest, size


def _remove(entry: Entry, older_than: float, now: float) -> bool:
    """Remove ``entry`` if no process holds its marker and it is still unused long enough."""
    fd = None
    if entry.marker is not None:
        # created if missing, so that a process loading the entry meanwhile locks this file
        flags = os.O_RDONLY | (os.O_CREAT if entry.create_marker else 0)
        try:
            fd = os.open(entry.marker, flags, 0o600)
        except OSError:
            return False  # removed meanwhile, or an unwritable cache
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held, there = os.fstat(fd), os.stat(entry.marker)
            except OSError:
                return False  # in use, locks not supported, or removed meanwhile
            if (held.st_dev, held.st_ino) != (there.st_dev, there.st_ino):
                return False
        used, _ = _last_use(entry.files)  # not the marker if just created: not listed
        if used is not None and now - used <= older_than:
            return False  # used since it was looked at
        gone = all([_unlink(path) for path in entry.files if path != entry.marker])
        if entry.marker is not None:
            _unlink(entry.marker)  # last: a process waiting on it then finds it gone
        if entry.directory is not None:
            try:
                entry.directory.rmdir()
            except OSError:
                pass
        return gone
    finally:
        if fd is not None:
            os.close(fd)


def _unlink(path: Path) -> bool:
    """Remove ``path``; whether it is gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def evict(entries: Iterable[Entry], *, keep: Iterable[str] = (), max_bytes: int | None = None,
          max_age: float = MAX_AGE_SECONDS, now: float | None = None) -> list[str]:
    """Remove the entries unused for ``max_age``, then the least recently used over the cap.

    Parameters
    ----------
    entries : iterable of Entry
        Every entry of one cache.
    keep : iterable of str
        Keys never removed (the entry just written).
    max_bytes : int, optional
        The cap: entries are removed, least recently used first, until the cache holds no
        more (entries used in the last :data:`FRESH_SECONDS`, and entries in use, are left
        even then).
    max_age : float
        Seconds without use after which an entry is removed.
    now : float, optional
        The time to compare with (default: now).

    Returns
    -------
    list of str
        The keys of the entries removed. Never raises for a file that vanished or that
        cannot be removed: that entry is left (not counted as removed).
    """
    now = time.time() if now is None else now
    keep = set(keep)
    found = []
    for entry in entries:
        entry.used, entry.size = _last_use(entry.files)
        if entry.used is not None:
            found.append(entry)
    found.sort(key=lambda e: e.used)
    total = sum(e.size for e in found)
    removed = []
    for entry in found:
        if entry.key in keep:
            continue
        if now - entry.used > max_age:
            older_than = max_age
        elif max_bytes is not None and total > max_bytes and now - entry.used > FRESH_SECONDS:
            older_than = FRESH_SECONDS
        else:
            continue
        if _remove(entry, older_than, now):
            total -= entry.size
            removed.append(entry.key)
    return removed
