"""Hypothesis profiles for the property suites.

``fast`` (the default, used by ``make test``): few examples, no deadline, well under 30 s, and
derandomized: the same examples on every run, so CI's verdict on a commit does not depend on
luck. ``nightly``: many random examples, for a long run that looks for new failures::

    HYPOTHESIS_PROFILE=nightly python -m pytest -q tests/properties

A failing example is printed by Hypothesis as the inputs that reproduce it; Hypothesis'
example database is off so a run never writes into the checkout.
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "database": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

settings.register_profile("fast", max_examples=25, derandomize=True, **_COMMON)
settings.register_profile("nightly", max_examples=2000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))
