"""Compiling a PyMC model for nutpie: PyTensor's C backend or a Numba ``cfunc``.

nutpie's own path (``nutpie.compile_pymc_model``) turns the whole log density and gradient
into one Numba ``cfunc``, which Numba cannot cache on disk, so every process pays the LLVM
compile again: 6-15 s of CPU for a one-parameter coin, 40 s for a 12-table AODE
(benchmarks/SUITE.md). :mod:`bayescheck.inference.numba_cache` builds the same ``cfunc`` so that it is
cached: the first process to sample a model still pays the compile, a later one loads it.
For the smallest models that first compile is most of a ``check``.

PyTensor's C backend (mode ``"CVM"``) caches each op's compiled module on disk, keyed by
the op, so a warm compile of a small graph takes well under a second; the price is a Python
call per log-density evaluation (nutpie's ``from_pyfunc``), about 40 microseconds for a
small regression, made once per leapfrog step and with the chains' threads queueing for the
GIL. It wins when the sampler takes few steps (the coin: 10 s of CPU for the whole check
instead of 15.5 s) and loses badly when it takes many: scikit-learn's diabetes data with
unscaled features and a known noise, a 17-node graph like the small examples', sampled for
197 s against Numba's 7 s. Nothing cheap predicts the number of steps before sampling, so
by default (``auto``) :mod:`bayescheck.inference.nuts_budget` sends large graphs to Numba up front and
samples smaller ones on the C path, falling back to Numba when the sampling, watched as it
runs, would cost more than Numba; ``BAYESCHECK_NUTS_BACKEND=c`` or ``numba`` asks for one
path.

Both paths evaluate the same PyTensor graph of the log density and its symbolic gradient,
so the sampled distribution is the same; only the draws for a given seed differ.
"""

from __future__ import annotations

import threading
import weakref

from bayescheck.models.settings import choice

from .lazy_imports import import_nutpie, nutpie_compile_pymc
from .numba_cache import compile_numba_cached, model_digest, remember, wrapper_name
from .pytensor_setup import c_mode, settle_blas_ldflags

__all__ = ["backend_setting", "compile_for_nutpie"]

# One compiled model per (model object, start settings): a retry with more draws, or a
# second sampling of the same declared model, does not compile again. Weak keys, so a
# model that is no longer used takes its compiled functions with it.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


#: The values ``BAYESCHECK_NUTS_BACKEND`` may take.
SETTINGS = ("auto", "c", "numba")


def backend_setting() -> str:
    """``BAYESCHECK_NUTS_BACKEND`` (``auto``, ``c`` or ``numba``), ``"auto"`` when unset.

    Raises
    ------
    SpecError
        When the variable holds anything else.
    """
    return choice("BAYESCHECK_NUTS_BACKEND", SETTINGS)


def compile_for_nutpie(model, *, initvals: dict | None = None, backend: str | None = None,
                       store: bool = True):
    """A nutpie compiled model for ``model``, reused when the same model is sampled again.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    initvals : dict, optional
        Where the chains start (passed to nutpie as ``initial_points``); PyMC's U(-1, 1)
        start jitter is then switched off. Default: PyMC's initial point with its jitter.
    backend : {"c", "numba"}, optional
        Which path; default from ``BAYESCHECK_NUTS_BACKEND`` (``auto`` compiles the C path
        here: falling back to Numba is :mod:`bayescheck.inference.nuts_budget`'s decision).
    store : bool
        Numba path: keep the compiled model on disk for a later process
        (:mod:`bayescheck.inference.numba_cache`); False for a model sampled once (a simulation of
        ``calibrate``), which nutpie then compiles its own way.

    Returns
    -------
    compiled : nutpie.compiled_pyfunc.PyFuncModel or nutpie.compile_pymc.CompiledPyMCModel
    backend : {"c", "numba"}
    """
    if backend is None:
        backend = "numba" if backend_setting() == "numba" else "c"
    key = (backend, None if initvals is None else
           tuple(sorted((str(k), id(v)) for k, v in initvals.items())))
    per_model = _CACHE.setdefault(model, {})
    if key not in per_model:
        kwargs = {}
        if initvals is not None:
            kwargs = {"initial_points": initvals, "jitter_rvs": set()}
        if backend == "c":
            compiled = _compile_c(model, **kwargs)
        else:
            settle_blas_ldflags()
            compiled = _compile_numba(model, store=store, **kwargs)
        # The start values themselves are kept with the entry (not the dict, which its caller
        # may change): while it lives, no other object can take the id() its key was made of.
        per_model[key] = (compiled, backend,
                          None if initvals is None else tuple(initvals.values()))
    compiled, backend = per_model[key][:2]
    if backend == "numba" and model.data_vars:
        # nutpie's Numba model holds a copy of the pm.Data values taken at compile time
        # (the C path reads the shared variables themselves): give it their values now, so
        # that a model whose data were swapped with set_data (each simulation of a
        # calibration) is sampled with its current data. (A model from the on-disk cache has
        # its data frozen into constants and no shared data: nothing to give it.)
        known = {v.name for v in compiled.shared_var_keys}
        current = {v.name: v.get_value() for v in model.data_vars if v.name in known}
        if current:
            compiled = compiled.with_data(**current)
    return compiled, backend


def _compile_numba(model, *, store: bool, **kwargs):
    """The Numba path: through the on-disk cache when asked, else (or if that fails) nutpie's."""
    if store:
        try:
            compiled, stored = compile_numba_cached(model, **kwargs)
        except Exception:  # noqa: BLE001 - a full disk, another nutpie: compile as before
            pass
        else:
            remember(model_digest(model), stored, wrapper=wrapper_name(compiled))
            return compiled
    return nutpie_compile_pymc().compile_pymc_model(model, **kwargs)


def _compile_c(model, *, initial_points=None, jitter_rvs=None):
    """nutpie's ``from_pyfunc`` model over PyTensor C-backend functions.

    Mirrors what ``nutpie.compile_pymc_model`` does for its JAX backend (nutpie 0.16), with
    PyTensor's C virtual machine instead of JAX (:func:`bayescheck.inference.pytensor_setup.c_mode`: no
    freeing of intermediate buffers between calls, so each output is copied out below).
    PyTensor functions keep their inputs and outputs in storage shared by all callers (also
    inside ``OpFromGraph`` nodes, which a function copy does not duplicate), so the chains'
    threads take turns through one lock
    (they hold the GIL while they evaluate anyway) and the gradient is copied out before
    the next call overwrites it.
    """
    import numpy as np

    import_nutpie()  # the package first, without arviz_plots and matplotlib
    from nutpie import compile_pymc as nutpie_pymc
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn

    mode = c_mode()  # first: the initial point function below is compiled in C too
    if jitter_rvs is None:
        jitter_rvs = set(model.free_RVs)
    initial_point_fn = make_initial_point_fn(model=model, overrides=initial_points,
                                             jitter_rvs=jitter_rvs, return_transformed=True)
    lock = threading.Lock()

    def locked_initial_point_fn(seed):
        with lock:  # a PyTensor function is not reentrant; chains start on threads
            return initial_point_fn(seed)

    (n_dim, _, logp_fn, expand_fn, initial_points_fn, shape_info,
     reparameterized_names) = nutpie_pymc._make_functions(
        model, mode=mode, compute_grad=True, join_expanded=False,
        pymc_initial_point_fn=locked_initial_point_fn, var_names=None)
    names, _, shapes = shape_info
    shapes = [tuple(int(s) for s in shape) for shape in shapes]

    # nutpie hands both functions a float64 vector of n_dim: no input checks per call (the
    # expand function's took about a third of its 9 microseconds, 12,000 calls for the coin).
    logp_fn.trust_input = True
    expand_fn.trust_input = True

    def make_logp_fn():
        def logp(x, **_shared):
            with lock:
                value, gradient = logp_fn(x)
                return float(value), np.array(gradient, dtype="float64", order="C", copy=True)

        return logp

    def make_expand_fn(_seed1, _seed2, _chain):
        def expand(x, **_shared):
            with lock:
                values = [np.array(value, dtype="float64") for value in expand_fn(x)]
            return {name: value.reshape(shape)
                    for name, value, shape in zip(names, values, shapes, strict=True)}

        return expand

    dims, coords = nutpie_pymc._prepare_dims_and_coords(_WithCoordinates(model), shape_info,
                                                        reparameterized_names)
    return from_pyfunc(ndim=n_dim, make_logp_fn=make_logp_fn, make_expand_fn=make_expand_fn,
                       make_initial_point_fn=initial_points_fn,
                       expanded_dtypes=[np.dtype("float64")] * len(names),
                       expanded_shapes=shapes, expanded_names=list(names), dims=dims,
                       coords=coords, reparameterized_names=reparameterized_names)


class _WithCoordinates:
    """``model`` with a range for each dimension that has no coordinate values.

    nutpie finds such a dimension's length with ``.eval()``, which PyTensor 3 compiles in its
    default mode, Numba: importing Numba and compiling a kernel (0.7-0.9 s of a cold
    ``check``) on the C path, which has no other use for Numba. Here the length is computed
    with PyTensor's Python linker (a shape read off the data). Everything else is the model's.
    """

    def __init__(self, model):
        from pytensor.compile.mode import Mode

        self._model = model
        python = Mode(linker="py", optimizer="fast_compile")
        self.coords = {name: (values if values is not None else
                              range(int(model.dim_lengths[name].eval(mode=python))))
                       for name, values in model.coords.items()}

    def __getattr__(self, name):
        return getattr(self._model, name)

