"""A user's own PyMC model: its conjugate structure recognised, its posterior solved exactly.

- :func:`exact` reads a ``pm.Model`` through PyMC's and PyTensor's public interfaces and
  returns an :class:`ExactPosterior` (or raises :class:`NotConjugate` naming the variable that
  breaks conjugacy);
- :func:`check_model` samples the same model with NUTS and judges the draws against the exact
  posterior, as ``bayescheck check`` judges a spec's (:mod:`bayescheck.reports.model_check`
  writes its files and report);
- :func:`load_model_file` finds the ``pm.Model`` a Python file defines (``bayescheck check
  model.py``).
"""

from .check import ModelCheck, check_model
from .errors import NotConjugate
from .loader import find_model_file, load_model_file
from .posterior import ExactPosterior, exact

__all__ = ["ExactPosterior", "ModelCheck", "NotConjugate", "check_model", "exact",
           "find_model_file", "load_model_file"]
