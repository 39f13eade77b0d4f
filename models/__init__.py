"""What is modelled: model objects, their PyMC declarations, spec loading and data sources."""

from .ard import ARD
from .bayes_rule import BayesRule
from .beta_bernoulli import BetaBernoulli, DirichletCategorical
from .data import Batch, DataSource, numeric_columns
from .errors import BayescheckError, DataError, NotIdentifiedError, SpecError
from .gaussian_mixture import GaussianMixture
from .linear_regression import LinearRegression
from .naive_bayes import NaiveBayes
from .registry import MODELS
from .spec import SamplingConfig, Section, Spec, load_spec

__all__ = [
    "ARD",
    "Batch",
    "BayesRule",
    "BayescheckError",
    "BetaBernoulli",
    "DataError",
    "DataSource",
    "DirichletCategorical",
    "GaussianMixture",
    "LinearRegression",
    "MODELS",
    "NaiveBayes",
    "NotIdentifiedError",
    "SamplingConfig",
    "Section",
    "Spec",
    "SpecError",
    "load_spec",
    "numeric_columns",
]
