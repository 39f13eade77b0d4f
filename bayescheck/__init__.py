"""bayescheck's public API in one import: ``from bayescheck import fit, check, predict, ...``.

A small facade over the three packages (``models``, ``inference``, ``reports``), so Python
users do not depend on their internal layout. Every name is imported on first use:
``import bayescheck`` loads no numpy, pandas or PyMC.

- :func:`load_spec` reads a spec file into a :class:`Spec` (model, data, sampling);
- :func:`fit` runs the closed-form (or EM / type-II ML) fit, returning an ``AnalyticFit``;
- :func:`predict` gives a fit's predictions for new rows as a ``pandas.DataFrame``;
- :func:`check` fits, samples with NUTS, compares and writes the report files;
- :func:`calibrate` runs simulation-based calibration of the engine;
- :func:`exact_posterior` draws from a fit's exact posterior (regression, ARD given its
  hyperparameters, the count models, naive and semi-naive Bayes, Bayesian networks) as an
  ArviZ ``DataTree``.

The scikit-learn estimators are in :mod:`bayescheck.estimators` (they need scikit-learn).

The model classes (``LinearRegression``, ``ARD``, ``GaussianMixture``, ``NaiveBayes``,
``BetaBernoulli``, ``DirichletCategorical``, ``BayesRule``) build specs without a TOML file,
with :class:`Spec` and :class:`DataSource`.
"""

from importlib import import_module

_EXPORTS = {
    "fit": "bayescheck.api", "check": "bayescheck.api", "calibrate": "bayescheck.api",
    "predict": "bayescheck.api", "exact_posterior": "bayescheck.api", "load_spec": "bayescheck.models.spec",
    "Spec": "bayescheck.models.spec", "DataSource": "bayescheck.data.sources",
    "AnalyticFit": "bayescheck.inference.result",
    "BayescheckError": "bayescheck.models.errors", "DataError": "bayescheck.models.errors",
    "SpecError": "bayescheck.models.errors",
    "LinearRegression": "bayescheck.models.linear_regression", "ARD": "bayescheck.models.ard",
    "GaussianMixture": "bayescheck.models.gaussian_mixture", "NaiveBayes": "bayescheck.models.naive_bayes",
    "BetaBernoulli": "bayescheck.models.beta_bernoulli", "DirichletCategorical": "bayescheck.models.beta_bernoulli",
    "BayesRule": "bayescheck.models.bayes_rule",
    "exact": "bayescheck.inference.conjugacy", "check_model": "bayescheck.inference.conjugacy",
    "NotConjugate": "bayescheck.inference.conjugacy",
}

__all__ = [
    "ARD",
    "AnalyticFit",
    "BayesRule",
    "BayescheckError",
    "BetaBernoulli",
    "DataError",
    "DataSource",
    "DirichletCategorical",
    "GaussianMixture",
    "LinearRegression",
    "NaiveBayes",
    "NotConjugate",
    "Spec",
    "SpecError",
    "calibrate",
    "check",
    "check_model",
    "exact",
    "exact_posterior",
    "fit",
    "load_spec",
    "predict",
]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
