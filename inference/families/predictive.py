"""What the families' predictions share.

A model predicts with the ``predict`` of its
:class:`~bayescheck.inference.families.registry.Family` record,
``predict(spec, posterior, batch, *, level, where)``: the fitted numbers come from
``posterior.json`` (``posterior``, read from ``where``), the new rows from ``batch`` (None for
models without covariates), and the result is an ordered mapping of column name -> array, one
entry per new row (or per outcome). ``reports`` makes the table.
"""

from __future__ import annotations

import numpy as np
from bayescheck.inference.engines.dist import Dist
from bayescheck.models.errors import BayescheckError

__all__ = ["decision_columns", "interval_columns", "posterior_value"]


def posterior_value(posterior: dict, *keys: str, where: str = "posterior.json"):
    """``posterior["parameters"][keys[0]][keys[1]]...``; a missing key names file and key path."""
    value = posterior.get("parameters", {})
    for i, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise BayescheckError(
                f"{where}: key 'parameters.{'.'.join(keys[:i + 1])}' is missing; refit with "
                f"'bayescheck fit' of this version")
        value = value[key]
    return value


def interval_columns(dist: Dist, level: float) -> dict[str, np.ndarray]:
    """Mean, sd and central ``level`` interval of a vector predictive ``dist``, as columns."""
    if not 0.0 < level < 1.0:
        raise BayescheckError(f"--level must be strictly between 0 and 1, got {level}")
    tail = 0.5 * (1.0 - level)
    lo, hi = dist.ppf(np.array([[tail], [1.0 - tail]]))
    pct = f"{100 * level:g}"
    return {"mean": np.asarray(dist.mean(), dtype=float),
            "sd": np.asarray(dist.std(), dtype=float),
            f"lower_{pct}": lo, f"upper_{pct}": hi}


def decision_columns(classes, proba: np.ndarray, decision) -> dict[str, np.ndarray]:
    """A classifier's predict columns: ``p_<class>``, ``decision`` and ``risk_<option>``.

    Parameters
    ----------
    classes : sequence of str
        The class labels, in the order of ``proba``'s columns.
    proba : numpy.ndarray
        Class probabilities, one row per case.
    decision : inference.engines.decisions.Decision
        :func:`bayescheck.inference.engines.decisions.bayes_decision` of ``proba``.
    """
    out = {f"p_{c}": proba[:, k] for k, c in enumerate(classes)}
    out["decision"] = decision.label
    out.update({f"risk_{o}": decision.risk[:, r] for r, o in enumerate(decision.options)})
    return out
