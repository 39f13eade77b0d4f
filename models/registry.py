"""Model names as written in a spec (``model = "..."``) and the family that reads each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .ard import ard_spec
from .bayes_rule import bayes_rule_spec
from .beta_bernoulli import beta_bernoulli_spec, dirichlet_categorical_spec
from .errors import SpecError
from .gaussian_mixture import gaussian_mixture_spec
from .linear_regression import linear_regression_spec
from .naive_bayes import naive_bayes_spec
from .spec import Section, Spec

__all__ = ["FAMILIES", "family"]

#: ``model`` value -> function reading the rest of the spec.
FAMILIES: dict[str, Callable[[Section, Path], Spec]] = {
    "linear_regression": linear_regression_spec,
    "beta_bernoulli": beta_bernoulli_spec,
    "dirichlet_categorical": dirichlet_categorical_spec,
    "naive_bayes": naive_bayes_spec,
    "bayes_rule": bayes_rule_spec,
    "ard": ard_spec,
    "gaussian_mixture": gaussian_mixture_spec,
}


def family(name: str, *, path: Path | None = None) -> Callable[[Section, Path], Spec]:
    """The spec reader of model ``name``; a :class:`SpecError` listing the known ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise SpecError(f"unknown model {name!r}; known models: {', '.join(sorted(FAMILIES))}",
                        path=path, key="model") from None
