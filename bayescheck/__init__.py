"""bayescheck's public API in one import: ``from bayescheck import fit, check, predict, ...``.

A small facade over the packages (``data``, ``models``, ``inference``, ``reports``), so Python
users do not depend on their internal layout. Every name is imported on first use:
``import bayescheck`` loads no numpy, pandas or PyMC.

- :func:`load_spec` reads a spec file into a :class:`Spec` (model, data, sampling);
- :func:`fit` runs the closed-form (or EM / type-II ML) fit, returning an ``AnalyticFit``;
- :func:`predict` gives a fit's predictions for new rows as a ``pandas.DataFrame``;
- :func:`check` fits, samples with NUTS and compares (``out=None``: in memory; with a folder,
  the report files too);
- :func:`calibrate` runs simulation-based calibration of the engine;
- :func:`exact_posterior` draws from a fit's exact posterior as an ArviZ ``DataTree``;
- :func:`exact` recognises the conjugate structure of a user's own ``pm.Model`` and gives its
  exact posterior; :func:`check_model` judges NUTS on that model against it (with a folder,
  the report files too).

The nine model classes (``LinearRegression``, ``ARD``, ``GaussianMixture``, ``NaiveBayes``,
``BetaBernoulli``, ``DirichletCategorical``, ``BayesRule``, ``BayesianNetwork``,
``SemiNaiveBayes``) build specs without a TOML file, with :class:`Spec` and
:class:`DataSource`. The scikit-learn estimators are in :mod:`bayescheck.estimators` (they
need scikit-learn).
"""

from importlib import import_module

_MODELS = "bayescheck.models"
_EXPORTS = {
    # what to do with a spec
    "load_spec": f"{_MODELS}.spec",
    "fit": "bayescheck.api",
    "check": "bayescheck.api",
    "calibrate": "bayescheck.api",
    "predict": "bayescheck.api",
    "exact_posterior": "bayescheck.api",
    # a user's own PyMC model
    "exact": "bayescheck.inference.conjugacy",
    "check_model": "bayescheck.reports.model_check",
    "NotConjugate": "bayescheck.inference.conjugacy",
    # building specs in Python: the nine model classes, the spec, the data
    "LinearRegression": f"{_MODELS}.linear_regression",
    "ARD": f"{_MODELS}.ard",
    "GaussianMixture": f"{_MODELS}.gaussian_mixture",
    "NaiveBayes": f"{_MODELS}.naive_bayes",
    "BetaBernoulli": f"{_MODELS}.beta_bernoulli",
    "DirichletCategorical": f"{_MODELS}.beta_bernoulli",
    "BayesRule": f"{_MODELS}.bayes_rule",
    "BayesianNetwork": f"{_MODELS}.bayesian_network",
    "SemiNaiveBayes": f"{_MODELS}.semi_naive_bayes",
    "Spec": f"{_MODELS}.spec",
    "SamplingConfig": f"{_MODELS}.spec",
    "DataSource": "bayescheck.data.sources",
    # what comes back
    "AnalyticFit": "bayescheck.inference.result",
    "CheckResult": "bayescheck.inference.checking.check",
    # errors
    "BayescheckError": f"{_MODELS}.errors",
    "DataError": f"{_MODELS}.errors",
    "SpecError": f"{_MODELS}.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
