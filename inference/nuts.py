"""Running NUTS on a PyMC model: nutpie by default, chains spread over the cores."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

__all__ = ["SampleResult", "sample_nuts", "show_progress_bar"]


@dataclass
class SampleResult:
    """Draws and how long they took.

    Attributes
    ----------
    idata : xarray.DataTree
        PyMC's result (groups ``posterior``, ``sample_stats``, ...).
    seconds : float
        Wall time of ``pm.sample`` (compilation included).
    sampling_seconds : float or None
        Time spent sampling, as the sampler reports it.
    sampler : str
        Which NUTS implementation ran.
    backend : str or None
        How nutpie evaluated the log density: ``"c"``, ``"numba"`` or ``"numba (c abandoned
        after ...)"`` (see :mod:`bayescheck.inference.nuts_budget`); None for other samplers.
    """

    idata: object
    seconds: float
    sampling_seconds: float | None
    sampler: str
    backend: str | None = None


def show_progress_bar(progress: bool, stream=None) -> bool:
    """Whether the sampler may draw its progress bar: asked for, and ``stream`` is a terminal.

    In a log file or a pipe the bar writes box-drawing characters and "0.00 draws/s" lines
    that nobody reads. ``stream`` defaults to ``sys.stderr``.
    """
    stream = sys.stderr if stream is None else stream
    try:
        return bool(progress) and stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced by something without isatty
        return False


def sample_nuts(model, *, draws: int = 1000, tune: int = 1000, chains: int = 4, seed: int = 0,
                cores: int | None = None, sampler: str = "nutpie",
                progress: bool = False, initvals: dict | None = None,
                warm_up: bool = False) -> SampleResult:
    """Sample a PyMC model with NUTS.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    draws, tune, chains, seed : int
        Draws kept per chain, tuning steps per chain, number of chains, random seed.
    cores : int, optional
        Chains run at once; default ``min(chains, os.cpu_count())`` (PyMC's own default of
        half the CPUs runs chains one after another on a 2-core machine).
    sampler : {"nutpie", "pymc", "numpyro", "blackjax"}
        NUTS implementation.
    progress : bool
        Show the sampler's progress bar (only when stderr is a terminal, see
        :func:`show_progress_bar`).
    initvals : dict, optional
        Where the chains start (variable name -> value, possibly symbolic and seeded so that
        each chain starts elsewhere: see ``models.interface.StartsAtEstimate``). PyMC's own
        start jitter, U(-1, 1) on every unconstrained coordinate, is then switched off (for
        nutpie ``compile_kwargs={"jitter_rvs": set()}``, for PyMC's NUTS
        ``init="adapt_diag"``), so the chains start where these values say. Default: PyMC's
        initial point with its jitter.
    warm_up : bool
        Whether this model will be sampled again, as ``check``'s is (not a one-off
        simulation's): then a long C-path run starts a background Numba compile of it for
        its next run (:mod:`bayescheck.inference.numba_warmup`), and a Numba compile is kept on disk
        (:mod:`bayescheck.inference.numba_cache`).

    With nutpie, the model is compiled by :func:`bayescheck.inference.nutpie_compile.compile_for_nutpie`
    on PyTensor's C backend, or with Numba when the C path's sampling would cost more
    (:mod:`bayescheck.inference.nuts_budget`), and reused when the same model object is sampled again
    (a retry).

    Returns
    -------
    SampleResult
    """
    cores = cores or max(1, min(chains, os.cpu_count() or 1))
    started = time.perf_counter()
    if sampler == "nutpie":
        idata, backend = _sample_nutpie(model, draws=draws, tune=tune, chains=chains,
                                        seed=seed, cores=cores, progress=progress,
                                        initvals=initvals, warm_up=warm_up)
    else:
        import pymc as pm

        start = {}
        if initvals is not None:
            start = {"initvals": initvals, "init": "adapt_diag"} if sampler == "pymc" else {
                "initvals": initvals}
        with model:
            idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores,
                              random_seed=seed, nuts_sampler=sampler,
                              progressbar=show_progress_bar(progress),
                              compute_convergence_checks=False, **start)
        backend = None
    seconds = time.perf_counter() - started
    attrs = idata.posterior.attrs
    return SampleResult(idata=idata, seconds=seconds,
                        sampling_seconds=attrs.get("sampling_time"),
                        sampler=str(attrs.get("inference_library", sampler)),
                        backend=backend)


def _sample_nutpie(model, *, draws, tune, chains, seed, cores, progress, initvals, warm_up):
    """nutpie on the path :mod:`bayescheck.inference.nuts_budget` picks, the draws as PyMC returns them.

    What ``pm.sample(nuts_sampler="nutpie")`` does (PyMC 6.4), except that the model is
    compiled by :mod:`bayescheck.inference.nutpie_compile` (reused for the same model) and the backend
    chosen as :func:`bayescheck.inference.nuts_budget.sample_nutpie_budgeted` says.
    """
    from pymc.backends.arviz import patch_nutpie_idata

    from .nuts_budget import sample_nutpie_budgeted

    ran = sample_nutpie_budgeted(model, draws=draws, tune=tune, chains=chains, seed=seed,
                                 cores=cores, progress_bar=show_progress_bar(progress),
                                 initvals=initvals, warm_up=warm_up)
    patch_nutpie_idata(ran.trace, model, sampling_time=ran.sampling_seconds)
    return ran.trace, ran.backend
