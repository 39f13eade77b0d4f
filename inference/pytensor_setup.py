"""PyTensor settings for the C path: the BLAS link and -march flags, remembered; the mode.

Three fixed costs of every ``check`` on PyTensor's C path, measured in
benchmarks/CHECK_SPEED.md (rounds 8 and 9):

- **BLAS detection.** The first rewrite that asks for ``config.blas__ldflags`` makes PyTensor
  look for a BLAS library (``pytensor.link.c.cmodule.default_blas_ldflags``), which on a
  machine without one (a pip install on Linux) runs ``g++`` on a test program for the
  macOS Accelerate framework and warns that none was found: 0.55-1.2 s of wall in every
  process, for the same answer. PyTensor's docstring advises keeping the answer in the
  flags; :func:`settle_blas_ldflags` keeps it in a file of the compile directory, keyed by
  what the search depends on, and sets it before the first access. A value the user gave
  (``PYTENSOR_FLAGS=blas__ldflags=...`` or ``.pytensorrc``) is never replaced.
- **-march detection.** The first C compilation of a process makes PyTensor find the
  compiler flags equal to ``-march=native`` (``GCC_compiler.compile_args``): it runs
  ``g++ -march=native -E -v``, then compiles, links and runs a test program with them, about
  0.55 s of CPU (0.4 of it in the compiler) in every process, for the same answer.
  :func:`settle_march_flags` keeps the answer in a file of the compile directory, keyed by
  the compiler, PyTensor's version and the processor (``/proc/cpuinfo``'s model and flags,
  so a compile directory shared by machines keeps one answer per processor), and gives it
  to PyTensor before its first compilation. The flags are part of the key of every compiled
  module, so the remembered ones, being the detected ones, find the same modules. A user's
  own ``-march`` in ``gcc__cxxflags`` (PyTensor then detects nothing) is left alone.
- **The mode.** :func:`c_mode` is PyTensor's ``fast_run`` rewrites on the ``cvm_nogc``
  linker: the C virtual machine without freeing each intermediate result after its last
  use, so a small graph evaluated tens of thousands of times reuses its buffers (the die:
  about a quarter less per log-density call). Every caller copies the outputs out before
  the next call (:func:`bayescheck.inference.nutpie_compile._compile_c`). Without a BLAS library,
  PyTensor rewrites a matrix-vector product into ``Gemv``, whose C version it then refuses
  (no BLAS to link), leaving a Python ``perform`` per call (two of them, 80 % of the known-noise
  regression's log density and gradient time); the mode then leaves out that rewrite, so the
  product stays ``Dot22``, which has C code on NumPy's C API. With a BLAS library nothing is
  left out. And the gradient of a row-wise categorical likelihood (the die's
  ``y ~ Categorical(pi)``) counts the rows of each category again at every call: the
  increment of ones into a zero vector at the observed codes, a constant, which PyTensor
  leaves unfolded because its zero vector (``Alloc``) might be overwritten in place. The mode
  folds such an increment of constants into zeros into one constant (and what depends only
  on it), removing a Python ``perform`` per call.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

__all__ = ["BLAS_CACHE_NAME", "MARCH_CACHE_NAME", "blas_key", "c_mode",
           "fold_inner_graphs_in_python", "march_key", "settle_blas_ldflags",
           "settle_march_flags"]

#: File in PyTensor's ``compiledir`` holding the detected BLAS link flags per key.
BLAS_CACHE_NAME = "bayescheck-blas-ldflags.json"
#: File in PyTensor's ``compiledir`` holding the detected -march flags per key.
MARCH_CACHE_NAME = "bayescheck-march-flags.json"
#: Processors remembered in one compile directory (one per machine sharing it).
MARCH_ENTRIES = 16
#: Environment variables the library search or the link depends on.
_ENVIRONMENT = ("LD_LIBRARY_PATH", "LIBRARY_PATH", "DYLD_LIBRARY_PATH", "CONDA_PREFIX",
                "MKLROOT", "PATH")


def _library_dirs() -> list[str]:
    """The directories PyTensor searches for BLAS (the compiler's, then Python's)."""
    from pytensor.link.c import cmodule

    dirs = []
    try:
        dirs += cmodule._get_cxx_library_dirs()
    except Exception:  # noqa: BLE001 - a private function: without it the key is coarser
        pass
    dirs.append(os.path.join(sys.prefix, "lib"))
    dirs.append(os.path.join(sys.base_prefix, "lib"))
    return list(dict.fromkeys(dirs))


def blas_key() -> str:
    """Digest of what PyTensor's BLAS search depends on.

    PyTensor's version, the platform, the compiler (its path and modification time), the
    Python installation, the environment variables of the search and link, and each library
    directory searched with its modification time (a library added to or removed from it
    changes the directory's time).
    """
    import pytensor

    cxx = pytensor.config.cxx
    where = shutil.which(cxx) if cxx else None
    parts = [pytensor.__version__, sys.platform, cxx, where,
             os.path.getmtime(where) if where else None, sys.prefix, sys.base_prefix]
    parts += [os.environ.get(name) for name in _ENVIRONMENT]
    for d in _library_dirs():
        try:
            parts.append((d, os.stat(d).st_mtime_ns))
        except OSError:
            parts.append((d, None))
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()


def _processor() -> list[str]:
    """What identifies the processor: ``/proc/cpuinfo``'s first entry, else ``platform``'s."""
    import platform

    wanted = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags",
              "cache size", "Features", "CPU implementer", "CPU part", "CPU variant")
    found = []
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor's entry only
                name, _, value = line.partition(":")
                if name.strip() in wanted:
                    found.append(f"{name.strip()}={value.strip()}")
    except OSError:
        pass
    return found + [platform.machine(), platform.processor(), platform.system()]


def march_key() -> str:
    """Digest of what PyTensor's ``-march=native`` detection depends on.

    PyTensor's version, the compiler (its name, path and modification time), the compiler
    flags PyTensor adds to, and the processor (:func:`_processor`).
    """
    import pytensor

    cxx = pytensor.config.cxx
    where = shutil.which(cxx) if cxx else None
    parts = [pytensor.__version__, sys.platform, cxx, where,
             os.path.getmtime(where) if where else None, pytensor.config.gcc__cxxflags,
             *_processor()]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()


def _read_json_dict(path: Path) -> dict:
    """The JSON object in ``path``; empty when the file is missing, unreadable or not one."""
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def _write_json_atomic(path: Path, document: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(document))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: detect again next time


def settle_march_flags() -> list[str] | None:
    """Give PyTensor its ``-march=native`` flags from the cache, or detect and remember them.

    Nothing is done when PyTensor knows them already in this process, would not detect them
    (a user's ``-march`` among ``gcc__cxxflags``, no compiler, or one that is not g++-like),
    or is not laid out as expected. Returns the flags in use, or None when nothing was done.
    """
    import pytensor

    try:
        from pytensor.link.c.cmodule import GCC_compiler
    except ImportError:  # pragma: no cover - PyTensor without its C backend
        return None
    if not hasattr(GCC_compiler, "march_flags"):  # pragma: no cover - another PyTensor
        return None
    if GCC_compiler.march_flags is not None:
        return list(GCC_compiler.march_flags)
    config = pytensor.config
    cxx = config.cxx
    if (not cxx or not any(name in cxx for name in ("g++", "clang++", "clang-omp++", "icpc"))
            or any(f.startswith(("-march=", "--march=")) for f in config.gcc__cxxflags.split())):
        return None
    path = Path(config.compiledir) / MARCH_CACHE_NAME
    key = march_key()
    known = _read_json_dict(path)
    flags = known.get(key)
    if isinstance(flags, list) and all(isinstance(f, str) for f in flags):
        GCC_compiler.march_flags = list(flags)
        return list(flags)
    GCC_compiler.compile_args()  # PyTensor's own detection (and its warning, if any)
    flags = GCC_compiler.march_flags
    if isinstance(flags, list) and all(isinstance(f, str) for f in flags):
        if len(flags) <= 1:
            # PyTensor's fallbacks when the detection fails (-march=corei7, core2, nothing):
            # used in this process, not remembered, so a later process detects again
            return list(flags)
        others = [(k, v) for k, v in known.items() if k != key][-(MARCH_ENTRIES - 1):]
        _write_json_atomic(path, {**dict(others), key: flags})
        return list(flags)
    return None  # pragma: no cover - PyTensor kept something else


def settle_blas_ldflags() -> str:
    """Set ``pytensor.config.blas__ldflags`` from the cache, or detect and remember it.

    Nothing is done when the value is already known in this process or was given by the
    user. Returns the flags in use (``""``: no BLAS library). The ``-march`` flags are
    settled first (:func:`settle_march_flags`): the BLAS search compiles with them.
    """
    import pytensor

    settle_march_flags()

    config = pytensor.config
    param = config._config_var_dict.get("blas__ldflags")
    if param is None or hasattr(param, "val"):
        return config.blas__ldflags  # already resolved in this process
    try:
        config.fetch_val_for_key("blas__ldflags")
        return config.blas__ldflags  # the user's value (flags or .pytensorrc)
    except KeyError:
        pass
    path = Path(config.compiledir) / BLAS_CACHE_NAME
    key = blas_key()
    known = _read_json_dict(path)
    if isinstance(known.get(key), str):
        config.blas__ldflags = known[key]
        return known[key]
    flags = config.blas__ldflags  # PyTensor's own search (and its warning when none)
    _write_json_atomic(path, {key: flags})  # one entry: the key of this installation
    return flags


#: Where :func:`fold_increments_of_constants` runs among PyTensor's rewrites: after
#: ``specialize`` (2), before elementwise fusion (49) and the in-place rewrites (50 and on).
FOLD_POSITION = 48.5


def _fold_rewriter():
    """A graph rewriter folding an increment of constants into zeros, and what follows."""
    from pytensor.graph.basic import Constant
    from pytensor.graph.rewriting.basic import in2out, node_rewriter
    from pytensor.tensor.basic import Alloc
    from pytensor.tensor.rewriting.basic import constant_folding, unconditional_constant_folding
    from pytensor.tensor.subtensor import AdvancedIncSubtensor, IncSubtensor

    @node_rewriter([IncSubtensor, AdvancedIncSubtensor])
    def fold_increments_of_constants(fgraph, node):
        base = node.inputs[0]
        if not (base.owner is not None and isinstance(base.owner.op, Alloc)):
            return False
        if not all(isinstance(i, Constant) for i in (*base.owner.inputs, *node.inputs[1:])):
            return False
        folded = unconditional_constant_folding.transform(fgraph, base.owner)
        if not folded:
            return False
        return unconditional_constant_folding.transform(
            fgraph, node.op.make_node(folded[0], *node.inputs[1:]))

    return in2out(fold_increments_of_constants, constant_folding,
                  name="bayescheck_fold_increments_of_constants")


def fold_inner_graphs_in_python() -> bool:
    """Make constant folding evaluate an op's inner graph without compiling C for it.

    Constant folding asks an op for its Python implementation (``impl="py"``), but PyTensor
    links the inner graph of an op that has one (``AllocDiag``, ``OpFromGraph``) on its
    virtual machine with each inner op's C code, so a value computed once at rewrite time
    costs a ``g++`` run per inner op on a cold cache: 8 of the 25 modules of the regression
    example's first ``check`` (a rewrite of its constant prior covariance). Here PyTensor's
    constant folding (``unconditional_constant_folding``, which every folding rewrite calls)
    links such an inner graph, for that one evaluation, with the virtual machine PyTensor's
    FAST_COMPILE mode uses (no C thunks): the same ops' ``perform`` methods compute the same
    value. The op's linked inner function is dropped again afterwards, so a later use of the
    same op links as PyTensor would. Ops that choose their own inner linker (``Scan``) and
    everything outside constant folding are left alone. Returns whether the change is in
    place (False for a PyTensor laid out otherwise).
    """
    try:
        from pytensor.compile.inner_function import HasInnerFunction, link_only_mode
        from pytensor.link.vm import VMLinker
        from pytensor.tensor.rewriting.basic import unconditional_constant_folding as folding
    except ImportError:  # pragma: no cover - another PyTensor
        return False
    fold = getattr(folding, "fn", None)
    if fold is None or not hasattr(HasInnerFunction, "link_mode"):  # pragma: no cover
        return False
    if getattr(fold, "without_c", False):
        return True

    def fold_without_c(fgraph, node):
        op = node.op
        if not (isinstance(op, HasInnerFunction) and getattr(op, "_fn", 0) is None
                and type(op).link_mode is HasInnerFunction.link_mode):
            return fold(fgraph, node)
        op._fn = op.compile_fn(link_only_mode(VMLinker(use_cloop=False, c_thunks=False)))
        try:
            return fold(fgraph, node)
        finally:
            op._fn = None

    fold_without_c.without_c = True
    fold_without_c.original = fold
    folding.fn = fold_without_c
    return True


def c_mode():
    """The PyTensor mode of the C path (see the module docstring).

    Also settles, for every compilation of this process from then on, the BLAS and
    ``-march`` flags (:func:`settle_blas_ldflags`), the precompiled header
    (:mod:`bayescheck.inference.pytensor_pch`) and constant folding without C
    (:func:`fold_inner_graphs_in_python`).
    """
    import pytensor
    from pytensor.compile.mode import Mode

    from .pytensor_parallel import PrecompilingVMLinker
    from .pytensor_pch import settle_precompiled_header

    settle_blas_ldflags()
    settle_precompiled_header()
    fold_inner_graphs_in_python()
    # PyTensor's "cvm_nogc" linker, compiling a new graph's C modules in parallel first
    mode = Mode(linker=PrecompilingVMLinker(allow_gc=False, use_cloop=True),
                optimizer="fast_run")
    if not pytensor.config.blas__ldflags:
        mode = mode.excluding("local_gemm_to_gemv")
    return mode.register((_fold_rewriter(), FOLD_POSITION))
