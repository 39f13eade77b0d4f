"""The thin layer from a model object to its family: ``fit(spec)`` for every model.

The family of model ``name`` is ``inference.families.<module>.fit_<name>``, where
``<module>`` comes from the one table of model names, :data:`models.registry.MODELS`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from models.registry import module_of
from models.spec import Spec

from .result import AnalyticFit

__all__ = ["engine", "fit"]


def engine(model: str) -> Callable[..., AnalyticFit]:
    """The analytic fit ``inference.families.<module>.fit_<model>`` of a ``model = ...`` value."""
    module = import_module(f"{__package__}.families.{module_of(model)}")
    return getattr(module, f"fit_{model}")


def fit(spec: Spec, *, out: str | Path | None = None, resume: bool = False,
        progress: bool = False) -> AnalyticFit:
    """Fit a spec's model analytically (closed form / EM / evidence maximisation).

    Parameters
    ----------
    spec : models.Spec
        From :func:`models.load_spec`, or built in Python.
    out : str or pathlib.Path, optional
        Folder for the streaming checkpoint.
    resume : bool
        Continue a stream from the checkpoint in ``out``.
    progress : bool
        Print a line per batch to stderr.

    Returns
    -------
    AnalyticFit
    """
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    return engine(spec.model.name)(spec, out=None if out is None else Path(out),
                                   resume=resume, progress=progress)
