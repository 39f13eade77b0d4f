"""Gaussian blocks: Gaussian linear models, Normal-inverse-gamma, and a Normal's unknown variance.

A Gaussian block is a set of Normal (or MvNormal) latents ``z`` and observations, each
``x_f ~ N(C_f z + b_f, Sigma_f)``: every mean affine in the latents (read by
:meth:`~.forms.FormReader.affine`), and every covariance either fixed or, for one variance
latent ``s2``, ``Sigma_f = s2 * diag(c_f)**2`` (a scale ``c * sqrt(s2)``, or
``c / sqrt(tau)`` for a precision ``tau = 1 / s2``).

The joint density is ``prod_f N(x_f; C_f z + b_f, Sigma_f)``; with ``W_f`` a square root of
``Sigma_f^-1`` (``1 / sigma`` elementwise, or ``L^-1`` for ``Sigma = L L'``), each factor is a
block of rows of one least-squares system ``|M z - r|^2``:

    latent z_k: M = W (E_k - C), r = W b       (E_k picks z_k out of z)
    observed y: M = -W C,        r = W (b - y)

so the posterior is the regression posterior of the linear-Gaussian engine
(:mod:`bayescheck.inference.engines.linear_gaussian`): the latents' rows are the prior (their
precision ``P0 = M'M`` has ``log |P0| = 2 log |W|``, since ``E - C`` is unit triangular in
model order: a latent's mean involves only variables declared before it), the observations'
rows the data, each with unit noise (known variance: :class:`GaussianPosterior`) or noise
``s2`` (:class:`NormalInverseGammaPosterior`, with ``s2 ~ InvGamma(a0, b0)``). The root of
all the rows stacked is the root the engine's ``update`` would reach from the prior's (its
merge is the QR of the stacked roots), so it is factored once. The evidence is
the engine's plus ``log |W|`` of the observations (the change of variables from ``y`` to
``W y``).

Without Gaussian latents, a block is a Normal with known mean and unknown variance (or
precision), one per element of the variance latent: the same Normal-inverse-gamma update with
no coefficients (:func:`~bayescheck.inference.engines.linear_gaussian.nig_log_evidence`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from bayescheck.inference.engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    nig_log_evidence,
    triangular_root,
)

from .errors import NotConjugate
from .forms import Affine, Const, DependsOn, NotAffine, NotMonomial
from .marginals import VariablePosterior

__all__ = ["GAUSSIAN", "GaussianBlock", "VarianceBlock", "gaussian_block"]

#: Op classes of Gaussian variables.
GAUSSIAN = ("NormalRV", "MvNormalRV")

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass
class _Variance:
    """The variance latent of a block: ``s2 ~ InvGamma(shape0, scale0)`` (or ``1 / tau``)."""

    name: str
    node: object
    shape0: np.ndarray
    scale0: np.ndarray
    precision: bool  # a Gamma prior on tau = 1 / s2

    @property
    def exponent(self) -> float:
        """The power of the latent in a Normal's scale: 1/2 (variance), -1/2 (precision)."""
        return -0.5 if self.precision else 0.5

    def marginal(self, shape: np.ndarray, scale: np.ndarray) -> VariablePosterior:
        """The posterior of the latent itself from that of s2 ~ InvGamma(shape, scale)."""
        if self.precision:  # tau = 1 / s2 ~ Gamma(shape, rate = scale)
            return VariablePosterior(self.name, self.node.shape, "gamma", (shape,),
                                     {"scale": 1.0 / scale})
        return VariablePosterior(self.name, self.node.shape, "invgamma", (shape,),
                                 {"scale": scale})

    def draw(self, rng, shape, scale, n: int) -> np.ndarray:
        """``n`` draws of the latent, shape ``(n,) + shape of shape``."""
        tau = rng.gamma(shape, 1.0 / scale, size=(n,) + np.shape(shape))
        return tau if self.precision else 1.0 / tau


def variance_prior(graph, name: str) -> _Variance:
    """The variance latent ``name``'s prior, as s2 ~ InvGamma(shape0, scale0)."""
    node = graph.nodes[name]
    reader = graph.reader
    try:
        alpha, second = (np.asarray(reader.constant(p), dtype=float) for p in node.params)
    except DependsOn as exc:
        raise NotConjugate(name, f"the parameters of its {node.distribution} prior depend on "
                                 f"{exc.variable}: a prior with unknown parameters is not "
                                 f"conjugate") from None
    precision = node.op_class == "GammaRV"
    # PyTensor's Gamma takes (shape, scale); the rate of tau is the scale of s2 = 1 / tau
    scale0 = 1.0 / second if precision else second
    shape = node.shape
    return _Variance(name, node, np.broadcast_to(alpha, shape), np.broadcast_to(scale0, shape),
                     precision)


@dataclass
class _Factor:
    """One Normal or MvNormal of the block as rows of the least-squares system."""

    name: str
    observed: bool
    rows: np.ndarray  # M, (size, D)
    rhs: np.ndarray  # r, (size,)
    logdet_w: float


@dataclass
class GaussianBlock:
    """The exact posterior of a Gaussian linear (or Normal-inverse-gamma) block.

    Attributes
    ----------
    family : str
        What was recognised, in words.
    latents : list of str
        The Gaussian latents, in model order.
    shapes : dict of str to tuple
        Their shapes.
    posterior : GaussianPosterior or NormalInverseGammaPosterior
        The engine's posterior of the stacked latents ``z``.
    variance : _Variance or None
        The variance latent (Normal-inverse-gamma).
    log_evidence : float
        log p(observations of the block).
    n_observed : int
        Observed scalars.
    """

    family: str
    latents: list
    shapes: dict
    posterior: object
    variance: _Variance | None
    log_evidence: float
    n_observed: int
    slices: dict = field(default_factory=dict)

    @property
    def variables(self) -> dict:
        """Variable name -> its :class:`VariablePosterior`."""
        post = self.posterior
        out = {}
        if self.variance is None:
            mean, sd = post.mean, post.sd
            for name in self.latents:
                s = self.slices[name]
                out[name] = VariablePosterior(name, self.shapes[name], "norm",
                                              (mean[s].reshape(self.shapes[name]),
                                               sd[s].reshape(self.shapes[name])))
            return out
        mean, scale = post.mean, post.t_scale
        for name in self.latents:
            s = self.slices[name]
            out[name] = VariablePosterior(name, self.shapes[name], "t",
                                          (post.df, mean[s].reshape(self.shapes[name]),
                                           scale[s].reshape(self.shapes[name])))
        v = self.variance
        out[v.name] = v.marginal(np.full(v.node.shape, post.shape), np.full(v.node.shape,
                                                                            post.scale))
        return out

    def precision_root(self) -> np.ndarray:
        """R with P = R'R (the posterior precision of z, in units of s2 for NIG)."""
        return self.posterior.root[:-1, :-1]

    def draw(self, rng, n: int) -> dict:
        """``n`` independent draws of every variable: name -> ``(n,) + shape``."""
        from scipy.linalg import solve_triangular

        post = self.posterior
        d = len(post.mean)
        eps = rng.standard_normal((d, n))
        dev = solve_triangular(self.precision_root(), eps, lower=False) if d else eps
        out = {}
        if self.variance is not None:
            v = self.variance
            latent = v.draw(rng, post.shape, post.scale, n)
            s2 = latent if not v.precision else 1.0 / latent
            dev = dev * np.sqrt(s2)[None, :]
            out[v.name] = latent.reshape((n,) + v.node.shape)
        z = post.mean[:, None] + dev
        for name in self.latents:
            out[name] = z[self.slices[name]].T.reshape((n,) + self.shapes[name])
        return out

    def affine_marginal(self, name: str, form, shape: tuple) -> VariablePosterior | None:
        """The exact marginal of an affine function of this block's latents, else None."""
        from scipy.linalg import solve_triangular

        if not isinstance(form, Affine) or not set(form.coefs) <= set(self.latents):
            return None
        size = int(np.prod(shape, dtype=np.int64))
        offset = np.broadcast_to(form.offset, shape).reshape(size)
        c = np.zeros((size, len(self.posterior.mean)))
        for k, coef in form.coefs.items():
            c[:, self.slices[k]] = np.broadcast_to(coef, shape + (coef.shape[-1],)).reshape(
                size, -1)
        mean = c @ self.posterior.mean + offset
        y = solve_triangular(self.precision_root(), c.T, trans="T", lower=False)
        var = np.sum(y * y, axis=0)
        if not np.all(var > 0):
            return None
        if self.variance is None:
            return VariablePosterior(name, shape, "norm", (mean.reshape(shape),
                                                           np.sqrt(var).reshape(shape)))
        post = self.posterior
        scale = np.sqrt(post.scale / post.shape * var)
        return VariablePosterior(name, shape, "t", (post.df, mean.reshape(shape),
                                                    scale.reshape(shape)))


@dataclass
class VarianceBlock:
    """Normals with known means and one unknown variance (or precision) per element."""

    family: str
    variance: _Variance
    shape: np.ndarray
    scale: np.ndarray
    log_evidence: float
    n_observed: int

    @property
    def latents(self) -> list:
        """The variance latent."""
        return [self.variance.name]

    @property
    def variables(self) -> dict:
        """Variable name -> its :class:`VariablePosterior`."""
        return {self.variance.name: self.variance.marginal(self.shape, self.scale)}

    def draw(self, rng, n: int) -> dict:
        """``n`` independent draws: name -> ``(n,) + shape``."""
        return {self.variance.name: self.variance.draw(rng, self.shape, self.scale, n)}

    def affine_marginal(self, name, form, shape):
        """No affine function of a variance has a marginal here."""
        return None


def _where(node) -> str:
    return f"{node.name} ~ {node.distribution}"


def _mean_form(graph, node, latents: dict, variance: _Variance | None):
    try:
        return graph.reader.affine(node.params[0], latents)
    except DependsOn as exc:
        if variance is not None and exc.variable == variance.name:
            raise NotConjugate(node.name, f"its mean depends on {exc.variable}, the variance: "
                                          f"not conjugate") from None
        raise NotConjugate(node.name, f"its mean depends on {exc.variable}, which is not a "
                                      f"Gaussian latent of this block") from None
    except NotAffine as exc:
        parents = ", ".join(p for p in node.parents if p in latents.values()) or "its parents"
        raise NotConjugate(node.name, f"its mean is not affine in {parents} (it applies "
                                      f"{exc}); a Gaussian linear model needs means such as "
                                      f"X @ beta, alpha[group] + b or a * x with fixed "
                                      f"a") from None


def _fixed_scale(graph, node) -> np.ndarray:
    try:
        value = np.asarray(graph.reader.constant(node.params[1]), dtype=float)
    except DependsOn as exc:
        other = graph.nodes[exc.variable]
        raise NotConjugate(node.name, f"its scale depends on {exc.variable} ~ "
                                      f"{other.distribution}: a Normal's scale must be fixed, "
                                      f"or proportional to the square root of one "
                                      f"InverseGamma variance") from None
    return value


def _variance_scale(graph, node, variance: _Variance, with_latents: bool) -> np.ndarray:
    """The factors c of ``sigma = c * s2 ** (1/2)`` (or ``c * tau ** (-1/2)``), or refuse."""
    v = variance
    what = "precision" if v.precision else "variance"
    try:
        mono = graph.reader.monomial(node.params[1], graph.rv(v.name), v.name)
    except DependsOn as exc:
        raise NotConjugate(node.name, f"its scale depends on {exc.variable}: only one "
                                      f"variance per Gaussian block is conjugate") from None
    except NotMonomial as exc:
        raise NotConjugate(node.name, f"its scale is not a constant times a power of "
                                      f"{v.name} ({exc})") from None
    if isinstance(mono, Const):
        if with_latents:
            raise NotConjugate(node.name, f"its scale is fixed while other Normals of the "
                                          f"block scale with {v.name}: with an unknown "
                                          f"{what}, every Normal's scale must be proportional "
                                          f"to {_scale_text(v)} (Normal-inverse-gamma); this "
                                          f"model is only conditionally conjugate")
        return np.asarray(mono.value, dtype=float)
    expected = v.exponent
    involved = mono.g >= 0
    if with_latents and not np.all(involved):
        raise NotConjugate(node.name, f"part of its scale is fixed while the rest scales with "
                                      f"{v.name}: every Normal's scale must be proportional "
                                      f"to {_scale_text(v)}")
    bad = involved & (mono.p != expected)
    if np.any(bad):
        got = float(mono.p[bad].flat[0])
        raise NotConjugate(node.name, f"its scale is proportional to {v.name}**{got:g}; with "
                                      f"{v.name} ~ {v.node.distribution} it must be "
                                      f"proportional to {_scale_text(v)} "
                                      f"({'a precision' if v.precision else 'a variance'})")
    if np.any(mono.c <= 0):
        raise NotConjugate(node.name, "its scale has a non-positive constant factor")
    return mono


def _scale_text(v: _Variance) -> str:
    return f"1/sqrt({v.name})" if v.precision else f"sqrt({v.name})"


def _rows_of(node, form, latents: list, shapes: dict, slices: dict, d: int):
    """C (size x D) and b (size) of a mean form broadcast to the node's shape."""
    shape = node.shape
    size = node.size
    form = form if isinstance(form, Affine) else Affine(np.asarray(form.value, float), {})
    offset = np.broadcast_to(form.offset, shape).reshape(size)
    c = np.zeros((size, d))
    for k, coef in form.coefs.items():
        c[:, slices[k]] = np.broadcast_to(coef, shape + (coef.shape[-1],)).reshape(size, -1)
    return c, offset


def _whiten(graph, node, m: np.ndarray, r: np.ndarray, scale):
    """``W m``, ``W r`` and log |W| for the node's scale (an array of sigmas or an MvNormal)."""
    if node.op_class == "MvNormalRV":
        from scipy.linalg import solve_triangular

        cov = np.asarray(scale, dtype=float)
        k = node.shape[-1]
        batch = node.shape[:-1]
        cov = np.broadcast_to(cov, batch + (k, k)).reshape(-1, k, k)
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise NotConjugate(node.name, "its covariance is not positive definite") from None
        m = m.reshape(len(cov), k, -1)
        r = r.reshape(len(cov), k)
        wm = np.stack([solve_triangular(chol[i], m[i], lower=True) for i in range(len(cov))])
        wr = np.stack([solve_triangular(chol[i], r[i], lower=True) for i in range(len(cov))])
        logdet = -float(np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1))))
        return wm.reshape(-1, m.shape[-1]), wr.reshape(-1), logdet
    sigma = np.broadcast_to(np.asarray(scale, dtype=float), node.shape).reshape(-1)
    if not np.all(np.isfinite(sigma) & (sigma > 0)):
        raise NotConjugate(node.name, "its scale is not positive and finite")
    w = 1.0 / sigma
    return m * w[:, None], r * w, -float(np.sum(np.log(sigma)))


def gaussian_block(graph, latents: list, variance: str | None, observed: list):
    """Recognise and solve one Gaussian block.

    Parameters
    ----------
    graph : ModelGraph
    latents : list of str
        The block's Normal / MvNormal latents, in model order.
    variance : str or None
        Its InverseGamma variance or Gamma precision latent.
    observed : list of str
        The observed variables that depend on the block, in model order.

    Returns
    -------
    GaussianBlock or VarianceBlock

    Raises
    ------
    NotConjugate
        Naming the first variable that breaks the block.
    """
    v = variance_prior(graph, variance) if variance is not None else None
    if not latents:
        return _variance_block(graph, v, observed)
    if v is not None and v.node.size != 1:
        raise NotConjugate(v.name, f"a variance with {v.node.size} elements shared by "
                                   f"Gaussian latents is not conjugate (one scalar variance)")
    nodes = [graph.nodes[n] for n in latents]
    shapes = {n.name: n.shape for n in nodes}
    slices, start = {}, 0
    for n in nodes:
        slices[n.name] = slice(start, start + n.size)
        start += n.size
    d = start
    latent_vars = {n.rv: n.name for n in nodes}
    factors = []
    for node in nodes + [graph.nodes[o] for o in observed]:
        if node.op_class not in GAUSSIAN:
            raise NotConjugate(node.name, f"{_where(node)} depends on Gaussian latents; "
                                          f"conjugate observations of Gaussian latents are "
                                          f"Normal (or MvNormal)")
        if v is not None and node.op_class == "MvNormalRV":
            raise NotConjugate(node.name, f"an MvNormal whose covariance scales with "
                                          f"{v.name} is not recognised; write it as Normals "
                                          f"with scales proportional to {_scale_text(v)}")
        form = _mean_form(graph, node, latent_vars, v)
        if v is None:
            scale = _fixed_scale(graph, node)
        else:
            scale = _variance_scale(graph, node, v, with_latents=True).c
        c, b = _rows_of(node, form, latents, shapes, slices, d)
        if node.observed:
            m, r = -c, b - np.asarray(node.data, dtype=float).reshape(-1)
        else:
            m, r = -c, b
            m[np.arange(node.size), np.arange(slices[node.name].start,
                                              slices[node.name].stop)] += 1.0
        wm, wr, logdet = _whiten(graph, node, m, r, scale)
        factors.append(_Factor(node.name, node.observed, wm, wr, logdet))
    prior = [f for f in factors if not f.observed]
    data = [f for f in factors if f.observed]
    n_obs = sum(len(f.rhs) for f in data)
    # One QR of every row: the root the engine's update reaches from the prior's root (its
    # merge is the QR of the stacked roots), in one factorisation instead of three.
    stacked = np.empty((sum(len(f.rhs) for f in factors), d + 1), order="F")
    row = 0
    for f in factors:
        stacked[row:row + len(f.rhs), :d] = f.rows
        stacked[row:row + len(f.rhs), d] = f.rhs
        row += len(f.rhs)
    root = triangular_root(stacked, overwrite=True)
    prior_logdet = 2.0 * sum(f.logdet_w for f in prior)
    if v is None:
        post = GaussianPosterior(root, 1.0, n=n_obs, prior_logdet=prior_logdet)
    else:
        post = NormalInverseGammaPosterior(root, float(v.shape0.reshape(-1)[0]),
                                           float(v.scale0.reshape(-1)[0]), n=n_obs,
                                           prior_logdet=prior_logdet)
    post.require_identified()
    evidence = post.log_evidence + sum(f.logdet_w for f in data)
    if v is None:
        family = f"Gaussian linear ({d} latent, {n_obs} observed)"
    else:
        family = (f"Normal-inverse-gamma ({d} latent, {'precision' if v.precision else 'variance'}"
                  f" {v.name}, {n_obs} observed)")
    return GaussianBlock(family, list(latents), shapes, post, v, float(evidence), n_obs, slices)


def _variance_block(graph, v: _Variance, observed: list) -> VarianceBlock:
    """Normals with known means and scales ``c * v[g] ** (+-1/2)``."""
    size = v.node.size
    counts = np.zeros(size)
    squares = np.zeros(size)
    evidence, n_obs = 0.0, 0
    for name in observed:
        node = graph.nodes[name]
        if node.op_class != "NormalRV":
            raise NotConjugate(name, f"{_where(node)} depends on {v.name} ~ "
                                     f"{v.node.distribution}; it is conjugate to the "
                                     f"variance of Normal observations only")
        form = _mean_form(graph, node, {}, v)
        mean = np.broadcast_to(np.asarray(form.value, dtype=float), node.shape).reshape(-1)
        mono = _variance_scale(graph, node, v, with_latents=False)
        y = np.asarray(node.data, dtype=float).reshape(-1)
        n_obs += y.size
        if isinstance(mono, np.ndarray):  # a fixed scale: a known Normal, evidence only
            sigma = np.broadcast_to(mono, node.shape).reshape(-1)
            evidence += float(np.sum(-0.5 * _LOG_2PI - np.log(sigma)
                                     - 0.5 * ((y - mean) / sigma) ** 2))
            continue
        c = np.broadcast_to(mono.c, node.shape).reshape(-1)
        g = np.broadcast_to(mono.g, node.shape).reshape(-1)
        e2 = ((y - mean) / c) ** 2
        fixed = g < 0
        if np.any(fixed):
            evidence += float(np.sum(-0.5 * _LOG_2PI - np.log(c[fixed]) - 0.5 * e2[fixed]))
        counts += np.bincount(g[~fixed], minlength=size)
        squares += np.bincount(g[~fixed], weights=e2[~fixed], minlength=size)
        evidence -= float(np.sum(np.log(c[~fixed])))
    shape0, scale0 = v.shape0.reshape(-1), v.scale0.reshape(-1)
    shape, scale = shape0 + counts / 2.0, scale0 + squares / 2.0
    evidence += float(np.sum(nig_log_evidence(n=counts, shape0=shape0, scale0=scale0,
                                              shape=shape, scale=scale, prior_logdet=0.0,
                                              posterior_logdet=0.0)))
    kind = "precision" if v.precision else "variance"
    family = (f"Normal with known mean, {v.node.distribution} {kind} {v.name} "
              f"({size} latent, {n_obs} observed)")
    return VarianceBlock(family, v, shape.reshape(v.node.shape), scale.reshape(v.node.shape),
                         evidence, n_obs)
