"""The one table of model names resolves on both sides: spec reader and family fit."""

import inspect

import pytest
from bayescheck.inference.families.registry import engine
from bayescheck.models.interface import Model
from bayescheck.models.registry import MODELS, family


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_has_a_spec_reader_and_a_family(name):
    reader = family(name)
    assert reader.__name__ == f"{name}_spec"
    fit = engine(name)
    assert fit.__name__ == f"fit_{name}"
    assert fit.__module__ == f"bayescheck.inference.families.{MODELS[name]}"
    assert {"spec", "out", "resume", "progress"} <= set(inspect.signature(fit).parameters)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_class_declares_the_model_interface(name):
    import importlib

    module = importlib.import_module(f"bayescheck.models.{MODELS[name]}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if getattr(c, "name", None) == name and c.__module__ == module.__name__]
    assert len(classes) == 1, classes
    assert Model in classes[0].__mro__  # declared, not probed


def test_every_family_module_has_a_model_module():
    import pkgutil

    import bayescheck.inference.families
    import bayescheck.models

    families = {m.name for m in pkgutil.iter_modules(bayescheck.inference.families.__path__)}
    model_modules = {m.name for m in pkgutil.iter_modules(bayescheck.models.__path__)}
    assert families == set(MODELS.values())
    assert families <= model_modules


def test_the_spec_vocabularies_are_what_the_engines_implement():
    # models cannot import the engines, so each list is written in both; they must agree
    from bayescheck.inference.engines import mixture_em, naive_bayes_stats, sbl
    from bayescheck.models import ard, gaussian_mixture, naive_bayes

    assert ard.FIT_METHODS == sbl.METHODS
    assert gaussian_mixture.COVARIANCE_KINDS == mixture_em.COVARIANCE_KINDS
    assert set(naive_bayes.KINDS) == {naive_bayes_stats.GAUSSIAN, naive_bayes_stats.CATEGORICAL}
