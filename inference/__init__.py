"""How models are solved: numpy engines, the NUTS runner and the analytic-vs-sampled check.

The engines never import PyMC or ArviZ; :mod:`inference.nuts` imports PyMC when it samples
and :mod:`inference.compare` imports arviz-stats when it compares. Names are imported on
first use, so the analytic path stays light.
"""

from importlib import import_module

_EXPORTS = {
    "Comparison": "compare", "Diagnostics": "compare", "ParameterCheck": "compare",
    "Thresholds": "compare", "compare_draws": "compare", "compare_idata": "compare",
    "draws_from_idata": "compare",
    "ENGINES": "dispatch", "engine": "dispatch", "fit": "dispatch",
    "GaussianPosterior": "linear_gaussian", "NormalInverseGammaPosterior": "linear_gaussian",
    "RegressionStats": "linear_gaussian", "regression_stats": "linear_gaussian",
    "SampleResult": "nuts", "sample_nuts": "nuts",
    "AnalyticFit": "result", "ExactMarginal": "result",
    "LabelCounts": "beta_bernoulli", "fit_beta_bernoulli": "beta_bernoulli",
    "fit_dirichlet_categorical": "beta_bernoulli",
    "BatchRecord": "streaming", "StreamResult": "streaming", "run_stream": "streaming",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
