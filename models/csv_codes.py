r"""A compiled reader of plain CSV files into per-column integer codes (``csv_codes.c``).

pyarrow's CSV parse into dictionary columns was most of ``bayescheck fit``'s time on a large
categorical file (benchmarks/NETWORKS.md: 2.3-3.4 s of 2.9-4 s CPU for 1e6 rows of the
37-node Alarm network). The C routine next to this module does the same work for a plain
file in one pass over the bytes: it splits at ``,`` and line ends and looks every cell up in
a per-column open-addressing table of the labels seen so far (compared byte for byte),
writing ``int8`` codes (``int32`` when a column has more than 128 labels). A large file is
cut after line ends into parts parsed at once on several threads (:func:`parse`). It declines (a
status, never a guess) on a ``"`` byte anywhere, a ``\r`` that does not end a line, or a
line with another number of fields than the header. :mod:`bayescheck.models.data` decides what else to
decline (labels that are not UTF-8, or that start with a blank) so that what it accepts reads
exactly as pyarrow reads it.

The routine is compiled on first use with the system C compiler (``$CC``, else ``cc``)
into the user's cache (``$XDG_CACHE_HOME/bayescheck``, else ``~/.cache/bayescheck``), keyed
by a hash of the source, the compiler's ``--version`` and the flags, and loaded with
:mod:`ctypes`. The library is written under a temporary name (``mkstemp``), flushed, and
renamed to a name that holds the hash of its own bytes, so two processes compiling at once
each rename a complete file, and a file truncated or damaged later fails its hash check
before it is loaded (it is then deleted and compiled again). A compile that fails, or a
library that does not load (a cache on a ``noexec`` mount), is remembered for its key
(``csv_codes-KEY.failed``, holding the compiler's message) and not tried again for
:data:`RETRY_SECONDS` (a day: a full disk or missing headers may be fixed meanwhile;
delete the file to try at once). Every failure (no
compiler, a read-only cache, a library that does not load) means "not available", and the
caller reads the file with pyarrow: never an error. ``BAYESCHECK_CSV_READER=pyarrow``
turns the compiled reader off (``auto``, the default, uses it when it can be built).

The cache is bounded as :mod:`bayescheck.models.disk_cache` describes: a library is locked (shared)
while it is checked and loaded, and its modification time set to now at most once a day;
when a process compiles (a new source or compiler), it removes the libraries and
``.failed`` markers not used for 31 days, then the least recently used libraries beyond
:data:`CACHE_MAX_BYTES`, and the temporary files (``.csv_codes-PID.*.so``) of compiles
killed more than an hour ago.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .parallel import on_threads
from .settings import choice, usable_cores

__all__ = ["SETTINGS", "cache_dir", "library", "parse", "reader_setting"]

#: The values ``BAYESCHECK_CSV_READER`` may take.
SETTINGS = ("auto", "pyarrow")
#: Status codes of ``bc_parse`` (``csv_codes.c``).
STATUS = {0: "ok", 1: "a quote", 2: "a carriage return inside a line",
          3: "a line with another number of fields", 4: "more rows than counted",
          5: "out of memory", 6: "unsupported", 7: "more than 128 labels in a column"}
_SOURCE = Path(__file__).with_name("csv_codes.c")
_FLAGS = ("-O3", "-shared", "-fPIC")
_ABI = 3
_PREFIX = "csv_codes-"
#: A failed build is tried again after this long (seconds).
RETRY_SECONDS = 86400.0
#: The libraries kept are evicted, least recently used first, beyond this many bytes (a
#: library is about 20 KB).
CACHE_MAX_BYTES = 8 << 20

# The loaded library of this process: unset, None (not available) or the ctypes library.
_LIBRARY: list = []
_LOCK = threading.Lock()


def reader_setting() -> str:
    """``BAYESCHECK_CSV_READER`` (``auto`` or ``pyarrow``), ``"auto"`` when unset.

    Raises
    ------
    SpecError
        When the variable holds anything else.
    """
    return choice("BAYESCHECK_CSV_READER", SETTINGS)


def cache_dir() -> Path:
    """Where the compiled library is kept.

    ``$XDG_CACHE_HOME/bayescheck``, else ``~/.cache/bayescheck``.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bayescheck"


def _compiler() -> list[str] | None:
    """The C compiler's command (``$CC`` split like a shell would, else ``cc``, ``gcc``)."""
    cc = os.environ.get("CC", "").strip()
    if cc:
        try:
            command = shlex.split(cc)
        except ValueError:
            return None
        return command if command and shutil.which(command[0]) else None
    for name in ("cc", "gcc"):
        path = shutil.which(name)
        if path:
            return [path]
    return None


def _key(compiler: list[str], source: bytes) -> str | None:
    """A hash of the source, the compiler's identity and version, the flags and platform."""
    try:
        version = subprocess.run([*compiler, "--version"], capture_output=True, timeout=30,
                                 check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    digest = hashlib.sha256()
    for part in (source, version, " ".join(compiler).encode(), " ".join(_FLAGS).encode(),
                 sys.platform.encode(), os.uname().machine.encode()):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()[:24]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:32]


def _load(path: Path):
    """The ctypes library at ``path`` with its functions declared, or None."""
    import ctypes

    try:
        lib = ctypes.CDLL(str(path))
        if lib.bc_abi() != _ABI:
            return None
    except (OSError, AttributeError):
        return None
    i32, i64, ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p
    lib.bc_count_newlines.argtypes = [ctypes.c_char_p, i64, i64]
    lib.bc_count_newlines.restype = i64
    lib.bc_parse.argtypes = [ctypes.c_char_p, i64, i64, i32, ctypes.POINTER(ptr), i32, i64,
                             ctypes.POINTER(i32), ctypes.POINTER(i64)]
    lib.bc_parse.restype = ptr
    lib.bc_labels_count.argtypes = [ptr, i32]
    lib.bc_labels_count.restype = i32
    lib.bc_labels.argtypes = [ptr, i32, ptr, ptr]
    lib.bc_labels.restype = None
    lib.bc_recode.argtypes = [ptr, i32, i64, ptr]
    lib.bc_recode.restype = None
    lib.bc_free.argtypes = [ptr]
    lib.bc_free.restype = None
    return lib


def _cached(folder: Path, key: str):
    """A library of ``key`` already in ``folder`` whose bytes match its name, or None.

    A file whose bytes do not match (truncated, damaged) is deleted.
    """
    from . import disk_cache  # here: every command imports this module

    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        if not (name.startswith(_PREFIX + key + "-") and name.endswith(".so")):
            continue
        path = folder / name
        # locked while it is checked and loaded: an evicting process leaves it meanwhile
        with disk_cache.using(path) as there:
            if not there:
                continue
            try:
                good = _digest(path) == name[len(_PREFIX + key) + 1:-3]
            except OSError:
                continue
            if not good:
                try:
                    path.unlink()
                except OSError:
                    pass
                continue
            lib = _load(path)
        if lib is not None:
            return lib
    return None


def _failed_recently(marker: Path) -> bool:
    """Whether a build of this key failed less than :data:`RETRY_SECONDS` ago."""
    try:
        return time.time() - marker.stat().st_mtime < RETRY_SECONDS
    except OSError:
        return False


def _remember_failure(marker: Path, why: bytes) -> None:
    try:
        marker.write_bytes(why[-4000:])
    except OSError:
        pass


def _build(folder: Path, key: str, compiler: list[str]):
    """Compile the source into ``folder`` (atomically) and load it; None on any failure."""
    from . import disk_cache
    failed = folder / f"{_PREFIX}{key}.failed"
    if _failed_recently(failed):
        return None
    # named with this process's id, so that an eviction can tell whether its writer is gone
    fd, tmp = tempfile.mkstemp(prefix=f".{_PREFIX}{os.getpid()}.", suffix=".so", dir=folder)
    os.close(fd)
    tmp = Path(tmp)
    final = None
    try:
        done = subprocess.run([*compiler, *_FLAGS, "-o", str(tmp), str(_SOURCE)],
                              capture_output=True, timeout=120)
        if done.returncode != 0:
            _remember_failure(failed, done.stderr or done.stdout or b"failed")
            return None
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        final = folder / f"{_PREFIX}{key}-{_digest(tmp)}.so"
        os.replace(tmp, final)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass
        _evict(folder, keep=final)
    with disk_cache.using(final) as there:
        lib = _load(final) if there else None
    if lib is None and there:  # it compiles but does not load here (a noexec cache?)
        _remember_failure(failed, b"compiled, but the library does not load")
    return lib


def _evict(folder: Path, keep: Path | None) -> None:
    """Remove dead libraries, markers and temporary files from ``folder`` (never raises).

    Libraries and ``.failed`` markers unused for 31 days, then the least recently used
    libraries beyond :data:`CACHE_MAX_BYTES` (but not ``keep``, the one just written), and
    the temporary files of compiles killed more than an hour ago
    (:mod:`bayescheck.models.disk_cache`). A ``.failed`` marker is never marked as used: its time is
    when the build failed (:data:`RETRY_SECONDS`).
    """
    from . import disk_cache
    try:
        names = os.listdir(folder)
        temporaries, libraries, markers = [], [], []
        for name in names:
            if name.startswith("." + _PREFIX) and name.endswith(".so"):
                temporaries.append((folder / name, disk_cache.writer_pid(name, "." + _PREFIX)))
            elif name.startswith(_PREFIX) and name.endswith(".so"):
                libraries.append(disk_cache.Entry(name, [folder / name], marker=folder / name))
            elif name.startswith(_PREFIX) and name.endswith(".failed"):
                markers.append(disk_cache.Entry(name, [folder / name]))
        disk_cache.remove_temporaries(temporaries)
        disk_cache.evict(markers)
        disk_cache.evict(libraries, keep=[keep.name] if keep else [],
                         max_bytes=CACHE_MAX_BYTES)
    except Exception:  # noqa: BLE001 - eviction only saves disk space
        pass


def library():
    """The compiled reader (a :class:`ctypes.CDLL`), built on first use.

    None when it cannot be had: turned off, no compiler, the compile failed, the cache is
    not writable. Settled once per process.
    """
    if _LIBRARY:
        return _LIBRARY[0]
    with _LOCK:  # read-ahead threads may ask at once: one of them compiles
        if _LIBRARY:
            return _LIBRARY[0]
        lib = None
        if reader_setting() == "auto":
            try:
                lib = _find_or_build()
            except Exception:  # noqa: BLE001 - any failure: pyarrow reads the file
                lib = None
        _LIBRARY.append(lib)
    return lib


def _find_or_build():
    compiler = _compiler()
    if compiler is None:
        return None
    source = _SOURCE.read_bytes()
    key = _key(compiler, source)
    if key is None:
        return None
    folder = cache_dir()
    lib = _cached(folder, key)
    if lib is not None or _failed_recently(folder / f"{_PREFIX}{key}.failed"):
        return lib
    # the user's alone: a library planted there would be loaded and run
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _build(folder, key, compiler)


#: Files at least this large are parsed in parts on several threads (one per usable core, at
#: most :data:`MAX_PARTS`), each part at least this large.
SPLIT_BYTES = 8 << 20
MAX_PARTS = 4


def parse(content: bytes, start: int, ncols: int, wanted: Sequence[int]
          ) -> tuple[list[np.ndarray], list[list[tuple[int, int]]]] | str:
    """The codes of the ``wanted`` columns of a plain CSV's rows, or why not.

    A large file is cut after line ends into parts parsed at once on several threads (the C
    routine runs without the GIL), each with its own tables of labels; the tables are then
    merged in part order, and a later part's codes renumbered, so that codes and labels are
    those of one pass over the whole file (labels in order of first appearance).

    Parameters
    ----------
    content : bytes
        The whole file.
    start : int
        Offset of the first byte after the header line.
    ncols : int
        Fields on every line (the header's).
    wanted : sequence of int
        0-based columns to return, distinct.

    Returns
    -------
    (codes, labels) or str
        Per wanted column, the codes (``-1`` for an empty cell; ``int8`` when no column has
        more than 128 labels, else ``int32``) and the labels as ``(offset, length)`` of each
        one's first cell in ``content``, in order of code; or, when the file is not plain (or
        the library is not available), the reason.
    """
    lib = library()
    if lib is None:
        return "the compiled reader is not available"
    bounds = _parts(content, start)
    read = _parse_parts(lib, content, bounds, ncols, wanted, np.int8)
    if read == STATUS[7]:  # a column of many labels: 4-byte codes for all
        read = _parse_parts(lib, content, bounds, ncols, wanted, np.int32)
    return read


def _parts(content: bytes, start: int) -> list[tuple[int, int]]:
    """``[start, len(content))`` cut just after line ends into :func:`parse`'s parts."""
    size = len(content) - start
    count = min(usable_cores(), MAX_PARTS, max(1, size // max(SPLIT_BYTES, 1)))
    cuts = [start]
    for i in range(1, count):
        at = content.find(b"\n", max(cuts[-1], start + size * i // count))
        if at < 0 or at + 1 >= len(content):
            break
        cuts.append(at + 1)
    cuts.append(len(content))
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _parse_parts(lib, content, bounds, ncols, wanted, dtype):
    """Every part of ``bounds`` parsed, then merged (:func:`parse`'s result, or why not).

    The first part is parsed on this thread, each other one on a thread of its own.
    """
    # every part but the last ends with a line end: no more rows than line ends
    room = [lib.bc_count_newlines(content, a, b) for a, b in bounds]
    room[-1] += 1
    offsets = [0, *np.cumsum(room).tolist()]
    out = np.empty((len(wanted), offsets[-1]), dtype)
    parts: list = ["a part was not parsed"] * len(bounds)

    def run(p):
        try:
            parts[p] = _parse(lib, content, bounds[p], ncols, wanted, out, offsets[p], room[p])
        except (MemoryError, OSError) as exc:  # the file goes to pyarrow
            parts[p] = f"a part failed ({exc!r})"

    on_threads(run, len(bounds), "bayescheck-csv-part")
    why = next((part for part in parts if isinstance(part, str)), None)
    return why if why is not None else _merge(lib, content, parts, out, offsets)


def _parse(lib, content, bounds, ncols, wanted, out, offset, room):
    """One part: ``(rows, labels)``, or why not.

    Its rows' codes are written to ``out[:, offset:offset + room]``.
    """
    import ctypes

    pointers = (ctypes.c_void_p * ncols)()
    for i, j in enumerate(wanted):
        pointers[j] = out[i, offset:].ctypes.data
    status, rows = ctypes.c_int32(-1), ctypes.c_int64(0)
    result = lib.bc_parse(content, bounds[1], bounds[0], ncols, pointers, out.itemsize,
                          room, ctypes.byref(status), ctypes.byref(rows))
    try:
        if status.value != 0:
            return STATUS.get(status.value, f"status {status.value}")
        labels = []
        for j in wanted:
            n = lib.bc_labels_count(result, j)
            starts, lengths = np.empty(n, np.int64), np.empty(n, np.int32)
            lib.bc_labels(result, j, starts.ctypes.data, lengths.ctypes.data)
            labels.append(list(zip(starts.tolist(), lengths.tolist(), strict=True)))
    finally:
        lib.bc_free(result)
    return rows.value, labels


def _merge(lib, content, parts, out, offsets):
    """The parts' codes made those of one pass, or why not.

    Later parts' rows are moved up to close the gaps that empty lines left, and their codes
    renumbered into the labels of the parts before them (new labels appended in order of
    first appearance). Why not: more than 128 labels in a column of ``int8`` codes.
    """
    rows, labels = parts[0]
    labels = [list(spans) for spans in labels]
    index = [{content[a:a + n]: k for k, (a, n) in enumerate(spans)} for spans in labels]
    for p, (count, spans_of) in enumerate(parts[1:], 1):
        block = out[:, rows:rows + count]
        if offsets[p] != rows:  # the parts before held empty lines
            block[:] = out[:, offsets[p]:offsets[p] + count]
        for i, spans in enumerate(spans_of):
            table = np.empty(len(spans), np.int32)
            for k, (a, n) in enumerate(spans):
                code = index[i].setdefault(content[a:a + n], len(labels[i]))
                if code == len(labels[i]):
                    labels[i].append((a, n))
                table[k] = code
            if out.dtype == np.int8 and len(labels[i]) > 128:  # codes 0..127
                return STATUS[7]
            if not np.array_equal(table, np.arange(len(spans))):
                lib.bc_recode(block[i].ctypes.data, out.itemsize, count, table.ctypes.data)
        rows += count
    return [out[i, :rows] for i in range(out.shape[0])], labels
