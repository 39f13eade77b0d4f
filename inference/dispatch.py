"""The thin layer from a model object to its engine: ``fit(spec)`` for every family."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.spec import Spec

from .ard import fit_ard
from .bayes_rule_fit import fit_bayes_rule
from .beta_bernoulli import fit_beta_bernoulli, fit_dirichlet_categorical
from .gaussian_mixture import fit_gaussian_mixture, posterior_checks
from .linear_regression import fit_linear_regression
from .naive_bayes_fit import fit_naive_bayes_spec
from .result import AnalyticFit

__all__ = ["ENGINES", "ESTIMATE_CHECKS", "fit"]

#: ``model`` value -> analytic engine.
ENGINES: dict[str, Callable[..., AnalyticFit]] = {
    "linear_regression": fit_linear_regression,
    "beta_bernoulli": fit_beta_bernoulli,
    "dirichlet_categorical": fit_dirichlet_categorical,
    "naive_bayes": fit_naive_bayes_spec,
    "bayes_rule": fit_bayes_rule,
    "ard": fit_ard,
    "gaussian_mixture": fit_gaussian_mixture,
}

#: ``model`` value -> a family's own criteria added to the point-estimate comparison:
#: ``hook(fit, comparison, idata, spec)`` edits the EstimateComparison in place and returns it.
ESTIMATE_CHECKS: dict[str, Callable] = {
    "gaussian_mixture": posterior_checks,
}


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
    return ENGINES[spec.model.name](spec, out=None if out is None else Path(out), resume=resume,
                                    progress=progress)

