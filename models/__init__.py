"""What is modelled: model objects, their PyMC declarations, spec loading and data sources."""

from .beta_bernoulli import BetaBernoulli, DirichletCategorical
from .data import Batch, DataSource, numeric_columns
from .errors import BayescheckError, DataError, NotIdentifiedError, SpecError
from .linear_regression import LinearRegression
from .registry import FAMILIES
from .spec import SamplingConfig, Section, Spec, load_spec

__all__ = [
    "FAMILIES",
    "Batch",
    "BayescheckError",
    "BetaBernoulli",
    "DataError",
    "DataSource",
    "DirichletCategorical",
    "LinearRegression",
    "NotIdentifiedError",
    "SamplingConfig",
    "Section",
    "Spec",
    "SpecError",
    "load_spec",
    "numeric_columns",
]
