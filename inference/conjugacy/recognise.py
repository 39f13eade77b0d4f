"""Which parts of a PyMC model are conjugate, and the exact posterior of each.

The free variables are split into blocks that the posterior keeps independent: two latents
are in one block when one appears in the other's parameters, or both in one observed
variable's (an observed variable in another's parameters is its data, and joins nothing).
Each block is then one of

- a Gaussian block (:mod:`.gaussian`): Normal / MvNormal latents with affine means and fixed
  scales (Gaussian linear), the same with every scale proportional to ``sqrt(s2)`` for one
  InverseGamma variance or ``1 / sqrt(tau)`` for one Gamma precision (Normal-inverse-gamma),
  or only that variance over Normals with known means;
- a conjugate pair (:mod:`.pairs`): a Beta, Dirichlet or Gamma latent and its Bernoulli /
  Binomial, Categorical / Multinomial, Poisson / Exponential observations.

Anything else raises :class:`~.errors.NotConjugate` naming the first variable (in model order)
that breaks it, and why. Observed variables that depend on no latent add their own log density
to the evidence.
"""

from __future__ import annotations

import numpy as np

from .errors import NotConjugate
from .gaussian import GAUSSIAN, gaussian_block
from .pairs import PRIORS, WHAT, pair_block

__all__ = ["observed_only_log_density", "recognise"]

#: What each parameter of the usual ops is, for messages.
_ROLES = {
    "NormalRV": ("mean", "scale"), "MvNormalRV": ("mean", "covariance"),
    "StudentTRV": ("degrees of freedom", "mean", "scale"), "TRV": ("degrees of freedom", "mean",
                                                                  "scale"),
    "BernoulliRV": ("probability",), "BinomialRV": ("number of trials", "probability"),
    "CategoricalRV": ("probabilities",), "MultinomialRV": ("number of trials",
                                                           "probabilities"),
    "PoissonRV": ("rate",), "ExponentialRV": ("scale",),
}


def _roles(graph, child, parent: str) -> list:
    """The roles (``"mean"``, ``"scale"``, ...) in which ``parent`` enters ``child``."""
    from pytensor.graph.traversal import ancestors

    rv = graph.rv(parent)
    blockers = {n.rv for n in graph.nodes.values()}
    names = _ROLES.get(child.op_class, ())
    out = []
    for i, p in enumerate(child.params):
        if rv in ancestors([p], blockers=blockers - {rv}) or p is rv:
            out.append(names[i] if i < len(names) else f"parameter {i}")
    return out


def _unsupported(graph, name: str) -> NotConjugate:
    """Why the latent ``name`` has a prior no conjugate family here takes."""
    node = graph.nodes[name]
    dist = node.distribution
    uses = [(graph.nodes[c], _roles(graph, graph.nodes[c], name)) for c in graph.children[name]]
    if node.op_class in ("BernoulliRV", "CategoricalRV", "BinomialRV", "PoissonRV",
                         "GeometricRV", "NegBinomialRV", "DiscreteUniformRV"):
        return NotConjugate(name, f"{name} ~ {dist}: a discrete latent variable has no "
                                  f"conjugate exact posterior here")
    for child, roles in uses:
        if child.op_class in GAUSSIAN and ("scale" in roles or "covariance" in roles):
            return NotConjugate(name, f"{name} ~ {dist}: the noise scale has no conjugate "
                                      f"prior here; use InverseGamma on its square (the "
                                      f"variance), or Gamma on the precision, or fix it")
        if child.op_class in GAUSSIAN and "mean" in roles:
            return NotConjugate(name, f"{name} ~ {dist} in the mean of {child.name}: a Normal "
                                      f"mean's conjugate prior is Normal")
        if child.op_class in ("BernoulliRV", "BinomialRV") and "probability" in roles:
            return NotConjugate(name, f"{name} ~ {dist} as a probability: its conjugate "
                                      f"prior is Beta")
        if child.op_class in ("PoissonRV", "ExponentialRV"):
            return NotConjugate(name, f"{name} ~ {dist} as a rate: its conjugate prior is "
                                      f"Gamma")
    return NotConjugate(name, f"{name} ~ {dist}: no conjugate family here has a {dist} prior")


def _components(graph) -> list:
    """The blocks of free variables, each in model order, ordered by their first variable."""
    parent = {name: name for name in graph.free}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for node in graph.nodes.values():
        members = list(node.parents) + ([] if node.observed else [node.name])
        for other in members[1:]:
            a, b = find(members[0]), find(other)
            if a != b:
                parent[b] = a
    groups: dict = {}
    for name in graph.free:
        groups.setdefault(find(name), []).append(name)
    return sorted(groups.values(), key=lambda g: graph.free.index(g[0]))


def _is_precision(graph, name: str) -> bool:
    """A Gamma latent that enters a Normal's scale (a precision), not a rate."""
    for child in graph.children[name]:
        node = graph.nodes[child]
        if node.op_class in GAUSSIAN and "scale" in _roles(graph, node, name):
            return True
    return False


def _block(graph, members: list):
    """The exact posterior of one block of free variables, or NotConjugate."""
    children = {c for m in members for c in graph.children[m]}
    observed = [o for o in graph.observed if o in children]
    gaussian, variances, pairs = [], [], []
    for name in members:
        node = graph.nodes[name]
        if node.op_class in GAUSSIAN:
            gaussian.append(name)
        elif node.op_class == "InvGammaRV" or (node.op_class == "GammaRV"
                                               and _is_precision(graph, name)):
            variances.append(name)
        elif node.op_class in PRIORS:
            pairs.append(name)
        else:
            raise _unsupported(graph, name)
    for name in pairs:
        _check_pair(graph, name)
    if pairs:
        return pair_block(graph, pairs[0], observed)
    if len(variances) > 1:
        raise NotConjugate(variances[1], f"a second variance in one Gaussian block "
                                         f"({variances[0]} and {variances[1]}): only one "
                                         f"shared variance is conjugate")
    return gaussian_block(graph, gaussian, variances[0] if variances else None, observed)


def _check_pair(graph, name: str) -> None:
    """A Beta, Dirichlet or Gamma-rate latent must be the only latent of its observations."""
    node = graph.nodes[name]
    dist = node.distribution
    if node.parents:
        raise NotConjugate(name, f"the parameters of its {dist} prior depend on "
                                 f"{', '.join(node.parents)}: a prior with unknown parameters "
                                 f"(a hierarchical prior) is not conjugate")
    for child in graph.children[name]:
        other = graph.nodes[child]
        if not other.observed and other.op_class not in GAUSSIAN:
            raise NotConjugate(name, f"{name} ~ {dist} is a parameter of the prior of {child} "
                                     f"~ {other.distribution}: a prior with unknown parameters "
                                     f"(a hierarchical prior) is not conjugate")
        if not other.observed:
            roles = " and ".join(_roles(graph, other, name)) or "parameters"
            raise NotConjugate(name, f"{name} ~ {dist} in the {roles} of {child} ~ "
                                     f"{other.distribution}: a {dist} prior is conjugate to "
                                     f"{WHAT[node.op_class]} only")
        rest = [p for p in other.parents if p != name]
        if rest:
            raise NotConjugate(child, f"it depends on {name} ~ {dist} and on "
                                      f"{', '.join(rest)}: a {dist} prior is conjugate only "
                                      f"when it is the only latent of its observations")


def recognise(graph) -> list:
    """The exact posterior of every block of ``graph``, in model order.

    Raises
    ------
    NotConjugate
        At the first variable that breaks conjugacy; its ``conjugate`` lists the variables
        of the blocks that are conjugate nevertheless.
    """
    blocks, conjugate, failure = [], [], None
    for members in _components(graph):
        try:
            blocks.append(_block(graph, members))
        except NotConjugate as exc:
            failure = failure or exc
            continue
        conjugate.extend(members)
    if failure is not None:
        raise NotConjugate(failure.variable, failure.reason, conjugate=conjugate) from None
    return blocks


def observed_only_log_density(graph) -> float:
    """log p of the observed variables that depend on no latent, at their data.

    PyMC's own log density of each (``pymc.logp``), read by the form reader (no compile).
    """
    import pymc as pm

    total = 0.0
    for name in graph.observed:
        node = graph.nodes[name]
        if node.parents:
            continue
        logp = pm.logp(node.rv, np.asarray(node.data))
        total += float(np.sum(graph.reader.constant(logp)))
    return total
