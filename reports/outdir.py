"""Output folders: checked before use, locked against a second writer, no stale results.

Every command that writes into ``--out`` enters :func:`output_folder` first. It creates the
folder (a clear exit-2 error when that is impossible: the path is a file, a parent is not
writable, ...), takes an exclusive lock on ``DIR/.bayescheck.lock`` (a second process on the
same folder gets exit 2 "in use by process N"; the kernel drops the lock when a process dies,
so a crash never leaves the folder locked; a symbolic link under that name is refused, never
followed) and removes the previous run's result files, so a run that fails half-way cannot
leave an older ``posterior.json`` that looks current. Only files the folder's manifest lists
(:mod:`bayescheck.data.output_files`) are removed: a result name held by a file bayescheck
did not write (the user's own ``posterior.json`` in ``--out .``) is refused before anything
is removed or written.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bayescheck.data.output_files import foreign_files, open_lock, remove_listed
from bayescheck.models.errors import BayescheckError

__all__ = ["LOCK_NAME", "output_folder", "prepare_folder"]

#: The lock file inside an output folder.
LOCK_NAME = ".bayescheck.lock"


def prepare_folder(out: Path, *, option: str = "--out") -> Path:
    """Create ``out`` (and its parents) and check that files can be written in it.

    Raises
    ------
    BayescheckError
        Naming the folder and why it cannot be used.
    """
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise BayescheckError(f"{option} {out}: is a symbolic link to {os.readlink(out)}, "
                              f"which does not exist; create the folder it points to, or "
                              f"name another folder")
    if out.exists() and not out.is_dir():
        raise BayescheckError(f"{option} {out}: exists and is not a folder; name a folder "
                              f"(it is created when missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a parent is a file
        raise BayescheckError(f"{option} {out}: cannot create the folder: a parent is a "
                              f"file") from None
    except OSError as exc:
        raise BayescheckError(f"{option} {out}: cannot create the folder: "
                              f"{exc.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise BayescheckError(f"{option} {out}: the folder is not writable")
    return out


@contextmanager
def output_folder(out: Path, *, results: Iterable[str] = (),
                  option: str = "--out") -> Iterator[Path]:
    """Use ``out`` as this process's output folder for the duration of the block.

    Parameters
    ----------
    out : pathlib.Path
        The folder.
    results : iterable of str
        File names of the results this command writes; the previous run's copies are
        removed once the lock is held (a checkpoint is not a result: ``--resume`` needs it).
        Only copies the folder's manifest lists are removed; a file under one of these
        names that bayescheck did not write is refused.
    option : str
        The option that named the folder, for messages.

    Raises
    ------
    BayescheckError
        When the folder cannot be used, another process holds it, or it holds files under
        the names of ``results`` that bayescheck did not write.
    """
    out = prepare_folder(out, option=option)
    fd = open_lock(out / LOCK_NAME)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                raise
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise BayescheckError(f"{option} {out}: in use by process {holder} (another "
                                  f"bayescheck writes there); wait for it or choose another "
                                  f"folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        results = tuple(results)
        foreign = foreign_files(out, results)
        if foreign:
            raise BayescheckError(f"{option} {out}: holds {', '.join(foreign)}, which "
                                  f"bayescheck did not write there; this command would "
                                  f"replace {'them' if len(foreign) > 1 else 'it'}: move "
                                  f"{'them' if len(foreign) > 1 else 'it'} away or choose "
                                  f"another folder")
        remove_listed(out, results)
        yield out
    finally:
        os.close(fd)  # releases the lock
