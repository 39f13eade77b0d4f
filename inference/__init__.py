"""How models are solved.

- :mod:`bayescheck.inference.engines`: the mathematics, numpy/scipy only (no models, pandas,
  PyMC);
- :mod:`bayescheck.inference.families`: one glue module per ``models/<name>.py`` (spec +
  data -> engine -> :class:`AnalyticFit`), each with its :class:`Family` record;
- :mod:`bayescheck.inference.scale`: the stream of batches with its checkpoint, and the same
  statistics on a Dask cluster;
- :mod:`bayescheck.inference.checking`: NUTS runs, the analytic-vs-sampled comparison, the
  check itself and calibration (SBC);
- :mod:`bayescheck.inference.conjugacy`: a user's own PyMC model recognised and solved exactly.

Names are imported on first use, so the analytic path does not import PyMC or ArviZ.
"""

from importlib import import_module

_EXPORTS = {
    "AnalyticFit": "result", "ExactMarginal": "result", "FitRecord": "result",
    "PointEstimate": "result", "Posterior": "result",
    "Family": "families", "exact_posterior": "families", "family": "families",
    "fit": "families",
    "Comparison": "checking.compare", "Diagnostics": "checking.compare",
    "ParameterCheck": "checking.compare", "Thresholds": "checking.compare",
    "compare_draws": "checking.compare", "compare_idata": "checking.compare",
    "draws_from_idata": "checking.compare",
    "SampleResult": "checking.sampling", "sample_nuts": "checking.sampling",
    "SBCRun": "checking.sbc", "run_sbc": "checking.sbc",
    "BatchRecord": "scale.streaming", "StreamResult": "scale.streaming",
    "run_stream": "scale.streaming",
    "GaussianPosterior": "engines.linear_gaussian",
    "NormalInverseGammaPosterior": "engines.linear_gaussian",
    "RegressionStats": "engines.linear_gaussian", "regression_stats": "engines.linear_gaussian",
    "ExactPosterior": "conjugacy", "NotConjugate": "conjugacy", "check_model": "conjugacy",
    "exact": "conjugacy",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
