"""The one table of model names: ``model = "..."`` in a spec -> the module that holds it.

Each model lives in two modules of the same name, found by convention from this table:

- ``models/<module>.py`` defines the model object and ``<name>_spec(top, path)``, which reads
  the rest of a spec into a :class:`~bayescheck.models.spec.Spec`;
- ``inference/families/<module>.py`` defines ``fit_<name>(spec, *, out, resume, progress)``,
  which runs the analytic engine and returns an ``AnalyticFit``.

Adding a model is one line here plus those two functions (``tests/test_registry.py`` checks
that every entry resolves on both sides). Modules are imported on first use, so loading a
spec imports only its own family.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from .errors import SpecError

__all__ = ["MODELS", "family", "module_of"]

#: ``model`` value -> module name inside ``models`` and ``inference.families``.
MODELS: dict[str, str] = {
    "linear_regression": "linear_regression",
    "beta_bernoulli": "beta_bernoulli",
    "dirichlet_categorical": "beta_bernoulli",
    "naive_bayes": "naive_bayes",
    "bayes_rule": "bayes_rule",
    "ard": "ard",
    "gaussian_mixture": "gaussian_mixture",
    "bayesian_network": "bayesian_network",
    "semi_naive_bayes": "semi_naive_bayes",
}


def module_of(name: str, *, path: Path | None = None) -> str:
    """The module holding model ``name``; a :class:`SpecError` listing the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise SpecError(f"unknown model {name!r}; known models: {', '.join(sorted(MODELS))}",
                        path=path, key="model") from None


def family(name: str, *, path: Path | None = None) -> Callable:
    """The spec reader ``models.<module>.<name>_spec`` of model ``name``."""
    module = import_module(f"{__package__}.{module_of(name, path=path)}")
    return getattr(module, f"{name}_spec")
