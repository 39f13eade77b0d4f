"""The Family record: what inference offers for one model, found from its ``model`` value.

Each ``inference/families/<module>.py`` ends with a ``FAMILIES`` tuple of :class:`Family`
records, one per model it serves (``beta_bernoulli.py`` serves two). :func:`family` finds the
record through the one table of model names, :data:`bayescheck.models.registry.MODELS`
(``model`` value -> module), importing only that module: fitting one model does not import
the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from bayescheck.models.registry import module_of

__all__ = ["Family", "cluster_models", "family", "fit"]


@dataclass(frozen=True)
class Family:
    """One model's inference: its fit and what can be done with the fit.

    Attributes
    ----------
    name : str
        The spec's ``model`` value.
    model : type
        The model class of :mod:`bayescheck.models` that a spec of this name holds.
    fit : callable
        ``fit(spec, *, out=None, resume=False, progress=False) -> AnalyticFit``: the closed
        form, EM or evidence maximisation over the spec's data.
    predict : callable, optional
        ``predict(spec, posterior, batch, *, level, where, **options) -> dict`` of columns,
        one entry per new row, from the content of ``posterior.json``; None when the model
        has nothing to predict.
    exact_draws : callable, optional
        ``exact_draws(posterior, *, draws, chains, rng) -> (variables, coords[, attrs])``:
        independent draws from the exact posterior, named as the PyMC declaration names them
        (:func:`bayescheck.inference.families.exact_posterior` makes the ``DataTree``).
    on_cluster : bool
        Its statistics merge associatively, so ``fit --scheduler`` runs it on a Dask cluster.
    gathers_declaration : bool
        ``fit(..., declaration=True)`` also keeps, on the fit's pass over the files, what the
        PyMC declaration would read them again for (``check`` then reads the data once).
    """

    name: str
    model: type
    fit: Callable
    predict: Callable | None = None
    exact_draws: Callable | None = None
    on_cluster: bool = False
    gathers_declaration: bool = False


def family(name: str, *, path: Path | None = None) -> Family:
    """The :class:`Family` of model ``name``.

    Raises
    ------
    bayescheck.SpecError
        For an unknown name, listing the known ones (``path``: the spec that named it).
    """
    module = import_module(f"{__package__}.{module_of(name, path=path)}")
    (record,) = (f for f in module.FAMILIES if f.name == name)
    return record


def cluster_models() -> list[str]:
    """The models whose fit runs on a Dask cluster (imports every family: for messages)."""
    from bayescheck.models.registry import MODELS

    return [name for name in MODELS if family(name).on_cluster]


def fit(spec, *, out: str | Path | None = None, resume: bool = False, progress: bool = False,
        scheduler: str | None = None, workers: int | None = None, declaration: bool = False):
    """Fit a spec's model analytically (closed form / EM / evidence maximisation).

    Parameters
    ----------
    spec : bayescheck.models.Spec
        From :func:`bayescheck.models.load_spec`, or built in Python.
    out : str or pathlib.Path, optional
        Folder for the streaming checkpoint.
    resume : bool
        Continue a stream from the checkpoint in ``out``.
    progress : bool
        Print a line per batch to stderr.
    scheduler : str, optional
        Fit on a Dask cluster (:mod:`bayescheck.inference.scale.distributed`): a scheduler
        address, or ``"local"`` for a local cluster of ``workers`` worker processes.
    workers : int, optional
        Workers of the local cluster (default 2).
    declaration : bool
        For ``check``: a family that :attr:`Family.gathers_declaration` also keeps, in the
        fit record's ``declaration``, what ``model.declare(source, fit=...)`` would read the
        files again for; the others ignore it.

    Returns
    -------
    bayescheck.inference.AnalyticFit

    Raises
    ------
    bayescheck.BayescheckError
        ``scheduler`` with a model that has no cluster fit, ``workers`` without
        ``scheduler``, or a scheduler that cannot be reached.
    """
    from bayescheck.models.errors import BayescheckError

    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    record = family(spec.model.name)
    kwargs = {"out": None if out is None else Path(out), "resume": resume,
              "progress": progress}
    if declaration and record.gathers_declaration:
        kwargs["declaration"] = True
    if scheduler is None:
        if workers is not None:
            raise BayescheckError("--workers needs --scheduler local")
        return record.fit(spec, **kwargs)
    if not record.on_cluster:
        raise BayescheckError(f"--scheduler: model {spec.model.name!r} is fitted in-process "
                              f"only; on a cluster: {', '.join(cluster_models())}")
    from bayescheck.inference.scale import distributed

    with distributed.cluster(scheduler, workers):
        return record.fit(spec, **kwargs)
