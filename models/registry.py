"""The one table of model names: ``model = "..."`` in a spec -> the module that holds it.

Each model lives in two modules of that name:

- ``models/<module>.py``: the model class and its spec reader, listed in the module's
  ``SPEC_READERS`` (model name -> reader of the rest of a spec into a
  :class:`~bayescheck.models.spec.Spec`);
- ``inference/families/<module>.py``: its
  :class:`~bayescheck.inference.families.registry.Family` record (fit, predict, exact
  draws), listed in the module's ``FAMILIES``.

Adding a model is one line here plus those two records (``tests/test_registry.py`` checks
that every entry resolves on both sides). Modules are imported on first use, so loading a
spec imports only its own model.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from .errors import SpecError

__all__ = ["MODELS", "module_of", "spec_reader"]

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


def spec_reader(name: str, *, path: Path | None = None) -> Callable:
    """The spec reader of model ``name``: ``SPEC_READERS[name]`` of its module."""
    module = import_module(f"{__package__}.{module_of(name, path=path)}")
    return module.SPEC_READERS[name]
