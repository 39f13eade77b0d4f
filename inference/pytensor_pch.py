"""A precompiled header for PyTensor's C modules: the first ``check`` of a model compiles faster.

On PyTensor's C path every op of a new graph is a ``g++`` run of its own (the die's first
``check``: 41 of them, the coin's 15), and every one of those runs starts by parsing the
same headers: ``Python.h``, NumPy's C API, ``<vector>`` and ``<algorithm>``, which
PyTensor puts at the top of each module. Measured in benchmarks/CHECK_SPEED.md (round 10):
that parse is 0.65-0.75 s of CPU of a module's 1-1.5 s, and PyTensor's ``-g`` (debug
information nobody reads in a compiled op) about a fifth of the rest.

:func:`settle_precompiled_header` compiles those headers once per compile directory into
``Python.h.gch`` (GCC's precompiled header) in a directory of its own, and puts that
directory first on the compiler's include path with ``-g0``. GCC looks for ``Python.h.gch``
in each include directory before ``Python.h`` and, when the file is valid for the
compilation (same compiler, same code-generation flags and macros: GCC checks), reads it
instead of parsing the headers; when it is not valid, or missing, GCC goes on down the path
to the real ``Python.h``, so a module always compiles from the same source either way
(GCC's manual, "Using Precompiled Headers"). Since PyTensor keys each compiled module by its
compile flags, modules compiled this way are kept apart from those compiled without it.

Only g++ is set up this way (clang's precompiled headers work otherwise), and never when
``BAYESCHECK_PCH=0``. A header that fails to compile is remembered for the key, and that
directory is then never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

__all__ = ["PCH_DIR_NAME", "HEADERS", "pch_flags", "settle_precompiled_header"]

#: Directory of PyTensor's ``compiledir`` holding one precompiled header per key.
PCH_DIR_NAME = "bayescheck-pch"
#: The headers PyTensor's ``CLinker`` puts at the top of every module (PyTensor 3), in its
#: order; ``Python.h`` first, so that GCC looks for the precompiled header at the first line.
HEADERS = ("Python.h", "pytensor_mod_helper.h", "math.h", "numpy/arrayobject.h",
           "numpy/arrayscalars.h", "numpy/npy_math.h", "vector", "algorithm")
#: PyTensor's own flags for every module (``CLinker.compile_args``) before the compiler's.
_LINKER_FLAGS = ("-O3", "-fno-math-errno", "-Wno-unused-label", "-Wno-unused-variable",
                 "-Wno-write-strings")
_FAILED = "failed"

# The flags this process added to ``gcc__cxxflags``, once settled (None: not yet).
_SETTLED: list[str] | None = None


def _include_dirs() -> list[str]:
    import numpy as np
    import pytensor

    c_code = Path(pytensor.__file__).parent / "link" / "c" / "c_code"
    return [np.get_include(), sysconfig.get_path("include"), str(c_code)]


def _build_command(source: Path, output: Path, base_flags: list[str]) -> list[str]:
    """The ``g++`` command compiling ``source`` into the precompiled header ``output``."""
    import pytensor

    return [pytensor.config.cxx, "-g", *_LINKER_FLAGS, *base_flags, "-g0",
            *(f"-I{d}" for d in _include_dirs()), "-fvisibility=hidden", "-x", "c++-header",
            str(source), "-o", str(output)]


def pch_flags(directory: Path) -> list[str]:
    """The flags added to ``gcc__cxxflags`` for the precompiled header in ``directory``."""
    return ["-g0", f"-I{directory}"]


def _key(command: list[str]) -> str:
    import numpy as np
    import pytensor

    where = shutil.which(command[0])
    parts = [pytensor.__version__, np.__version__, sys.version, where,
             os.path.getmtime(where) if where else None, command[1:], HEADERS]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def settle_precompiled_header() -> list[str]:
    """Use (building it first if needed) the precompiled header of PyTensor's C modules.

    Adds :func:`pch_flags` in front of ``pytensor.config.gcc__cxxflags`` (so that a user's
    own flags come later and win) once per process. Nothing is done for another compiler,
    with ``BAYESCHECK_PCH=0``, or when the header does not compile. Returns the flags added
    (empty when none).
    """
    global _SETTLED
    if _SETTLED is not None:
        return list(_SETTLED)
    _SETTLED = []
    if os.environ.get("BAYESCHECK_PCH", "").strip() == "0":
        return []
    import pytensor

    cxx = pytensor.config.cxx
    if not cxx or "g++" not in os.path.basename(cxx) or "clang" in cxx:
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
    except Exception:  # noqa: BLE001 - another PyTensor: compile as it does
        return []
    root = Path(pytensor.config.compiledir) / PCH_DIR_NAME
    command = _build_command(Path("source.h"), Path("Python.h.gch"), base_flags)
    directory = root / _key(command)
    header = directory / "Python.h.gch"
    if not header.exists():
        if (directory / _FAILED).exists() or not _build(directory, base_flags):
            return []
    _SETTLED = pch_flags(directory)
    pytensor.config.gcc__cxxflags = " ".join([*_SETTLED, pytensor.config.gcc__cxxflags])
    return list(_SETTLED)


def _build(directory: Path, base_flags: list[str]) -> bool:
    """Compile the headers into ``directory/Python.h.gch``; whether it worked.

    Written under a temporary name and renamed, so that a compilation running meanwhile in
    another process never reads half a file. A failure is recorded (a file ``failed``), so
    it is not tried again for this key.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}"
        source = directory / f"headers.{tag}.h"
        source.write_text("".join(f"#include <{h}>\n" for h in HEADERS))
        partial = directory / f"Python.h.gch.{tag}.tmp"
        done = subprocess.run(_build_command(source, partial, base_flags),
                              capture_output=True, text=True, timeout=300)
        source.unlink(missing_ok=True)
        if done.returncode != 0 or not partial.exists():
            partial.unlink(missing_ok=True)
            (directory / _FAILED).write_text(done.stderr[-4000:])
            return False
        os.replace(partial, directory / "Python.h.gch")
        return True
    except (OSError, subprocess.SubprocessError):
        return False  # a read-only cache, no compiler: compile as PyTensor does
