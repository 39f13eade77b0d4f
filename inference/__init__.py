"""How models are solved.

- :mod:`bayescheck.inference.engines`: the mathematics, numpy/scipy only (no models, pandas, PyMC);
- :mod:`bayescheck.inference.families`: one glue module per ``models/<name>.py``: spec + data ->
  engine -> :class:`AnalyticFit`;
- top level: the stream driver, the NUTS runner, the analytic-vs-sampled comparison and
  calibration (SBC).

:mod:`bayescheck.inference.checking.sampling` imports PyMC when it samples and :mod:`bayescheck.inference.checking.compare` imports
arviz-stats (and with it scipy.stats) when it compares. Names are imported on first use, so
the analytic path stays light.
"""

from importlib import import_module

_EXPORTS = {
    "Comparison": "compare", "Diagnostics": "compare", "ParameterCheck": "compare",
    "Thresholds": "compare", "compare_draws": "compare", "compare_idata": "compare",
    "draws_from_idata": "compare",
    "engine": "dispatch", "fit": "dispatch",
    "GaussianPosterior": "engines.linear_gaussian",
    "NormalInverseGammaPosterior": "engines.linear_gaussian",
    "RegressionStats": "engines.linear_gaussian", "regression_stats": "engines.linear_gaussian",
    "SampleResult": "nuts", "sample_nuts": "nuts", "SBCRun": "sbc", "run_sbc": "sbc",
    "AnalyticFit": "result", "ExactMarginal": "result",
    "fit_beta_bernoulli": "families.beta_bernoulli",
    "fit_dirichlet_categorical": "families.beta_bernoulli",
    "BatchRecord": "streaming", "StreamResult": "streaming", "run_stream": "streaming",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
