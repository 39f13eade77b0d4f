"""The thin layer from a model object to its engine: ``fit(spec)`` for every family."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from models.spec import Spec

from .result import AnalyticFit

__all__ = ["ENGINES", "ESTIMATE_CHECKS", "engine", "estimate_check", "fit"]

#: ``model`` value -> its analytic engine, as ``"module:function"`` inside this package.
#: Resolved on first use, so a fit imports only its own engine's dependencies.
ENGINES: dict[str, str] = {
    "linear_regression": "linear_regression:fit_linear_regression",
    "beta_bernoulli": "beta_bernoulli:fit_beta_bernoulli",
    "dirichlet_categorical": "beta_bernoulli:fit_dirichlet_categorical",
    "naive_bayes": "naive_bayes_fit:fit_naive_bayes_spec",
    "bayes_rule": "bayes_rule_fit:fit_bayes_rule",
    "ard": "ard:fit_ard",
    "gaussian_mixture": "gaussian_mixture:fit_gaussian_mixture",
}

#: ``model`` value -> a family's own criteria added to the point-estimate comparison:
#: ``hook(fit, comparison, idata, spec)`` edits the EstimateComparison in place and returns it.
ESTIMATE_CHECKS: dict[str, str] = {
    "gaussian_mixture": "gaussian_mixture:posterior_checks",
}


def _resolve(target: str) -> Callable:
    module, name = target.split(":")
    return getattr(import_module(f".{module}", __package__), name)


def engine(model: str) -> Callable[..., AnalyticFit]:
    """The analytic engine of ``model`` (a ``model = ...`` value)."""
    return _resolve(ENGINES[model])


def estimate_check(model: str) -> Callable | None:
    """The family's own point-estimate criteria of ``model``, if it has any."""
    return _resolve(ESTIMATE_CHECKS[model]) if model in ESTIMATE_CHECKS else None


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

