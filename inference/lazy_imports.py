"""Importing nutpie and ArviZ without the parts a check never uses.

``import nutpie`` imports the whole ``arviz`` namespace package (nutpie's ``sample`` module
does ``import arviz`` for two ``arviz_base`` functions, ``from_dict`` and
``dict_to_dataset``), so every check paid for ``arviz_plots`` and ``matplotlib.pyplot`` before
the first draw, and the report draws its figures with matplotlib alone. And importing
``arviz_base`` runs ``lazy_loader.load("jax")`` and ``load("numpyro")``: for a module that is
not installed lazy_loader calls ``inspect.stack()``, which reads the source of every frame
and searches ``sys.modules`` for each, 0.5-1 s of CPU once PyMC and scipy are loaded, for
an error message naming where jax would have been used (benchmarks/CHECK_SPEED.md).

:func:`import_nutpie` imports nutpie with ``arviz`` standing for a small module that forwards
to ``arviz_base`` (and to the real ``arviz`` for any other name, imported then), and with
``inspect.stack`` returning the frames without their source while ``arviz_base`` loads. Both
are undone before it returns: a later ``import arviz`` gets the real package.

Numba too (0.4-1 s of CPU) is imported by ``nutpie.compile_pymc`` only to decorate one
function of its Numba path, which PyTensor's C path never takes. So the import runs with
``numba`` refused (nutpie then leaves that function undecorated), and the first call of
that path re-executes ``nutpie.compile_pymc`` with Numba importable, which decorates it as
nutpie means to (``importlib.reload`` in the module's own namespace, so ``compile_pymc_model``
and everything else already bound to the module see the new definitions).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import threading
import types

__all__ = ["frames_without_source", "import_nutpie", "nutpie_compile_pymc"]

# One import at a time: the stand-ins live in sys.modules while nutpie loads.
_LOCK = threading.Lock()


@contextlib.contextmanager
def frames_without_source():
    """Within the block, ``inspect.stack()`` returns the frames without reading their source.

    lazy_loader only uses the frames' file names and line numbers.
    """

    def stack(context: int = 1) -> list:
        out, frame = [], sys._getframe(1)
        while frame is not None:
            out.append(inspect.FrameInfo(frame, frame.f_code.co_filename, frame.f_lineno,
                                         frame.f_code.co_name, None, None))
            frame = frame.f_back
        return out

    real, inspect.stack = inspect.stack, stack
    try:
        yield
    finally:
        inspect.stack = real


def _arviz_standin() -> types.ModuleType:
    """A module named ``arviz`` whose attributes are ``arviz_base``'s, else real ``arviz``'s."""
    import arviz_base

    standin = types.ModuleType("arviz", "arviz_base's names for nutpie; see inference.lazy_imports")

    def __getattr__(name: str):
        try:
            return getattr(arviz_base, name)
        except AttributeError:
            return getattr(importlib.import_module("arviz"), name)

    standin.__getattr__ = __getattr__
    return standin


def import_nutpie() -> types.ModuleType:
    """The ``nutpie`` package, imported without ``arviz_plots`` and ``matplotlib``.

    Returns
    -------
    types.ModuleType
        ``nutpie`` (also in ``sys.modules``, so a plain ``import nutpie`` afterwards is free).
    """
    with _LOCK:
        if "nutpie" in sys.modules:
            return sys.modules["nutpie"]
        refused = [name for name in ("arviz", "numba") if name not in sys.modules]
        with frames_without_source():
            if "arviz" in refused:
                sys.modules["arviz"] = _arviz_standin()
            if "numba" in refused:
                sys.modules["numba"] = None  # "import numba" raises ImportError
            try:
                nutpie = importlib.import_module("nutpie")
            except ImportError:
                nutpie = None  # a nutpie that needs more than the stand-ins give: plain import
            finally:
                for name in refused:
                    del sys.modules[name]
        if nutpie is None:
            for name in [m for m in sys.modules if m == "nutpie" or m.startswith("nutpie.")]:
                del sys.modules[name]
            return importlib.import_module("nutpie")
        if "numba" in refused:
            _decorate_on_first_numba_compile(sys.modules["nutpie.compile_pymc"])
        return nutpie


def nutpie_compile_pymc() -> types.ModuleType:
    """``nutpie.compile_pymc`` with Numba importable (re-executed if it was imported without).

    Returns
    -------
    types.ModuleType
        The module, ready for its Numba path.
    """
    import_nutpie()
    module = sys.modules["nutpie.compile_pymc"]
    with _LOCK:
        if hasattr(module._compile_pymc_model_numba, "__wrapped__"):
            importlib.reload(module)  # numba importable now; replaces the stand-in too
    return module


def _decorate_on_first_numba_compile(module: types.ModuleType) -> None:
    """Re-execute ``module`` (``nutpie.compile_pymc``) before its Numba path first runs."""
    first = module._compile_pymc_model_numba

    def compile_numba(*args, **kwargs):
        if module._compile_pymc_model_numba is compile_numba:
            importlib.reload(module)  # numba importable now; replaces this function too
        return module._compile_pymc_model_numba(*args, **kwargs)

    compile_numba.__wrapped__ = first
    module._compile_pymc_model_numba = compile_numba
