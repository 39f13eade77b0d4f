"""How models are solved: numpy engines, the NUTS runner and the analytic-vs-sampled check.

The engines never import PyMC or ArviZ; :mod:`inference.nuts` imports PyMC when it samples
and :mod:`inference.compare` imports arviz-stats when it compares.
"""

from .compare import (
    Comparison,
    Diagnostics,
    ParameterCheck,
    Thresholds,
    compare_draws,
    compare_idata,
    draws_from_idata,
)
from .dispatch import ENGINES, fit
from .linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    RegressionStats,
    regression_stats,
)
from .nuts import SampleResult, sample_nuts
from .result import AnalyticFit, ExactMarginal
from .streaming import BatchRecord, StreamResult, run_stream

__all__ = [
    "ENGINES",
    "AnalyticFit",
    "BatchRecord",
    "Comparison",
    "Diagnostics",
    "ExactMarginal",
    "GaussianPosterior",
    "NormalInverseGammaPosterior",
    "ParameterCheck",
    "RegressionStats",
    "SampleResult",
    "StreamResult",
    "Thresholds",
    "compare_draws",
    "compare_idata",
    "draws_from_idata",
    "fit",
    "regression_stats",
    "run_stream",
    "sample_nuts",
]
