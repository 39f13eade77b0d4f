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

from . import validation
from .interface import Model
from .spec import SamplingConfig, Section, Spec
from .validation import InvalidArgument

__all__ = ["SPEC_READERS", "BayesRule", "bayes_rule_spec"]


@dataclass(frozen=True, eq=False)
class BayesRule(Model):
    """A prior over discrete hypotheses and the likelihood of one observation under each.

    Parameters
    ----------
    hypotheses : tuple of str
    prior : numpy.ndarray
        P(h), non-negative, summing to 1.
    likelihood : numpy.ndarray
        P(D | h), in [0, 1] (it need not sum to 1 over the hypotheses); with
        ``density=True``, densities p(D | h) >= 0 of any size.
    observation : str
        Label of D, for the report.
    density : bool
        Whether ``likelihood`` holds densities rather than probabilities.
    """

    hypotheses: tuple[str, ...]
    prior: np.ndarray
    likelihood: np.ndarray
    observation: str = "D"
    density: bool = False

    name = "bayes_rule"
    #: The hypothesis is discrete: sample with PyMC's own (Gibbs) step, not NUTS.
    sampler = "pymc"

    def __post_init__(self):
        hyps = self.hypotheses
        if isinstance(hyps, str) or not all(isinstance(h, str) for h in hyps) or \
                len(hyps) < 2 or len(set(hyps)) != len(hyps):
            raise InvalidArgument("prior", f"expected at least two distinct hypotheses, got "
                                           f"{hyps!r}")
        object.__setattr__(self, "hypotheses", tuple(hyps))
        K = len(hyps)
        p = validation.vector(self.prior, K, "prior")
        L = validation.vector(self.likelihood, K, "likelihood")
        for name, values in (("prior", p), ("likelihood", L)):
            if np.any(values < 0):
                h = hyps[int(np.argmax(values < 0))]
                raise InvalidArgument(name, f"{h!r}: expected a number >= 0, got "
                                            f"{float(values[hyps.index(h)])!r}")
        total = math.fsum(p)
        if abs(total - 1.0) > 1e-9:
            raise InvalidArgument("prior", f"probabilities must sum to 1, got a sum of "
                                           f"{total!r}")
        if not self.density and np.any(L > 1):
            h = hyps[int(np.argmax(L > 1))]
            raise InvalidArgument("likelihood", f"{h!r}: a likelihood P(D | h) is a probability "
                                                f"in [0, 1], got {float(L[hyps.index(h)])!r} "
                                                f"(a percentage? write it as a fraction); for "
                                                f"densities p(D | h) set density = true")
        if not np.any(p * L > 0):
            raise InvalidArgument("likelihood", "the observation is impossible under every "
                                                "hypothesis with prior mass: P(D) = 0")
        if not isinstance(self.observation, str):
            raise InvalidArgument("observation", f"expected a label, got {self.observation!r}")
        object.__setattr__(self, "prior", p)
        object.__setattr__(self, "likelihood", L)

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
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "bayes_rule"``.

    Keys: ``observation`` (optional label), ``density`` (true when ``[likelihood]`` holds
    densities rather than probabilities), ``[prior]`` and ``[likelihood]`` (hypothesis =
    number, the same hypotheses), ``[sampling]``. There is no ``[data]``.
    """
    observation = top.string("observation", "D")
    density = top.boolean("density", False)
    prior = _table(top, "prior")
    lik = _table(top, "likelihood")
    if set(lik) != set(prior):
        missing = sorted(set(prior) - set(lik)) or sorted(set(lik) - set(prior))
        raise top.error("likelihood", f"expected the hypotheses of [prior] "
                                      f"({', '.join(prior)}); {missing[0]!r} is in one table "
                                      f"but not the other")
    hyps = tuple(prior)
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    with validation.spec_keys(path, {"prior": "prior", "likelihood": "likelihood"}):
        model = BayesRule(hypotheses=hyps, prior=[prior[h] for h in hyps],
                          likelihood=[lik[h] for h in hyps], observation=observation,
                          density=density)
    return Spec(model=model, data=None, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"bayes_rule": bayes_rule_spec}
