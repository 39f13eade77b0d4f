"""The discrete Bayes-rule calculator: P(h | D) proportional to P(D | h) P(h).

The spec holds the numbers (no data file)::

    model = "bayes_rule"
    observation = "positive test"        # optional label of D
    [prior]                              # P(h), summing to 1
    cancer = 0.008
    no_cancer = 0.992
    [likelihood]                         # P(D | h), same hypotheses
    cancer = 0.98
    no_cancer = 0.03

Declared in PyMC as ``h ~ Categorical(prior)`` with the observation's log likelihood
``log P(D | h)`` as a potential. ``h`` is discrete, so NUTS cannot sample it: the check
samples with PyMC's Gibbs step for categorical variables (``sampler = "pymc"``) and compares
the frequency of each hypothesis in the draws (the deterministic ``posterior``, an indicator
per hypothesis, whose posterior mean is P(h | D)) with the exact posterior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .interface import Model
from .spec import SamplingConfig, Section, Spec

__all__ = ["BayesRule", "bayes_rule_spec"]


@dataclass(frozen=True, eq=False)
class BayesRule(Model):
    """A prior over discrete hypotheses and the likelihood of one observation under each.

    Parameters
    ----------
    hypotheses : tuple of str
    prior : numpy.ndarray
        P(h), non-negative, summing to 1.
    likelihood : numpy.ndarray
        P(D | h), non-negative (a density is allowed; it need not sum to 1).
    observation : str
        Label of D, for the report.
    """

    hypotheses: tuple[str, ...]
    prior: np.ndarray
    likelihood: np.ndarray
    observation: str = "D"

    name = "bayes_rule"
    #: The hypothesis is discrete: sample with PyMC's own (Gibbs) step, not NUTS.
    sampler = "pymc"

    def declare(self, source=None, fit=None):
        """The PyMC model: ``h`` (categorical), the observation as a potential, and ``posterior``.

        ``posterior`` is deterministic (dims ``hypothesis``): 1 where h is that hypothesis.
        """
        import pymc as pm
        import pytensor.tensor as pt

        K = len(self.hypotheses)
        with np.errstate(divide="ignore"):
            log_lik = np.log(self.likelihood)
        with pm.Model(coords={"hypothesis": list(self.hypotheses)}) as model:
            h = pm.Categorical("h", p=self.prior)
            pm.Potential("observation", pt.as_tensor_variable(log_lik)[h])
            pm.Deterministic("posterior", pt.cast(pt.eq(h, np.arange(K)), "float64"),
                             dims="hypothesis")
        return model


def _table(top: Section, key: str) -> dict[str, float]:
    section = top.subsection(key)
    if not section.table:
        raise top.error(key, "expected a table hypothesis = probability, with at least two "
                             "hypotheses")
    values = {h: float(section.number(h, minimum=0)) for h in list(section.table)}
    section.finish()
    return values


def bayes_rule_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~models.spec.Spec` for ``model = "bayes_rule"``.

    Keys: ``observation`` (optional label), ``[prior]`` and ``[likelihood]`` (hypothesis =
    number, the same hypotheses), ``[sampling]``. There is no ``[data]``.
    """
    observation = top.string("observation", "D")
    prior = _table(top, "prior")
    lik = _table(top, "likelihood")
    if len(prior) < 2:
        raise top.error("prior", f"expected at least two hypotheses, got {list(prior)}")
    if set(lik) != set(prior):
        missing = sorted(set(prior) - set(lik)) or sorted(set(lik) - set(prior))
        raise top.error("likelihood", f"expected the hypotheses of [prior] "
                                      f"({', '.join(prior)}); {missing[0]!r} is in one table "
                                      f"but not the other")
    total = math.fsum(prior.values())
    if abs(total - 1.0) > 1e-9 or max(prior.values()) > 1:
        raise top.error("prior", f"probabilities must sum to 1, got a sum of {total!r}")
    hyps = tuple(prior)
    p = np.array([prior[h] for h in hyps])
    L = np.array([lik[h] for h in hyps])
    if not np.any(p * L > 0):
        raise top.error("likelihood", "the observation is impossible under every hypothesis "
                                      "with prior mass: P(D) = 0")
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    model = BayesRule(hypotheses=hyps, prior=p, likelihood=L, observation=observation)
    return Spec(model=model, data=None, sampling=sampling, path=path, raw=top.table)
