"""Connecting the Beta-Bernoulli and Dirichlet-categorical models to the conjugate count engines.

The models are :class:`models.BetaBernoulli` and :class:`models.DirichletCategorical`, the
engines those of :mod:`inference.engines.counts`, fed over a stream of batches.

Counts are sufficient statistics: each batch adds its successes / trials (or its count per
label) to the state, and the posterior is formed once at the end, so any cut of the data into
batches gives exactly the same posterior. The state is checkpointed after every batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.beta_bernoulli import BetaBernoulli, DirichletCategorical
from models.spec import Spec

from ..engines.counts import (
    BernoulliStats,
    BetaPrior,
    CategoricalStats,
    DirichletPrior,
    bernoulli_beta,
    categorical_dirichlet,
)
from ..engines.dist import Dist
from ..result import AnalyticFit, ExactMarginal
from ..streaming import CHECKPOINT_NAME, model_key, run_stream

__all__ = ["LabelCounts", "fit_beta_bernoulli", "fit_dirichlet_categorical"]


@dataclass(frozen=True)
class LabelCounts:
    """Streaming state of the Dirichlet-categorical model: a count per label seen so far.

    Attributes
    ----------
    labels : numpy.ndarray of str
        The labels (the declared categories, or those seen so far, in first-seen order).
    counts : numpy.ndarray of int64
        The count of each label.
    """

    labels: np.ndarray
    counts: np.ndarray

    @classmethod
    def empty(cls, labels=()) -> LabelCounts:
        """Zero counts over ``labels``."""
        return cls(np.asarray(list(labels), dtype=str), np.zeros(len(labels), dtype=np.int64))

    def add(self, labels: np.ndarray) -> LabelCounts:
        """Add one batch of labels; labels not seen before are appended."""
        values, counts = np.unique(np.asarray(labels, dtype=str), return_counts=True)
        known = {str(label): i for i, label in enumerate(self.labels.tolist())}
        new = [str(v) for v in values.tolist() if str(v) not in known]
        all_labels = np.concatenate([self.labels.astype(str), np.asarray(new, dtype=str)])
        total = np.concatenate([self.counts.astype(np.int64), np.zeros(len(new), np.int64)])
        index = {label: i for i, label in enumerate(all_labels.tolist())}
        np.add.at(total, [index[str(v)] for v in values.tolist()], counts)
        return LabelCounts(all_labels, total)

    def ordered(self, categories) -> np.ndarray:
        """The counts in the order of ``categories`` (labels not listed count zero)."""
        known = dict(zip(self.labels.tolist(), self.counts.tolist(), strict=True))
        return np.array([known.get(c, 0) for c in categories], dtype=np.int64)


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


def _stream(spec: Spec, initial, absorb, summarize, out, resume, progress):
    files = spec.data.files()
    return run_stream(spec.data, initial_state=initial, absorb=absorb, summarize=summarize,
                      checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME,
                      resume=resume, model_key=model_key(spec), total=len(files) or None,
                      progress=progress)


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

    def absorb(state: BernoulliStats, batch):
        y = model.outcomes(batch)
        return state + BernoulliStats(k=int(y.sum()), n=int(y.size)), int(y.size)

    def summarize(state: BernoulliStats):
        return _interval("p", bernoulli_beta(stats=state, prior=prior).dist())

    started = time.perf_counter()
    stream = _stream(spec, BernoulliStats(k=0, n=0), absorb, summarize, out, resume, progress)
    post = bernoulli_beta(stats=stream.state, prior=prior)
    dist = post.dist()
    parameters = {"p": {
        "distribution": "beta", "a": post.a, "b": post.b,
        "mean": post.mean, "sd": post.sd,
        "q05": float(dist.ppf(0.05)), "q95": float(dist.ppf(0.95)),
        "mle": _or_none(post.mle), "map": _or_none(post.map),
        "predictive": post.predictive(),
        "successes": post.stats.k, "trials": post.stats.n,
        "prior": {"distribution": "beta", "a": prior.a, "b": prior.b},
    }}
    return AnalyticFit(
        model=model.name, parameters=parameters,
        marginals=[ExactMarginal("p", "p", {}, dist)],
        priors=[ExactMarginal("p", "p", {}, prior.dist())],
        log_evidence=post.log_marginal_likelihood(), n_rows=post.stats.n,
        batches=_records(stream), trajectory=stream.trajectory,
        seconds=time.perf_counter() - started, state=post)


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

    def absorb(state: LabelCounts, batch):
        labels = model.labels(batch)
        return state.add(labels), int(labels.size)

    def summarize(state: LabelCounts):
        if declared is None:  # the label set is not final until the stream ends
            return None
        post = _posterior(model, declared, state.ordered(declared))
        record = {"mean": {}, "q05": {}, "q95": {}}
        for c, m in zip(declared, post.marginals(), strict=True):
            for key, value in _interval(f"pi[{c}]", m).items():
                record[key].update(value)
        return record

    started = time.perf_counter()
    stream = _stream(spec, LabelCounts.empty(declared or ()), absorb, summarize, out, resume,
                     progress)
    cats = model.resolve_categories(stream.state.labels.tolist(), where=spec.data.label)
    post = _posterior(model, cats, stream.state.ordered(cats))
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
        model=model.name, parameters=parameters,
        marginals=[ExactMarginal(f"pi[{c}]", "pi", {"category": c}, m)
                   for c, m in zip(cats, post.marginals(), strict=True)],
        priors=[ExactMarginal(f"pi[{c}]", "pi", {"category": c}, Dist("beta", a, a0 - a))
                for c, a in zip(cats, prior.alpha.tolist(), strict=True)],
        log_evidence=post.log_marginal_likelihood(), n_rows=post.stats.n,
        batches=_records(stream), trajectory=stream.trajectory,
        seconds=time.perf_counter() - started, state=post)


def _posterior(model: DirichletCategorical, cats, counts):
    prior = DirichletPrior(alpha=model.alpha(cats), categories=tuple(cats))
    return categorical_dirichlet(stats=CategoricalStats(counts=counts, categories=tuple(cats)),
                                 prior=prior)
