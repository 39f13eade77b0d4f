"""Connecting a :class:`bayescheck.models.BayesRule` to the decision engine.

The engine is :func:`bayescheck.inference.engines.decisions.bayes_rule`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from bayescheck.inference.engines.decisions import bayes_rule
from bayescheck.inference.families.predictive import posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, ExactMarginal, FitRecord, Posterior
from bayescheck.models.bayes_rule import BayesRule
from bayescheck.models.errors import SpecError
from bayescheck.models.spec import Spec

__all__ = ["FAMILIES", "exact_draws_bayes_rule", "fit_bayes_rule"]


def fit_bayes_rule(spec: Spec, *, out: Path | None = None, resume: bool = False,
                   progress: bool = False) -> AnalyticFit:
    """P(h | D) by enumeration, in log space.

    The oracles are the exact posterior probabilities, compared as the means of the sampled
    indicators ``posterior[h]``.
    """
    model: BayesRule = spec.model
    started = time.perf_counter()
    try:
        r = bayes_rule(prior=dict(zip(model.hypotheses, model.prior, strict=True)),
                       likelihoods=dict(zip(model.hypotheses, model.likelihood, strict=True)))
    except ValueError as exc:
        raise SpecError(str(exc), path=spec.path) from None
    hyps = list(model.hypotheses)
    post = {h: float(r[h]) for h in hyps}
    parameters = {
        "posterior": {"hypotheses": hyps, "mean": post,
                      "sd": {h: math.sqrt(p * (1 - p)) for h, p in post.items()},
                      "distribution": "categorical"},
        "prior": dict(zip(hyps, model.prior.tolist(), strict=True)),
        "likelihood": dict(zip(hyps, model.likelihood.tolist(), strict=True)),
        "joint": dict(zip(hyps, r.joint.tolist(), strict=True)),
        "evidence": r.evidence,
        "observation": model.observation,
    }
    oracles = [ExactMarginal(f"posterior[{h}]", "posterior", {"hypothesis": h}, None,
                             exact_mean=p) for h, p in post.items()]
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=oracles,
            log_evidence=math.log(r.evidence),
            state=r,
        ),
        FitRecord(n_rows=0, seconds=time.perf_counter() - started),
    )


def exact_draws_bayes_rule(posterior: dict, *, draws: int, chains: int,
                           rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of the declaration's ``h`` and ``posterior`` from P(h | D).

    ``h`` is the hypothesis' index (Categorical over P(h | D)); ``posterior`` (dims
    ``hypothesis``) its indicator, whose mean is P(h | D). Returns
    ``({"h": ((), ...), "posterior": (("hypothesis",), ...)}, {"hypothesis": names})``.
    """
    hypotheses = list(posterior_value(posterior, "posterior", "hypotheses"))
    mean = posterior_value(posterior, "posterior", "mean")
    p = np.array([mean[h] for h in hypotheses], dtype=float)
    h = rng.choice(len(hypotheses), size=(chains, draws), p=p / p.sum())
    indicator = (h[..., None] == np.arange(len(hypotheses))).astype(float)
    return {"h": ((), h), "posterior": (("hypothesis",), indicator)}, {"hypothesis": hypotheses}


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("bayes_rule", model=BayesRule, fit=fit_bayes_rule, exact_draws=exact_draws_bayes_rule),
)
