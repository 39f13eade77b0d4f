"""Compile the C modules of a new PyTensor graph on every free core, not one after another.

On PyTensor's C path each op of a new graph is a ``g++`` run of its own, and PyTensor runs
them one at a time: its linker asks for each node's module in turn, and
``ModuleCache.module_from_key`` holds the compile directory's lock (a file lock, shared by
threads and processes alike) around the whole ``g++`` run. A cold ``check`` of the die waits
for about 30 such runs of its log density in a row (benchmarks/CHECK_SPEED.md, round 11).

:class:`PrecompilingVMLinker` is PyTensor's ``VMLinker`` that, before linking a graph, finds
the nodes whose module is in no cache, generates their code (in this thread: PyTensor's code
generation is not made for threads) and runs their ``g++`` processes side by side on a pool
of threads, each into a temporary directory of its own, outside the lock. Each finished
module is then handed to ``module_from_key`` itself, with an object that moves the compiled
files into the directory PyTensor gives it instead of compiling there (the second argument
of ``module_from_key`` may be any object with ``get_src_code`` and ``compile_cmodule``: its
docstring says so). So PyTensor still does all its own bookkeeping under its lock: it looks
again whether another process stored the module meanwhile, writes the key, and registers the
module. Then the ordinary linking runs and finds every module in the cache. The modules are those
PyTensor would compile: the same code, compiler, flags and key (only the path of the source
file, which the compiler writes into assertions and debug information, is the temporary one).

Several processes linking the same new graph at once (parallel ``check`` runs or test workers
on one cold cache) share the work as PyTensor's lock made them share it: each module is
claimed by a file of its hash in the compile directory's ``bayescheck-compiling/`` before it
is compiled, a process leaves the modules another one claimed to it and waits for them, and
a claim whose process is gone (or older than :data:`STALE_SECONDS`) counts for nothing.

Nothing here can make a compile fail that would not fail anyway: a node whose key or code
cannot be made, or whose early compile fails, is left to PyTensor's own pass, which compiles
it (or reports its error) as before. What PyTensor prints while a module is compiled ahead
(``compile_str``'s banner of a failed compile, "You can find the C code in this temporary
file: ...", or the compiler's warnings with ``cmodule__compilation_warning``) is held back
per module: printed once the module compiled, dropped (with the file the banner names) when
it failed, since PyTensor's own pass then compiles it again and prints its own, so a module
that does not compile is reported once. ``BAYESCHECK_COMPILE_JOBS`` sets the number of
simultaneous ``g++`` runs (default: the cores this process may use, at most 4; ``1`` turns
this off).
"""

from __future__ import annotations

import builtins
import io
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bayescheck.models.disk_cache import writer_alive
from bayescheck.models.settings import usable_cores
from pytensor.link.vm import VMLinker

__all__ = ["PrecompilingVMLinker", "compile_jobs", "precompile_nodes"]

_log = logging.getLogger(__name__)

#: At most this many simultaneous ``g++`` runs by default (each takes 100-200 MB).
MAX_JOBS = 4
#: A claim older than this (seconds) counts for nothing (a compile takes 0.2-2 s).
STALE_SECONDS = 300.0
#: Waiting for modules other processes claimed stops after this long (seconds).
WAIT_SECONDS = 120.0


def compile_jobs() -> int:
    """How many ``g++`` runs to start at once: ``BAYESCHECK_COMPILE_JOBS``, or the free cores.

    Returns
    -------
    int
        At least 1; 1 means PyTensor compiles alone, one module after another.
    """
    text = os.environ.get("BAYESCHECK_COMPILE_JOBS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            _log.warning("BAYESCHECK_COMPILE_JOBS=%r is not a number; compiling one at a time",
                         text)
            return 1
    return max(1, min(usable_cores(), MAX_JOBS))


class _Compiled:
    """A module compiled ahead into ``staging``, handed to ``ModuleCache.module_from_key``.

    ``module_from_key`` calls :meth:`compile_cmodule` (under its lock, with a fresh directory
    of the compile directory) only when the module is still in no cache; the files are then
    moved there and imported from there, as PyTensor's own compile would have left them.
    """

    def __init__(self, src_code: str, staging: str, library: str):
        self.src_code = src_code
        self.staging = staging
        self.library = library

    def get_src_code(self) -> str:
        return self.src_code

    def compile_cmodule(self, location: str):
        from pytensor.link.c.cmodule import dlimport
        for name in os.listdir(self.staging):
            shutil.move(os.path.join(self.staging, name), os.path.join(location, name))
        open(os.path.join(location, "__init__.py"), "w").close()
        return dlimport(os.path.join(location, self.library))


# What PyTensor's cmodule prints on a thread compiling ahead, while it does (else unset).
_PRINTED = threading.local()
# The file compile_str writes a failed module's code to, named in its banner.
_ERROR_FILE = re.compile(r"temporary file: (\S*pytensor_compilation_error_\S*)")


def _print(*args, file=None, **kwargs):
    """``print`` for PyTensor's ``cmodule``: held back on a thread compiling ahead.

    Only what goes to the terminal (standard output or error) is held; everything else (the
    module code it writes into strings) and every other thread's output is printed as
    before.
    """
    held = getattr(_PRINTED, "lines", None)
    if held is None or (file is not None and file is not sys.stdout and file is not sys.stderr):
        builtins.print(*args, file=file, **kwargs)
        return
    text = io.StringIO()
    builtins.print(*args, file=text, **kwargs)
    held.append((file is sys.stderr, text.getvalue()))


def _hold_back_prints() -> None:
    """Route PyTensor's ``cmodule`` prints through :func:`_print` (once per process)."""
    from pytensor.link.c import cmodule

    if getattr(cmodule, "print", None) is not _print:
        cmodule.print = _print


class _Job:
    """One node's module to compile: its key, code and compiler arguments."""

    def __init__(self, key, module_hash: str, linker):
        from pytensor.link.c.cmodule import get_lib_extension
        module = linker.get_dynamic_module()
        self.key = key
        self.module_hash = module_hash
        self.src_code = module.code()
        self.compiler = linker.c_compiler()
        self.arguments = dict(module_name=module.code_hash, include_dirs=linker.header_dirs(),
                              lib_dirs=linker.lib_dirs(), libs=linker.libraries(),
                              preargs=linker.compile_args())
        self.library = f"{module.code_hash}.{get_lib_extension()}"
        self.staging: str | None = None
        self.printed: list[tuple[bool, str]] = []

    def run(self) -> bool:
        """Compile into a new temporary directory, without importing (a worker thread).

        What PyTensor prints meanwhile is kept in :attr:`printed` (see :meth:`report`).
        """
        self.staging = tempfile.mkdtemp(prefix="bayescheck-compile-")
        _PRINTED.lines = self.printed
        try:
            self.compiler.compile_str(src_code=self.src_code, location=self.staging,
                                      py_module=False, **self.arguments)
        finally:
            _PRINTED.lines = None
        return os.path.exists(os.path.join(self.staging, self.library))

    def report(self, compiled: bool) -> None:
        """Print what PyTensor printed while compiling, if the module ``compiled``.

        Otherwise drop it, and the file of the module's code its banner names: PyTensor's
        own pass compiles the module again, and prints its own if it fails again.
        """
        for to_stderr, text in self.printed:
            if compiled:
                (sys.stderr if to_stderr else sys.stdout).write(text)
            else:
                for path in _ERROR_FILE.findall(text):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
        self.printed = []

    def discard(self) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)


def _claims_dir() -> Path:
    from pytensor import config
    return Path(config.compiledir) / "bayescheck-compiling"


def _claim_is_live(path: Path) -> bool:
    """Whether the claim file ``path`` stands for a compile still under way."""
    try:
        text = path.read_text()
        age = time.time() - path.stat().st_mtime
    except OSError:
        return False  # released meanwhile
    if age > STALE_SECONDS:
        return False
    host, _, pid = text.partition(" ")
    if host != socket.gethostname():
        return True  # another machine's process: only its age tells
    try:
        return writer_alive(int(pid))
    except ValueError:
        return True  # not ours to read: only its age tells


def _claim(module_hash: str) -> Path | None:
    """Claim ``module_hash`` for this process (its claim file), or None if another holds it."""
    path = _claims_dir() / module_hash
    for _ in range(2):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _claim_is_live(path):
                return None
            try:
                path.unlink()  # a dead process's claim
            except OSError:
                return None
            continue
        except OSError:  # an unwritable compile directory: claim nothing, compile as before
            return None
        with os.fdopen(fd, "w") as out:
            out.write(f"{socket.gethostname()} {os.getpid()}")
        return path
    return None


def _release(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _wait_for(claims: list[Path]) -> None:
    """Wait until the other processes' compiles of ``claims`` are over (or look dead)."""
    began = time.monotonic()
    while claims and time.monotonic() - began < WAIT_SECONDS:
        claims = [c for c in claims if _claim_is_live(c)]
        if claims:
            time.sleep(0.05)


def _missing_modules(order) -> list[_Job]:
    """The C modules of ``order``'s nodes that no cache holds, one per distinct code."""
    from pytensor.graph.fg import FunctionGraph
    from pytensor.link.c.basic import CLinker, get_module_cache
    from pytensor.link.c.cmodule import get_module_hash
    from pytensor.link.c.op import COp

    cache = get_module_cache()
    jobs, seen = [], set()
    for node in order:
        op = node.op
        if not isinstance(op, COp) or any(
                getattr(v.type, "dtype", "") == "float16" for v in (*node.inputs, *node.outputs)):
            continue  # PyTensor's own pass decides (Python code, float16's special case)
        try:
            op.prepare_node(node, storage_map=None, compute_map=None, impl="c")
            linker = CLinker().accept(FunctionGraph(node.inputs, node.outputs), no_recycling=[])
            key = linker.cmodule_key()
            if key in seen or cache._get_from_key(key) is not None:
                continue
            seen.add(key)
            module_hash = get_module_hash(linker.get_src_code(), key)
            if module_hash in seen or cache._get_from_hash(module_hash, key) is not None:
                continue
            seen.add(module_hash)
            jobs.append(_Job(key, module_hash, linker))
        except Exception as error:  # noqa: BLE001 - PyTensor's own pass handles this node
            _log.debug("no early compile for %s: %r", node, error)
    return jobs


def precompile_nodes(order, jobs: int | None = None) -> int:
    """Compile the modules of ``order``'s nodes that no cache holds, ``jobs`` at a time.

    Parameters
    ----------
    order : sequence of pytensor.graph.basic.Apply
        The nodes about to be linked, in the linker's order.
    jobs : int, optional
        Simultaneous ``g++`` runs (default :func:`compile_jobs`).

    Returns
    -------
    int
        How many modules were compiled here and stored in PyTensor's cache. The rest (none
        missing, fewer than two missing, another process's, or an early compile that
        failed) is left to PyTensor's own pass, which finds another process's in the cache
        once its claim is released (waited for here).
    """
    jobs = compile_jobs() if jobs is None else jobs
    if jobs < 2:
        return 0
    missing = _missing_modules(order)
    if len(missing) < 2:
        return 0
    from pytensor.link.c.basic import get_module_cache
    cache = get_module_cache()
    mine, claims, elsewhere = [], [], []
    for job in missing:
        claim = _claim(job.module_hash)
        if claim is None:
            elsewhere.append(_claims_dir() / job.module_hash)
        else:
            mine.append(job)
            claims.append(claim)
    stored = 0
    _hold_back_prints()
    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(mine))),
                              thread_name_prefix="bayescheck-compile")
    futures = [(job, pool.submit(job.run)) for job in mine]
    try:
        for job, future in futures:
            try:
                compiled = future.result()
            except Exception as error:  # noqa: BLE001 - PyTensor's own pass compiles it
                _log.debug("early compile of %s failed: %r", job.module_hash, error)
                compiled = False
            job.report(compiled)
            if not compiled:
                continue
            try:
                cache.module_from_key(
                    job.key, _Compiled(job.src_code, job.staging, job.library))
            except OSError as error:
                # a full or unwritable compile directory: PyTensor's own pass meets it too,
                # and says so once; the modules still staged are left to it
                _log.debug("storing %s failed: %r", job.module_hash, error)
                break
            stored += 1
    finally:
        # On an interrupt, the g++ runs not yet started are not started at all.
        for _, future in futures:
            future.cancel()
        pool.shutdown(wait=True)
        for job in mine:
            job.discard()
        for claim in claims:
            _release(claim)
    _wait_for(elsewhere)
    return stored


class PrecompilingVMLinker(VMLinker):
    """PyTensor's ``VMLinker`` that compiles a new graph's missing C modules in parallel first.

    Links exactly as ``VMLinker`` does (same thunks, same modules); only the ``g++`` runs of
    modules missing from the cache happen before, side by side (:func:`precompile_nodes`).
    """

    def make_all(self, profiler=None, input_storage=None, output_storage=None,
                 storage_map=None):
        """Compile the missing C modules side by side, then link as ``VMLinker`` does."""
        from pytensor import config
        if self.c_thunks is not False and config.cxx:
            precompile_nodes(self.schedule(self.fgraph))
        return super().make_all(profiler=profiler, input_storage=input_storage,
                                output_storage=output_storage, storage_map=storage_map)
