"""One glue module per ``models/<name>.py``, of the same name: spec + data -> engine -> fit.

Each module ends with its :class:`Family` records (fit, predict, exact draws, whether it runs
on a cluster); :func:`family` finds one by the spec's ``model`` value and :func:`fit` runs it.
:func:`exact_posterior` turns a fit's exact posterior into independent draws in a
``DataTree``.
"""

from bayescheck.inference.families.exact import exact_posterior
from bayescheck.inference.families.registry import Family, cluster_models, family, fit

__all__ = ["Family", "cluster_models", "exact_posterior", "family", "fit"]
