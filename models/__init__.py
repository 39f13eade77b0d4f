"""What is modelled: model objects, their PyMC declarations and spec loading.

The data are read by :mod:`bayescheck.data`.

Names are imported on first use (as in :mod:`inference`), so loading one spec imports only
its own model module: ``fit`` of a regression does not load pandas, which the classifiers'
modules need.
"""

from importlib import import_module

_EXPORTS = {
    "ARD": "ard",
    "BayesRule": "bayes_rule",
    "BayescheckError": "errors",
    "BetaBernoulli": "beta_bernoulli",
    "DataError": "errors",
    "DirichletCategorical": "beta_bernoulli",
    "GaussianMixture": "gaussian_mixture",
    "LinearRegression": "linear_regression",
    "MODELS": "registry",
    "NaiveBayes": "naive_bayes",
    "NotIdentifiedError": "errors",
    "SamplingConfig": "spec",
    "Section": "spec",
    "Spec": "spec",
    "SpecError": "errors",
    "load_spec": "spec",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
