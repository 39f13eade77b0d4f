"""Compiling a model's Numba path in the background, so that the next run of it loads it.

A model sampled on PyTensor's C path pays a Python call per leapfrog step (about 100
microseconds for the six-sided die: 6-8 s of its ``check``); its Numba path, once in
:mod:`bayescheck.inference.numba_cache`, loads in under a second and samples about ten times faster,
but compiling it costs 10-40 s of CPU the first time. So when a C run's sampling took a
while (:data:`MIN_C_SECONDS` of CPU), ``check`` hands the model (cloudpickled) to a detached
child process, ``python -m inference.numba_warmup``, which compiles the Numba path at the
lowest priority (``nice 19``: it takes only CPU nobody else wants) and records it in the
index. The next ``check`` of the same model finds it there and samples with Numba
(:mod:`bayescheck.inference.nuts_budget`). Nothing waits for the child, and nothing but speed depends on
it: a child that dies leaves no entry, and the next run is as today's.

``BAYESCHECK_NUMBA_REUSE=0`` turns it off (:func:`bayescheck.inference.numba_cache.reuse_enabled`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .numba_cache import (
    cache_dir,
    compile_numba_cached,
    known,
    model_digest,
    remember,
    reuse_enabled,
    wrapper_name,
)

__all__ = ["MIN_C_SECONDS", "start_warmup"]

#: CPU seconds of C sampling from which a background Numba compile is started.
MIN_C_SECONDS = 1.0
#: A warm-up lock older than this is taken to belong to a child that died.
STALE_SECONDS = 900.0
_ROOT = Path(__file__).resolve().parent.parent


def _paths(digest: str) -> tuple[Path, Path, Path]:
    folder = cache_dir() / "index"
    return (folder / f"{digest}.warming", folder / f"{digest}.model",
            folder / f"{digest}.log")


def _take_lock(lock: Path) -> bool:
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime < STALE_SECONDS:
                    return False  # another process is compiling this model
                lock.unlink()
            except FileNotFoundError:
                pass
    return False


def start_warmup(model, digest: str) -> subprocess.Popen | None:
    """Start compiling ``model``'s Numba path in a detached, lowest-priority child.

    Parameters
    ----------
    model : pymc.Model
        The model just sampled on the C path.
    digest : str
        Its :func:`bayescheck.inference.numba_cache.model_digest`.

    Returns
    -------
    subprocess.Popen or None
        The child; None when warm-up is off, the model's Numba path was compiled before
        (stored, or found not cacheable), or another process is compiling it.
    """
    if not reuse_enabled() or known(digest) is not None:
        return None  # off, or compiled before (cached, or found not cacheable)
    lock, payload, log = _paths(digest)
    if not _take_lock(lock):
        return None
    try:
        import cloudpickle

        payload.write_bytes(cloudpickle.dumps(model))
        env = dict(os.environ, BAYESCHECK_NUMBA_REUSE="0",
                   PYTHONPATH=os.pathsep.join(p for p in (str(_ROOT),
                                                          os.environ.get("PYTHONPATH"))
                                              if p))
        with open(log, "wb") as err:
            # this process's working directory: a relative compile directory is the same
            return subprocess.Popen(
                [sys.executable, "-m", "bayescheck.inference.numba_warmup", digest],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                env=env, start_new_session=True)
    except Exception:
        lock.unlink(missing_ok=True)
        payload.unlink(missing_ok=True)
        raise


def main(argv: list[str]) -> int:
    """The child: compile the pickled model's Numba path and record it (exit 0 when stored)."""
    began = time.monotonic()
    (digest,) = argv
    lock, payload, log = _paths(digest)
    try:
        os.nice(19)
        import cloudpickle

        from .pytensor_setup import settle_blas_ldflags

        model = cloudpickle.loads(payload.read_bytes())
        payload.unlink()
        if model_digest(model) != digest:
            print("the unpickled model has another digest: not recorded", file=sys.stderr)
            return 1
        settle_blas_ldflags()
        try:
            compiled, stored = compile_numba_cached(model)
        except Exception as exc:
            remember(digest, False, by="warm-up", error=repr(exc)[:500])  # not tried again
            raise
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        remember(digest, stored, by="warm-up", wrapper=wrapper_name(compiled),
                 cpu_seconds=round(usage.ru_utime + usage.ru_stime, 2),
                 wall_seconds=round(time.monotonic() - began, 2))
        if not stored:
            print("Numba could not cache this model's wrappers (recorded: not tried again)",
                  file=sys.stderr)
            return 1
        log.unlink(missing_ok=True)
        return 0
    finally:
        payload.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
