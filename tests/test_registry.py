"""The one table of model names resolves on both sides: spec reader and Family record."""

import inspect

import pytest
from bayescheck.inference.families import family
from bayescheck.models.interface import Model
from bayescheck.models.registry import MODELS, spec_reader


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_has_a_spec_reader_and_a_family_record(name):
    reader = spec_reader(name)
    assert reader.__module__ == f"bayescheck.models.{MODELS[name]}"
    record = family(name)
    assert record.name == name
    assert record.fit.__module__ == f"bayescheck.inference.families.{MODELS[name]}"
    assert {"spec", "out", "resume", "progress"} <= set(inspect.signature(record.fit).parameters)
    assert record.model.name == name and Model in record.model.__mro__  # declared, not probed
    assert record.model.__module__ == f"bayescheck.models.{MODELS[name]}"


def test_an_unknown_model_is_refused_naming_the_known_ones():
    from bayescheck.models.errors import SpecError

    with pytest.raises(SpecError, match="unknown model 'nope'; known models: ard, "):
        family("nope")


def test_every_family_module_has_a_model_module():
    import pkgutil

    import bayescheck.inference.families
    import bayescheck.models

    helpers = {"registry", "exact", "predictive"}
    families = {m.name for m in pkgutil.iter_modules(bayescheck.inference.families.__path__)}
    model_modules = {m.name for m in pkgutil.iter_modules(bayescheck.models.__path__)}
    assert families - helpers == set(MODELS.values())
    assert families - helpers <= model_modules


def test_the_cluster_families_are_those_whose_statistics_merge():
    from bayescheck.inference.families import cluster_models

    assert set(cluster_models()) == {"linear_regression", "beta_bernoulli",
                                     "dirichlet_categorical", "naive_bayes", "gaussian_mixture"}



def test_the_spec_vocabularies_are_what_the_engines_implement():
    # models cannot import the engines, so each list is written in both; they must agree
    from bayescheck.inference.engines import mixture_em, naive_bayes_stats, sbl
    from bayescheck.models import ard, gaussian_mixture, naive_bayes

    assert ard.FIT_METHODS == sbl.METHODS
    assert gaussian_mixture.COVARIANCE_KINDS == mixture_em.COVARIANCE_KINDS
    assert set(naive_bayes.KINDS) == {naive_bayes_stats.GAUSSIAN, naive_bayes_stats.CATEGORICAL}
