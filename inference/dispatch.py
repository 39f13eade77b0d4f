"""The thin layer from a model object to its family: ``fit(spec)`` for every model.

The family of model ``name`` is ``inference.families.<module>.fit_<name>``, where
``<module>`` comes from the one table of model names, :data:`bayescheck.models.registry.MODELS`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from bayescheck.models.errors import BayescheckError
from bayescheck.models.registry import module_of
from bayescheck.models.spec import Spec

from .result import AnalyticFit

__all__ = ["GATHERS_DECLARATION", "engine", "fit"]

#: Families that can gather, on the fit's own pass over the files, what their model's PyMC
#: declaration reads from the rows (``fit(..., declaration=True)``), so ``check`` reads the
#: data once.
GATHERS_DECLARATION = ("linear_regression",)


def engine(model: str) -> Callable[..., AnalyticFit]:
    """The analytic fit ``inference.families.<module>.fit_<model>`` of a ``model = ...`` value."""
    module = import_module(f"{__package__}.families.{module_of(model)}")
    return getattr(module, f"fit_{model}")


def fit(spec: Spec, *, out: str | Path | None = None, resume: bool = False,
        progress: bool = False, scheduler: str | None = None,
        workers: int | None = None, declaration: bool = False) -> AnalyticFit:
    """Fit a spec's model analytically (closed form / EM / evidence maximisation).

    Parameters
    ----------
    spec : models.Spec
        From :func:`bayescheck.models.load_spec`, or built in Python.
    out : str or pathlib.Path, optional
        Folder for the streaming checkpoint.
    resume : bool
        Continue a stream from the checkpoint in ``out``.
    progress : bool
        Print a line per batch to stderr.
    scheduler : str, optional
        Fit on a Dask cluster (:mod:`bayescheck.inference.distributed`): a scheduler address, or
        ``"local"`` for a local cluster of ``workers`` worker processes.
    workers : int, optional
        Workers of the local cluster (default 2).
    declaration : bool
        For ``check``: the families of :data:`GATHERS_DECLARATION` also keep, in
        ``AnalyticFit.declaration``, what ``model.declare(source, fit=...)`` would read the
        files again for; the others ignore it.

    Returns
    -------
    AnalyticFit

    Raises
    ------
    models.errors.BayescheckError
        ``scheduler`` with a model that has no cluster fit, or a scheduler
        that cannot be reached.
    """
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    run = engine(spec.model.name)
    kwargs = {"out": None if out is None else Path(out), "resume": resume,
              "progress": progress}
    if declaration and spec.model.name in GATHERS_DECLARATION:
        kwargs["declaration"] = True
    if scheduler is None:
        if workers is not None:
            raise BayescheckError("--workers needs --scheduler local")
        return run(spec, **kwargs)
    from . import distributed

    if spec.model.name not in distributed.DISTRIBUTED_MODELS:
        raise BayescheckError(f"--scheduler: model {spec.model.name!r} is fitted in-process "
                              f"only; on a cluster: {', '.join(distributed.DISTRIBUTED_MODELS)}")
    with distributed.cluster(scheduler, workers):
        return run(spec, **kwargs)
