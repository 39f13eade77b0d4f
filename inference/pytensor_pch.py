"""A precompiled header for PyTensor's C modules: the first ``check`` of a model compiles faster.

On PyTensor's C path every op of a new graph is a ``g++`` run of its own (the die's first
``check``: 41 of them, the coin's 15), and every one of those runs starts by parsing the
same headers: ``Python.h`` and NumPy's C API (and, for most ops, ``<vector>`` and
``<algorithm>``), which PyTensor puts at the top of its modules. Measured in
benchmarks/CHECK_SPEED.md (round 10): that parse is 0.65-0.75 s of CPU of a module's
1-1.5 s, and PyTensor's ``-g`` (debug information nobody reads in a compiled op) about a
fifth of the rest.

:func:`settle_precompiled_header` compiles those headers once per compile directory into
``Python.h.gch`` (GCC's precompiled header) in a directory of its own, and puts that
directory first on the compiler's include path with ``-g0``. GCC looks for ``Python.h.gch``
in each include directory before ``Python.h`` and, when the file is valid for the
compilation (same compiler, same code-generation flags and macros: GCC checks), reads it
instead of parsing the headers; when it is not valid, GCC goes on down the path to the real
``Python.h`` (GCC's manual, "Using Precompiled Headers"). The declarations are the same
either way (the headers are include-guarded; a module that does not include ``<vector>``
simply sees more of them). PyTensor keys each compiled module by its compile flags, so
modules compiled this way are kept apart from those compiled without it.

GCC does not check that a precompiled header is intact (a truncated one is a fatal error, a
damaged one can crash the compiler), nor that the headers it was made from are unchanged, so
both are checked here before it is used: its size and SHA-1, and the time and size of every
header it was made from (GCC's own dependency list, written when it is built), against what
was recorded then; otherwise it is built again. It is written under a
name of its own, flushed to disk, and renamed when complete.

Only g++ is set up this way (clang's precompiled headers work otherwise), never with
``BAYESCHECK_PCH=0`` or PyTensor's ``cmodule__remove_gxx_opt``, nor for a compile directory
whose path has white space (PyTensor splits ``gcc__cxxflags`` at spaces). A header that
does not compile is remembered for its key, and that directory is then never used.

One directory per key, about 30 MB each: another compiler (or the same one upgraded: its
file's time is in the key), other flags (another ``-march``), another PyTensor or NumPy each
leave the old one dead. They are bounded as :mod:`bayescheck.models.disk_cache` describes: a process
that uses a directory holds a shared lock on its file ``in-use`` for as long as it runs
(every ``g++`` run reads the header) and sets that file's time to now at most once a day; a
process that builds a header (a new key) removes the other directories not used for 31 days,
then the least recently used beyond :data:`CACHE_MAX_BYTES`, and in every directory the
``building.*`` files of builds killed more than an hour ago.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bayescheck.models import disk_cache
from bayescheck.models.disk_cache import hold, mark_used

__all__ = ["CACHE_MAX_BYTES", "HEADERS", "PCH_DIR_NAME", "evict_old_headers", "pch_flags",
           "settle_precompiled_header"]

#: Directory of PyTensor's ``compiledir`` holding one precompiled header per key.
PCH_DIR_NAME = "bayescheck-pch"
#: The headers PyTensor's ``CLinker`` puts at the top of its modules (PyTensor 3), in its
#: order; ``Python.h`` first, so that GCC looks for the precompiled header at the first line.
HEADERS = ("Python.h", "pytensor_mod_helper.h", "math.h", "numpy/arrayobject.h",
           "numpy/arrayscalars.h", "numpy/npy_math.h", "vector", "algorithm")
#: PyTensor's own flags for every module (``CLinker.compile_args``) before the compiler's.
_LINKER_FLAGS = ("-O3", "-fno-math-errno", "-Wno-unused-label", "-Wno-unused-variable",
                 "-Wno-write-strings")
#: Environment variables that add to the compiler's include path.
_ENVIRONMENT = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH")
_HEADER = "Python.h.gch"
_RECORD = "Python.h.gch.json"
_FAILED = "failed"
_IN_USE = "in-use"
_BUILDING = "building."
#: Header directories are evicted, least recently used first, beyond this many bytes.
CACHE_MAX_BYTES = 256 << 20

# The flags this process added to ``gcc__cxxflags``, once settled (None: not yet).
_SETTLED: list[str] | None = None


def _include_dirs() -> list[str]:
    """PyTensor's standard include directories (NumPy, Python, its ``c_code``)."""
    from pytensor.link.c.cmodule import std_include_dirs

    return list(std_include_dirs())


def _build_command(source: Path, output: Path, deps: Path, base_flags: list[str]) -> list[str]:
    """The ``g++`` command compiling ``source`` into the precompiled header ``output``.

    The flags are in the order of a module's compile (``GCC_compiler.compile_str``), ``-g0``
    where ``gcc__cxxflags`` starts, so a user's own flags come after it as they do there.
    """
    import pytensor

    return [pytensor.config.cxx, "-g", *_LINKER_FLAGS, "-g0", *base_flags,
            *(f"-I{d}" for d in _include_dirs()), "-fvisibility=hidden", "-MD", "-MF",
            str(deps), "-x", "c++-header", str(source), "-o", str(output)]


def pch_flags(directory: Path) -> list[str]:
    """The flags added to ``gcc__cxxflags`` for the precompiled header in ``directory``."""
    return ["-g0", f"-I{directory}"]


def _pch_root() -> Path:
    """The directory of the header directories, in PyTensor's compile directory."""
    import pytensor

    return Path(pytensor.config.compiledir) / PCH_DIR_NAME


def _key(command: list[str]) -> str:
    import numpy as np
    import pytensor

    where = shutil.which(command[0])
    parts = [pytensor.__version__, np.__version__, sys.version, where,
             os.path.getmtime(where) if where else None, command[1:], HEADERS,
             [os.environ.get(name) for name in _ENVIRONMENT]]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def _stamp(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _digest(path: Path) -> str:
    """SHA-1 of the file (about 25 ms for the 30 MB header)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha1").hexdigest()


def _is_current(directory: Path) -> bool:
    """Whether ``directory`` holds a complete header made from headers still as they were."""
    try:
        record = json.loads((directory / _RECORD).read_text())
        if os.stat(directory / _HEADER).st_size != record["size"]:
            return False
        if not all(_stamp(path) == stamp for path, stamp in record["headers"].items()):
            return False
        return _digest(directory / _HEADER) == record["sha1"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def settle_precompiled_header() -> list[str]:
    """Use (building it first if needed) the precompiled header of PyTensor's C modules.

    Adds :func:`pch_flags` in front of ``pytensor.config.gcc__cxxflags`` (so that a user's
    own flags come later and win) once per process. Nothing is done for another compiler,
    with ``BAYESCHECK_PCH=0``, or when the header does not compile (see the module
    docstring). Returns the flags added (empty when none).
    """
    global _SETTLED
    if _SETTLED is not None:
        return list(_SETTLED)
    _SETTLED = []
    if os.environ.get("BAYESCHECK_PCH", "").strip() == "0":
        return []
    import pytensor

    config = pytensor.config
    cxx = config.cxx
    if (not cxx or "g++" not in os.path.basename(cxx) or "clang" in cxx
            or config.cmodule__remove_gxx_opt):
        return []
    try:
        # PyMC's import adds flags of its own to gcc__cxxflags (-fno-exceptions and others):
        # the header must be built with the flags the modules will be compiled with, or GCC
        # will not use it.
        import pymc  # noqa: F401
        from pytensor.link.c.cmodule import GCC_compiler

        from .pytensor_setup import settle_march_flags

        settle_march_flags()
        base_flags = GCC_compiler.compile_args()
        placeholder = _build_command(Path("source.h"), Path(_HEADER), Path("deps"), base_flags)
    except Exception:  # noqa: BLE001 - another PyTensor: compile as it does
        return []
    directory = _pch_root() / _key(placeholder)
    if any(c.isspace() for c in str(directory)):
        return []
    try:  # held while this process runs: no other process removes the directory meanwhile
        directory.mkdir(parents=True, exist_ok=True)
        hold(directory / _IN_USE)
    except OSError:
        pass  # a read-only compile directory: as PyTensor does
    if not _is_current(directory):
        if (directory / _FAILED).exists():
            mark_used(directory / _FAILED)
            return []
        built = _build(directory, base_flags)
        evict_old_headers(keep=directory.name)
        if not built:
            return []
    _SETTLED = pch_flags(directory)
    config.gcc__cxxflags = " ".join([*_SETTLED, config.gcc__cxxflags])
    return list(_SETTLED)


def _build(directory: Path, base_flags: list[str]) -> bool:
    """Compile the headers into ``directory``; whether a current header is there now.

    The header and its record are written under names of their own, flushed and renamed, so
    that a compilation running meanwhile in another process (or on another machine sharing
    the directory) never reads half a file. A compile error is recorded (a file ``failed``),
    so it is not tried again for this key; an interrupted or killed build is not.
    """
    made = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for suffix in (".h", ".gch", ".d"):
            # named with this process's id, so that an eviction can tell whether it is gone
            handle, name = tempfile.mkstemp(dir=directory, prefix=f"{_BUILDING}{os.getpid()}.",
                                            suffix=suffix)
            os.close(handle)
            made.append(Path(name))
        source, partial, deps = made
        source.write_text("".join(f"#include <{h}>\n" for h in HEADERS))
        done = subprocess.run(_build_command(source, partial, deps, base_flags),
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            if done.returncode > 0:  # the compiler's own error, not a signal
                (directory / _FAILED).write_text(done.stderr[-4000:])
            return _is_current(directory)
        # "target: dependency dependency \
        #  dependency ..." (GCC's make rule); the first word is the target
        words = deps.read_text().replace("\\\n", " ").split()[1:]
        record = {"size": partial.stat().st_size, "sha1": _digest(partial),
                  "headers": {path: _stamp(path) for path in words
                              if path != str(source)}}
        with open(partial, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(partial, directory / _HEADER)
        handle, name = tempfile.mkstemp(dir=directory, prefix=f"{_BUILDING}{os.getpid()}.",
                                        suffix=".json")
        with os.fdopen(handle, "w") as out:
            json.dump(record, out)
            out.flush()
            os.fsync(out.fileno())
        made.append(Path(name))
        os.replace(name, directory / _RECORD)
        return True
    except (OSError, ValueError, subprocess.SubprocessError):
        return _is_current(directory)  # a read-only cache, no compiler: as PyTensor does
    finally:
        for path in made:
            path.unlink(missing_ok=True)


def evict_old_headers(keep: str | None = None) -> list[str]:
    """Remove old header directories and killed builds' files (never raises).

    In the compile directory's :data:`PCH_DIR_NAME`: the ``building.*`` files of builds
    killed more than an hour ago, then the directories not used for 31 days, then the least
    recently used beyond :data:`CACHE_MAX_BYTES`; never ``keep`` (the key just built) nor a
    directory a running process holds (:mod:`bayescheck.models.disk_cache`).

    Returns
    -------
    list of str
        The keys removed.
    """
    try:
        root = _pch_root()
        temporaries, entries = [], []
        for key in os.listdir(root):
            directory = root / key
            try:
                names = os.listdir(directory)
            except OSError:
                continue  # removed meanwhile, or not a directory
            for name in names:
                if name.startswith(_BUILDING):
                    temporaries.append((directory / name,
                                        disk_cache.writer_pid(name, _BUILDING)))
            entries.append((key, directory))
        disk_cache.remove_temporaries(temporaries)
        found = []
        for key, directory in entries:
            try:
                files = [directory / name for name in os.listdir(directory)]
            except OSError:
                continue
            found.append(disk_cache.Entry(key, files, marker=directory / _IN_USE,
                                          create_marker=True, directory=directory))
        return disk_cache.evict(found, keep=[keep] if keep else [],
                                max_bytes=CACHE_MAX_BYTES)
    except Exception:  # noqa: BLE001 - eviction only saves disk space
        return []
