"""Connecting the Beta-Bernoulli and Dirichlet-categorical models to the conjugate count engines.

The models are :class:`bayescheck.models.BetaBernoulli` and
:class:`bayescheck.models.DirichletCategorical`, the
engines those of :mod:`bayescheck.inference.engines.counts`, fed over a stream of batches.

Counts are sufficient statistics: each batch adds its successes / trials (or its count per
label) to the state, and the posterior is formed once at the end, so any cut of the data into
batches gives exactly the same posterior. The state, the engine's statistics themselves
(:class:`~bayescheck.inference.engines.counts.BernoulliStats`,
:class:`~bayescheck.inference.engines.counts.CategoricalStats`, whose label set grows over the
stream when it is not declared), is checkpointed after every batch.
"""

from __future__ import annotations

import operator
import time
from functools import partial
from pathlib import Path

import numpy as np
from bayescheck.inference.engines.counts import (
    BernoulliStats,
    BetaPrior,
    CategoricalStats,
    DirichletPrior,
    bernoulli_beta,
    categorical_dirichlet,
)
from bayescheck.inference.engines.dist import Dist
from bayescheck.inference.families.predictive import posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, ExactMarginal, FitRecord, Posterior
from bayescheck.inference.scale.distributed import stream_or_reduce
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, model_key, run_stream
from bayescheck.models.beta_bernoulli import BetaBernoulli, DirichletCategorical
from bayescheck.models.errors import BayescheckError
from bayescheck.models.spec import Spec

__all__ = ["FAMILIES", "exact_draws_beta_bernoulli", "exact_draws_dirichlet_categorical",
           "fit_beta_bernoulli", "fit_dirichlet_categorical", "predict_beta_bernoulli",
           "predict_dirichlet_categorical"]


def _interval(name: str, dist) -> dict:
    return {"mean": {name: float(dist.mean())}, "q05": {name: float(dist.ppf(0.05))},
            "q95": {name: float(dist.ppf(0.95))}}


def _or_none(estimate):
    """An estimate that may not exist (flat likelihood, no unique mode) as a list or None."""
    try:
        value = estimate()
    except ValueError:
        return None
    return np.asarray(value).tolist()


def _stream(spec: Spec, initial, statistic, merge, summarize, out, resume, progress):
    """The counts of every batch added to ``initial``: streamed, or merged on a cluster."""
    files = spec.data.files()
    return stream_or_reduce(
        spec.data, initial_state=initial, statistic=statistic, apply=merge, merge=merge,
        summarize=summarize, progress=progress,
        checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
        model_key=model_key(spec),
        stream=lambda absorb, statistic: run_stream(
            spec.data, initial_state=initial, absorb=absorb, statistic=statistic,
            summarize=summarize,
            checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
            model_key=model_key(spec), total=len(files) or None, progress=progress))


def _bernoulli_stats(model: BetaBernoulli, batch) -> BernoulliStats:
    y = model.outcomes(batch)
    return BernoulliStats(k=int(y.sum()), n=int(y.size))


def _categorical_stats(model: DirichletCategorical, batch) -> CategoricalStats:
    labels = np.asarray(model.labels(batch), dtype=str)
    return CategoricalStats(counts=np.zeros(0, dtype=np.int64)).add_labels(labels)


def _records(stream) -> list[dict]:
    return [{"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
            for r in stream.records]


def fit_beta_bernoulli(spec: Spec, *, out: Path | None = None, resume: bool = False,
                       progress: bool = False) -> AnalyticFit:
    """Stream the outcomes through the Beta-Bernoulli update: Beta(a + k, b + n - k).

    ``posterior.json`` holds, for ``p``: the posterior shapes, mean, sd, 5 / 95 % quantiles,
    the maximum-likelihood estimate k / n, the MAP (a + k - 1) / (a + b + n - 2) (the mode of
    the posterior, on the boundary when a shape is <= 1), the predictive probability that the
    next outcome is 1, and the counts. ``log_evidence`` is the log probability of the observed
    sequence, log B(a + k, b + n - k) - log B(a, b).
    """
    model: BetaBernoulli = spec.model
    prior = BetaPrior(a=model.a, b=model.b)

    def summarize(state: BernoulliStats):
        return _interval("p", bernoulli_beta(stats=state, prior=prior).dist())

    started = time.perf_counter()
    stream = _stream(spec, BernoulliStats(k=0, n=0), partial(_bernoulli_stats, model),
                     operator.add, summarize, out, resume, progress)
    post = bernoulli_beta(stats=stream.state, prior=prior)
    dist = post.dist()
    parameters = {
        "p": {
            "distribution": "beta",
            "a": post.a,
            "b": post.b,
            "mean": post.mean,
            "sd": post.sd,
            "q05": float(dist.ppf(0.05)),
            "q95": float(dist.ppf(0.95)),
            "mle": _or_none(post.mle),
            "map": _or_none(post.map),
            "predictive": post.predictive(),
            "successes": post.stats.k,
            "trials": post.stats.n,
            "prior": {"distribution": "beta", "a": prior.a, "b": prior.b},
        }
    }
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=[ExactMarginal("p", "p", {}, dist)],
            log_evidence=post.log_marginal_likelihood(),
            priors=[ExactMarginal("p", "p", {}, prior.dist())],
            state=post,
        ),
        FitRecord(
            n_rows=post.stats.n,
            batches=_records(stream),
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
        ),
    )


def fit_dirichlet_categorical(spec: Spec, *, out: Path | None = None, resume: bool = False,
                              progress: bool = False) -> AnalyticFit:
    """Stream the labels through the Dirichlet-categorical update: Dirichlet(alpha + counts).

    ``posterior.json`` holds, for ``pi`` (in category order): the posterior concentrations,
    marginal means and sds (each pi_k is Beta(alpha_k, alpha_0 - alpha_k)), the
    maximum-likelihood estimate c_k / n, the MAP (mode; null when it is not unique), the
    predictive probabilities of the next label, and the counts. With concentration 1 the
    mean is the Laplace-corrected estimate (c_k + 1) / (n + N). ``log_evidence`` is the
    Dirichlet-multinomial log probability of the observed sequence.
    """
    model: DirichletCategorical = spec.model
    declared = model.categories

    def summarize(state: CategoricalStats):
        if declared is None:  # the label set is not final until the stream ends
            return None
        post = _posterior(model, declared, state.counts_for(declared))
        record = {"mean": {}, "q05": {}, "q95": {}}
        for c, m in zip(declared, post.marginals(), strict=True):
            for key, value in _interval(f"pi[{c}]", m).items():
                record[key].update(value)
        return record

    started = time.perf_counter()
    initial = CategoricalStats(counts=np.zeros(len(declared or ()), dtype=np.int64),
                               categories=tuple(declared or ()))
    stream = _stream(spec, initial, partial(_categorical_stats, model), CategoricalStats.union,
                     summarize, out, resume, progress)
    cats = model.resolve_categories(stream.state.categories, where=spec.data.label)
    post = _posterior(model, cats, stream.state.counts_for(cats))
    prior = post.prior
    parameters = {"pi": {
        "categories": list(cats), "distribution": "dirichlet",
        "alpha": post.alpha.tolist(), "mean": post.mean.tolist(), "sd": post.sd.tolist(),
        "q05": [float(m.ppf(0.05)) for m in post.marginals()],
        "q95": [float(m.ppf(0.95)) for m in post.marginals()],
        "mle": _or_none(post.mle), "map": _or_none(post.map),
        "predictive": post.predictive().tolist(), "counts": post.stats.counts.tolist(),
        "prior": {"distribution": "dirichlet", "alpha": prior.alpha.tolist()},
    }}
    a0 = float(prior.alpha.sum())
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=[
                ExactMarginal(f"pi[{c}]", "pi", {"category": c}, m)
                for c, m in zip(cats, post.marginals(), strict=True)
            ],
            log_evidence=post.log_marginal_likelihood(),
            priors=[
                ExactMarginal(f"pi[{c}]", "pi", {"category": c}, Dist("beta", a, a0 - a))
                for c, a in zip(cats, prior.alpha.tolist(), strict=True)
            ],
            state=post,
        ),
        FitRecord(
            n_rows=post.stats.n,
            batches=_records(stream),
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
        ),
    )


def _posterior(model: DirichletCategorical, cats, counts):
    prior = DirichletPrior(alpha=model.alpha(cats), categories=tuple(cats))
    return categorical_dirichlet(stats=CategoricalStats(counts=counts, categories=tuple(cats)),
                                 prior=prior)


def _no_rows(spec: Spec, batch) -> None:
    if batch is not None:
        raise BayescheckError(f"{batch.name}: {spec.model.name} predicts the next outcome, "
                              f"which has no covariates: leave out --data")


def predict_beta_bernoulli(spec: Spec, posterior: dict, batch=None, *, level: float = 0.9,
                           where: str = "posterior.json") -> dict[str, np.ndarray]:
    """Posterior predictive of the next outcome: P(1) = a / (a + b) under Beta(a, b).

    Parameters
    ----------
    spec : models.Spec
        The spec the fit came from.
    posterior : dict
        ``posterior.json`` of ``bayescheck fit``.
    batch : None
        Unused (no covariates).
    level : float
        Unused.
    where : str
        Where ``posterior`` was read from, for error messages.

    Returns
    -------
    dict of str to numpy.ndarray
        ``outcome`` (1, 0) and its ``probability``.
    """
    _no_rows(spec, batch)
    a = float(posterior_value(posterior, "p", "a", where=where))
    b = float(posterior_value(posterior, "p", "b", where=where))
    return {"outcome": np.array([1, 0]), "probability": np.array([a, b]) / (a + b)}


def predict_dirichlet_categorical(spec: Spec, posterior: dict, batch=None, *,
                                  level: float = 0.9,
                                  where: str = "posterior.json") -> dict[str, np.ndarray]:
    """Posterior predictive of the next outcome: P(k) = alpha_k / sum(alpha).

    Parameters
    ----------
    spec : models.Spec
        The spec the fit came from.
    posterior : dict
        ``posterior.json`` of ``bayescheck fit``.
    batch : None
        Unused (no covariates).
    level : float
        Unused.
    where : str
        Where ``posterior`` was read from, for error messages.

    Returns
    -------
    dict of str to numpy.ndarray
        ``outcome`` (each category) and its ``probability``.
    """
    _no_rows(spec, batch)
    alpha = np.asarray(posterior_value(posterior, "pi", "alpha", where=where), dtype=float)
    categories = posterior_value(posterior, "pi", "categories", where=where)
    return {"outcome": np.asarray(categories, dtype=object), "probability": alpha / alpha.sum()}


def exact_draws_beta_bernoulli(posterior: dict, *, draws: int, chains: int,
                               rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of the declaration's ``p`` from its exact posterior Beta(a, b).

    Returns ``({"p": ((), array (chains, draws))}, {})`` (see
    :mod:`bayescheck.inference.families.exact`).
    """
    a = float(posterior_value(posterior, "p", "a"))
    b = float(posterior_value(posterior, "p", "b"))
    return {"p": ((), rng.beta(a, b, size=(chains, draws)))}, {}


def exact_draws_dirichlet_categorical(posterior: dict, *, draws: int, chains: int,
                                      rng: np.random.Generator) -> tuple[dict, dict]:
    """Independent draws of the declaration's ``pi`` (dims ``category``) from Dirichlet(alpha).

    Returns ``({"pi": (("category",), array (chains, draws, N))}, {"category": labels})``.
    """
    alpha = np.asarray(posterior_value(posterior, "pi", "alpha"), dtype=float)
    categories = list(posterior_value(posterior, "pi", "categories"))
    pi = rng.dirichlet(alpha, size=(chains, draws))
    return {"pi": (("category",), pi)}, {"category": categories}


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("beta_bernoulli", model=BetaBernoulli, fit=fit_beta_bernoulli,
           predict=predict_beta_bernoulli, exact_draws=exact_draws_beta_bernoulli,
           on_cluster=True),
    Family("dirichlet_categorical", model=DirichletCategorical, fit=fit_dirichlet_categorical,
           predict=predict_dirichlet_categorical, exact_draws=exact_draws_dirichlet_categorical,
           on_cluster=True),
)
