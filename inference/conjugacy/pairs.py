"""Conjugate pairs: Beta-Bernoulli/Binomial, Dirichlet-Categorical/Multinomial, Gamma-Poisson.

Also Gamma-Exponential. The latent ``v`` (any shape: one probability, or one per group) has a prior
with fixed
parameters, and each of its observed children uses, for each of its elements, one element of
``v`` (``p[group]``; for a rate also times a fixed exposure, ``t * lam[group]``), read as a
:class:`~.forms.Monomial`. The statistics are sums per element of ``v``; the updates are the
engines' (:mod:`bayescheck.inference.engines.counts` for Beta and Dirichlet,
:mod:`bayescheck.inference.engines.conjugate_pairs` for Gamma).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bayescheck.inference.engines import conjugate_pairs
from bayescheck.inference.engines.counts import (
    BernoulliStats,
    BetaPrior,
    CategoricalStats,
    DirichletPrior,
    bernoulli_beta,
    categorical_dirichlet,
)
from bayescheck.models.errors import DataError

from .errors import NotConjugate
from .forms import Const, DependsOn, NotMonomial
from .marginals import VariablePosterior

__all__ = ["LIKELIHOODS", "PRIORS", "WHAT", "PairBlock", "pair_block"]

#: The prior op of each pair and the observation ops conjugate to it.
LIKELIHOODS = {
    "BetaRV": ("BernoulliRV", "BinomialRV"),
    "DirichletRV": ("CategoricalRV", "MultinomialRV"),
    "GammaRV": ("PoissonRV", "ExponentialRV"),
}
PRIORS = tuple(LIKELIHOODS)

#: What each prior is conjugate to, for messages.
WHAT = {"BetaRV": "the probability of Bernoulli or Binomial observations",
         "DirichletRV": "the probabilities of Categorical or Multinomial observations",
         "GammaRV": "the rate of Poisson or Exponential observations (or the precision of "
                    "Normal observations with a known mean)"}

_PAIR_NAMES = {"BernoulliRV": "Bernoulli", "BinomialRV": "Binomial",
               "CategoricalRV": "Categorical", "MultinomialRV": "Multinomial",
               "PoissonRV": "Poisson", "ExponentialRV": "Exponential"}


@dataclass
class PairBlock:
    """The exact posterior of one conjugate pair.

    Attributes
    ----------
    family : str
        In words.
    name : str
        The latent.
    marginal : VariablePosterior
        Each element's marginal.
    parameters : dict
        The posterior's parameters (``a``, ``b``; ``alpha``; ``shape``, ``rate``), arrays.
    log_evidence : float
    n_observed : int
    """

    family: str
    name: str
    marginal: VariablePosterior
    parameters: dict
    log_evidence: float
    n_observed: int
    kind: str

    @property
    def latents(self) -> list:
        """The latent."""
        return [self.name]

    @property
    def variables(self) -> dict:
        """Variable name -> its :class:`VariablePosterior`."""
        return {self.name: self.marginal}

    def draw(self, rng, n: int) -> dict:
        """``n`` independent draws: name -> ``(n,) + shape``."""
        p = self.parameters
        shape = self.marginal.shape
        if self.kind == "BetaRV":
            x = rng.beta(p["a"], p["b"], size=(n,) + shape)
        elif self.kind == "GammaRV":
            x = rng.gamma(p["shape"], 1.0 / p["rate"], size=(n,) + shape)
        else:  # Dirichlet: normalised Gamma draws, along the last axis
            g = rng.gamma(p["alpha"], 1.0, size=(n,) + shape)
            x = g / g.sum(axis=-1, keepdims=True)
        return {self.name: x}

    def affine_marginal(self, name, form, shape):
        """No deterministic of a pair has an exact marginal here."""
        return None


def _prior(graph, node) -> list:
    try:
        return [np.broadcast_to(np.asarray(graph.reader.constant(p), dtype=float), node.shape)
                for p in node.params]
    except DependsOn as exc:
        raise NotConjugate(node.name, f"the parameters of its {node.distribution} prior "
                                      f"depend on {exc.variable}: a prior with unknown "
                                      f"parameters (a hierarchical prior) is not "
                                      f"conjugate") from None


def _selection(graph, latent, child, param: int, power: float, unit: bool):
    """Flat indices g into the latent and factors c of ``child``'s parameter ``c * v[g]**power``."""
    try:
        mono = graph.reader.monomial(child.params[param], latent.rv, latent.name)
    except DependsOn as exc:
        raise NotConjugate(child.name, f"it depends on {latent.name} and on {exc.variable}: "
                                       f"not conjugate") from None
    except NotMonomial as exc:
        raise NotConjugate(child.name, f"its parameter is not an element of {latent.name} "
                                       f"(it applies {exc}); {latent.name} ~ "
                                       f"{latent.distribution} is conjugate to "
                                       f"{WHAT[latent.op_class]} used as they are") from None
    if isinstance(mono, Const):  # pragma: no cover - a child depends on its parent
        raise NotConjugate(child.name, f"its parameter does not involve {latent.name}")
    if np.any(mono.g < 0) or np.any(mono.p != power):
        what = "an element" if unit else "a positive multiple of an element"
        raise NotConjugate(child.name, f"its parameter is not {what} of {latent.name} "
                                       f"({latent.name} ~ {latent.distribution} is conjugate "
                                       f"to {WHAT[latent.op_class]} used as they are)")
    if unit and not np.all(mono.c == 1.0):
        raise NotConjugate(child.name, f"its probability is a multiple of {latent.name}, not "
                                       f"an element of it: not conjugate")
    if not np.all(mono.c > 0):
        raise NotConjugate(child.name, f"its rate is a non-positive multiple of "
                                       f"{latent.name}")
    return mono.g, mono.c


def _fixed(graph, child, param: int) -> np.ndarray:
    try:
        return np.asarray(graph.reader.constant(child.params[param]), dtype=float)
    except DependsOn as exc:
        raise NotConjugate(child.name, f"its number of trials depends on {exc.variable}: "
                                       f"not conjugate") from None


def _integers(child, y, low, high=None) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    ok = (y == np.round(y)) & (y >= low)
    if high is not None:
        ok &= y <= high
    if not np.all(ok):
        i = int(np.flatnonzero(~ok.reshape(-1))[0])
        bound = f"{low}..{'n' if high is not None else ''}"
        raise DataError(f"{child.name}: observed value {float(y.reshape(-1)[i]):g} at position {i} "
                        f"is not an integer in {bound}")
    return y


def pair_block(graph, name: str, observed: list) -> PairBlock:
    """Recognise and solve the pair of the latent ``name`` and its observed children.

    Raises
    ------
    NotConjugate
        Naming the first variable that breaks the pair.
    """
    latent = graph.nodes[name]
    prior = _prior(graph, latent)
    allowed = LIKELIHOODS[latent.op_class]
    children = [graph.nodes[c] for c in observed]
    for child in children:
        if child.op_class not in allowed:
            raise NotConjugate(name, f"{name} ~ {latent.distribution} in {child.name} ~ "
                                     f"{child.distribution}: a {latent.distribution} prior is "
                                     f"conjugate to {WHAT[latent.op_class]} only")
    if latent.op_class == "BetaRV":
        return _beta(graph, latent, prior, children)
    if latent.op_class == "DirichletRV":
        return _dirichlet(graph, latent, prior, children)
    return _gamma(graph, latent, prior, children)


def _family(prior: str, children: list, latent, n_obs: int) -> str:
    kinds = "/".join(dict.fromkeys(_PAIR_NAMES[c.op_class] for c in children)) or "no data"
    return f"{prior}-{kinds} ({latent.name}: {latent.size} latent, {n_obs} observed)"


def _beta(graph, latent, prior, children) -> PairBlock:
    size = latent.size
    successes, trials = np.zeros(size), np.zeros(size)
    constant, n_obs = 0.0, 0
    for child in children:
        p_index = 0 if child.op_class == "BernoulliRV" else 1
        g, _ = _selection(graph, latent, child, p_index, 1.0, unit=True)
        g = np.broadcast_to(g, child.shape).reshape(-1)
        if child.op_class == "BernoulliRV":
            n = np.ones(child.size)
            y = _integers(child, child.data, 0, 1).reshape(-1)
        else:
            n = np.broadcast_to(_fixed(graph, child, 0), child.shape).reshape(-1)
            y = _integers(child, child.data, 0, n.reshape(child.shape)).reshape(-1)
            constant += conjugate_pairs.log_binomial_coefficients(n, y)
        successes += np.bincount(g, weights=y, minlength=size)
        trials += np.bincount(g, weights=n, minlength=size)
        n_obs += child.size
    a0, b0 = (p.reshape(-1) for p in prior)
    posts = [bernoulli_beta(stats=BernoulliStats(int(k), int(n)), prior=BetaPrior(a, b))
             for k, n, a, b in zip(successes, trials, a0, b0, strict=True)]
    a = np.array([p.a for p in posts]).reshape(latent.shape)
    b = np.array([p.b for p in posts]).reshape(latent.shape)
    evidence = constant + sum(p.log_marginal_likelihood() for p in posts)
    return PairBlock(_family("Beta", children, latent, n_obs), latent.name,
                     VariablePosterior(latent.name, latent.shape, "beta", (a, b)),
                     {"a": a, "b": b}, float(evidence), n_obs, "BetaRV")


def _dirichlet(graph, latent, prior, children) -> PairBlock:
    k = latent.shape[-1]
    rows = latent.size // k
    counts = np.zeros((rows, k))
    constant, n_obs = 0.0, 0
    for child in children:
        p_index = 0 if child.op_class == "CategoricalRV" else 1
        g, _ = _selection(graph, latent, child, p_index, 1.0, unit=True)
        if g.shape[-1] != k or np.any(g % k != np.arange(k)) or np.any(
                g // k != (g[..., :1] // k)):
            raise NotConjugate(child.name, f"its probabilities are not whole rows of "
                                           f"{latent.name} in category order")
        row = (g[..., 0] // k)
        if child.op_class == "CategoricalRV":
            row = np.broadcast_to(row, child.shape).reshape(-1)
            y = _integers(child, child.data, 0, k - 1).reshape(-1).astype(np.int64)
            np.add.at(counts, (row, y), 1.0)
            n_obs += child.size
        else:
            batch = child.shape[:-1]
            row = np.broadcast_to(row, batch).reshape(-1)
            n = np.broadcast_to(_fixed(graph, child, 0), batch).reshape(-1)
            y = _integers(child, child.data, 0).reshape(-1, k)
            if not np.all(y.sum(axis=1) == n):
                raise DataError(f"{child.name}: observed counts do not add up to n")
            np.add.at(counts, row, y)
            constant += conjugate_pairs.log_multinomial_coefficients(y)
            n_obs += len(y)
    alpha0 = prior[0].reshape(rows, k)
    posts = [categorical_dirichlet(stats=CategoricalStats(c.astype(np.int64)),
                                   prior=DirichletPrior(a)) for c, a in zip(counts, alpha0,
                                                                             strict=True)]
    alpha = np.array([p.alpha for p in posts]).reshape(latent.shape)
    total = alpha.sum(axis=-1, keepdims=True)
    evidence = constant + sum(p.log_marginal_likelihood() for p in posts)
    return PairBlock(_family("Dirichlet", children, latent, n_obs), latent.name,
                     VariablePosterior(latent.name, latent.shape, "beta",
                                       (alpha, total - alpha)),
                     {"alpha": alpha}, float(evidence), n_obs, "DirichletRV")


def _gamma(graph, latent, prior, children) -> PairBlock:
    size = latent.size
    shape0 = prior[0].reshape(-1)
    rate0 = 1.0 / prior[1].reshape(-1)  # PyTensor's Gamma takes a scale
    shape, rate = shape0.copy(), rate0.copy()
    constant, n_obs = 0.0, 0
    for child in children:
        if child.op_class == "PoissonRV":
            g, t = _selection(graph, latent, child, 0, 1.0, unit=False)
            g = np.broadcast_to(g, child.shape).reshape(-1)
            t = np.broadcast_to(t, child.shape).reshape(-1)
            y = _integers(child, child.data, 0).reshape(-1)
            shape, rate = conjugate_pairs.gamma_poisson(
                shape, rate, events=np.bincount(g, weights=y, minlength=size),
                exposure=np.bincount(g, weights=t, minlength=size))
            from scipy.special import gammaln

            constant += float(np.sum(y * np.log(t) - gammaln(y + 1)))
        else:  # Exponential: PyTensor's takes the scale 1 / (t lam)
            g, c = _selection(graph, latent, child, 0, -1.0, unit=False)
            g = np.broadcast_to(g, child.shape).reshape(-1)
            t = 1.0 / np.broadcast_to(c, child.shape).reshape(-1)
            y = np.asarray(child.data, dtype=float).reshape(-1)
            if not np.all(y >= 0):
                raise DataError(f"{child.name}: Exponential observations must be >= 0")
            shape, rate = conjugate_pairs.gamma_exponential(
                shape, rate, count=np.bincount(g, minlength=size),
                total=np.bincount(g, weights=t * y, minlength=size))
            constant += float(np.sum(np.log(t)))
        n_obs += child.size
    evidence = constant + conjugate_pairs.gamma_rate_log_evidence(shape0, rate0, shape, rate)
    shape, rate = shape.reshape(latent.shape), rate.reshape(latent.shape)
    return PairBlock(_family("Gamma", children, latent, n_obs), latent.name,
                     VariablePosterior(latent.name, latent.shape, "gamma", (shape,),
                                       {"scale": 1.0 / rate}),
                     {"shape": shape, "rate": rate}, float(evidence), n_obs, "GammaRV")
