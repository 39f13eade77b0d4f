"""Compiling a PyMC model for nutpie: PyTensor's C backend for small graphs, Numba otherwise.

nutpie's own path (``nutpie.compile_pymc_model``) turns the whole log density and gradient
into one Numba ``cfunc``. Numba cannot cache that function on disk, so every process pays
the LLVM compile again: 6-15 s of CPU for a one-parameter coin, 40 s for a 12-table AODE
(benchmarks/SUITE.md). For the smallest models that fixed cost is most of a ``check``.

PyTensor's C backend (mode ``"CVM"``) caches each op's compiled module on disk, keyed by
the op, so a warm compile of a small graph takes well under a second; the price is a Python
call per log-density evaluation (nutpie's ``from_pyfunc``), tens of microseconds, which
grows with the graph's size and with the number of leapfrog steps. It wins for graphs of a
few nodes (the coin: 10 s of CPU for the whole check instead of 15.5 s) and loses for larger
ones (AODE: 184 s of sampling instead of 9 s; the die, 69 nodes, breaks even). So a model
of at most :data:`C_BACKEND_MAX_VARIABLES` random variables is compiled for the C backend
first, and kept there if its optimised log-density graph has at most
:data:`C_BACKEND_MAX_NODES` nodes; anything else goes to Numba.

Both paths evaluate the same PyTensor graph of the log density and its symbolic gradient,
so the sampled distribution is the same; only the draws for a given seed differ.
"""

from __future__ import annotations

import os
import threading
import weakref

from models.errors import SpecError

__all__ = ["C_BACKEND_MAX_NODES", "C_BACKEND_MAX_VARIABLES", "choose_backend",
           "compile_for_nutpie", "forced_backend"]

#: Models with more free plus observed random variables than this go straight to Numba.
C_BACKEND_MAX_VARIABLES = 3
#: ... and so do smaller ones whose optimised C log-density graph has more nodes than this
#: (coin 13, known-noise regression 17, ARD 8: C; die 69, unknown-noise regression 58:
#: Numba). Measured in benchmarks/SUITE.md.
C_BACKEND_MAX_NODES = 40

# One compiled model per (model object, start settings): a retry with more draws, or a
# second sampling of the same declared model, does not compile again. Weak keys, so a
# model that is no longer used takes its compiled functions with it.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def forced_backend() -> str | None:
    """``BAYESCHECK_NUTS_BACKEND`` (``c`` or ``numba``) when set, else None.

    Raises
    ------
    SpecError
        When the variable holds anything else.
    """
    raw = os.environ.get("BAYESCHECK_NUTS_BACKEND", "").strip().lower()
    if raw and raw not in ("c", "numba"):
        raise SpecError(f"BAYESCHECK_NUTS_BACKEND must be 'c' or 'numba', got {raw!r}")
    return raw or None


def choose_backend(model) -> str:
    """The backend to try first for a PyMC model: ``"c"`` or ``"numba"``.

    The forced one (:func:`forced_backend`, then the graph-size rule of
    :func:`compile_for_nutpie` does not apply), else by the number of random variables.
    """
    forced = forced_backend()
    if forced:
        return forced
    size = len(model.free_RVs) + len(model.observed_RVs)
    return "c" if size <= C_BACKEND_MAX_VARIABLES else "numba"


def compile_for_nutpie(model, *, initvals: dict | None = None):
    """A nutpie compiled model for ``model``, reused when the same model is sampled again.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    initvals : dict, optional
        Where the chains start (passed to nutpie as ``initial_points``); PyMC's U(-1, 1)
        start jitter is then switched off. Default: PyMC's initial point with its jitter.

    Returns
    -------
    compiled : nutpie.compiled_pyfunc.PyFuncModel or nutpie.compile_pymc.CompiledPyMCModel
    backend : {"c", "numba"}
    """
    key = (None if initvals is None else
           tuple(sorted((str(k), id(v)) for k, v in initvals.items())))
    per_model = _CACHE.setdefault(model, {})
    if key not in per_model:
        backend, forced = choose_backend(model), forced_backend() is not None
        kwargs = {}
        if initvals is not None:
            kwargs = {"initial_points": initvals, "jitter_rvs": set()}
        compiled = None
        if backend == "c":
            compiled, nodes = _compile_c(model, **kwargs)
            if nodes > C_BACKEND_MAX_NODES and not forced:
                compiled, backend = None, "numba"
        if compiled is None:
            import nutpie

            compiled = nutpie.compile_pymc_model(model, **kwargs)
        per_model[key] = (compiled, backend)
    return per_model[key]


def _compile_c(model, *, initial_points=None, jitter_rvs=None):
    """nutpie's ``from_pyfunc`` model over PyTensor C-backend functions, and its graph size.

    Mirrors what ``nutpie.compile_pymc_model`` does for its JAX backend (nutpie 0.16), with
    PyTensor's ``"CVM"`` mode instead of JAX. PyTensor functions keep their inputs and
    outputs in storage shared by all callers (also inside ``OpFromGraph`` nodes, which a
    function copy does not duplicate), so the chains' threads take turns through one lock
    (they hold the GIL while they evaluate anyway) and the gradient is copied out before
    the next call overwrites it.
    """
    import numpy as np
    from nutpie import compile_pymc as nutpie_pymc
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn

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
        model, mode="CVM", compute_grad=True, join_expanded=False,
        pymc_initial_point_fn=locked_initial_point_fn, var_names=None)
    names, _, shapes = shape_info
    shapes = [tuple(int(s) for s in shape) for shape in shapes]

    logp_fn.trust_input = True

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

    dims, coords = nutpie_pymc._prepare_dims_and_coords(model, shape_info,
                                                        reparameterized_names)
    compiled = from_pyfunc(ndim=n_dim, make_logp_fn=make_logp_fn, make_expand_fn=make_expand_fn,
                           make_initial_point_fn=initial_points_fn,
                           expanded_dtypes=[np.dtype("float64")] * len(names),
                           expanded_shapes=shapes, expanded_names=list(names), dims=dims,
                           coords=coords, reparameterized_names=reparameterized_names)
    return compiled, len(logp_fn.maker.fgraph.apply_nodes)
