"""Which chains sit in which mode of a multimodal posterior.

A mixture's posterior has several modes besides the relabellings of one (two components
merged and a third holding a few outlying rows, say). NUTS chains rarely cross between them,
so chains that settle in different modes give an r_hat far above 1 that says nothing about
whether an estimate is right. :func:`chain_modes` groups the chains by where they are: two
chains are in the same mode when, for every compared parameter, their means differ by at most
``same_sd`` within-chain posterior sds; the groups are the connected sets of that relation.
The chains *separate cleanly* when every pair of chains in different groups is more than
``apart_sd`` sds apart in some parameter (a chain that wanders between two modes has a wide
sd and a mean in between, is close to both, and joins them into one group). The estimate
*claims* the group whose pooled draws are nearest to it (the largest distance over the
parameters, in that group's posterior sds).

Numpy only: the inputs are ``(chain, draw)`` arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["SAME_MODE_SD", "SEPARATE_MODES_SD", "SLOW_R_HAT", "TARGET_CROSSINGS",
           "VALLEY_FRACTION", "ChainModes", "SlowParameter", "chain_modes", "slow_parameters"]

#: Chains whose means differ by at most this many within-chain sds in every parameter are in
#: the same mode. Chains of one mode differ by about sd * sqrt(2 / ESS per chain): a few tenths
#: of an sd at an ESS of 50 per chain.
SAME_MODE_SD = 2.0
#: Groups separate cleanly when every pair of chains across them differs by more than this.
SEPARATE_MODES_SD = 4.0


@dataclass
class ChainModes:
    """The chains grouped by mode.

    Attributes
    ----------
    groups : list of list of int
        The chains of each mode (0-based), the claimed one first, then by size.
    claimed : int
        Index into ``groups`` of the mode the estimate claims (always 0).
    clean : bool
        Every pair of chains in different groups is more than ``apart_sd`` sds apart (True
        with one group).
    distance : numpy.ndarray
        ``(chain, chain)``: the largest over parameters of the difference of the two chains'
        means in their pooled within-chain sds.
    estimate_distance_sd : list of float
        Per group, the largest over parameters of ``|estimate - group mean| / group sd``.
    worst_parameter : list of str
        Per group, the parameter that attains ``estimate_distance_sd``.
    same_sd, apart_sd : float
        The thresholds used.
    """

    groups: list[list[int]]
    claimed: int
    clean: bool
    distance: np.ndarray
    estimate_distance_sd: list[float]
    worst_parameter: list[str]
    same_sd: float
    apart_sd: float

    @property
    def split(self) -> bool:
        """The chains hold more than one mode and separate cleanly."""
        return self.clean and len(self.groups) > 1

    @property
    def judged_chains(self) -> list[int]:
        """The chains that judge the estimate: its mode's when :attr:`split`, else all."""
        if self.split:
            return list(self.groups[self.claimed])
        return sorted(c for g in self.groups for c in g)


def _pairwise(means: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """(C, C) largest |mean difference| / pooled sd over parameters; 0/0 counts as 0."""
    diff = np.abs(means[:, None, :] - means[None, :, :])
    pooled = np.sqrt(0.5 * (sds[:, None, :] ** 2 + sds[None, :, :] ** 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(diff == 0, 0.0, diff / pooled)
    return np.max(z, axis=2)


def chain_modes(draws: Mapping[str, np.ndarray], estimate: Mapping[str, float], *,
                same_sd: float = SAME_MODE_SD, apart_sd: float = SEPARATE_MODES_SD
                ) -> ChainModes:
    """Group chains by the mode they sit in, and find the mode an estimate claims.

    Parameters
    ----------
    draws : mapping of str to numpy.ndarray
        Per parameter, draws shaped ``(chain, draw)`` (the same shape for all).
    estimate : mapping of str to float
        The point estimate of every parameter in ``draws``.
    same_sd : float
        Chains closer than this (in every parameter, in within-chain sds) share a mode.
    apart_sd : float
        Groups separate cleanly when all their chains are farther apart than this.

    Returns
    -------
    ChainModes
    """
    names = list(draws)
    if not names:
        raise ValueError("no parameters to group chains by")
    x = np.stack([np.asarray(draws[n], dtype=np.float64) for n in names], axis=-1)
    if x.ndim != 3:
        raise ValueError(f"draws must be (chain, draw) arrays; got shape {x.shape[:-1]}")
    C = x.shape[0]
    means = x.mean(axis=1)
    sds = x.std(axis=1, ddof=1) if x.shape[1] > 1 else np.zeros_like(means)
    distance = _pairwise(means, sds)
    # connected components of "distance <= same_sd"
    label = list(range(C))

    def root(c):
        while label[c] != c:
            label[c] = label[label[c]]
            c = label[c]
        return c

    for a in range(C):
        for b in range(a + 1, C):
            if distance[a, b] <= same_sd:
                label[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for c in range(C):
        groups.setdefault(root(c), []).append(c)
    groups_list = list(groups.values())
    clean = all(distance[a, b] > apart_sd for i, g in enumerate(groups_list)
                for h in groups_list[i + 1:] for a in g for b in h)
    est = np.array([float(estimate[n]) for n in names])
    dists, worst = [], []
    for g in groups_list:
        pooled = x[g].reshape(-1, len(names))
        mu, sd = pooled.mean(axis=0), pooled.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.abs(est - mu) / sd
        z = np.where(np.isfinite(z), z, np.where(est == mu, 0.0, math.inf))
        j = int(np.argmax(z))
        dists.append(float(z[j]))
        worst.append(names[j])
    claimed = int(np.argmin(dists))
    order = [claimed] + sorted((i for i in range(len(groups_list)) if i != claimed),
                               key=lambda i: (-len(groups_list[i]), groups_list[i][0]))
    return ChainModes(groups=[groups_list[i] for i in order], claimed=0, clean=bool(clean),
                      distance=distance, estimate_distance_sd=[dists[i] for i in order],
                      worst_parameter=[worst[i] for i in order], same_sd=same_sd,
                      apart_sd=apart_sd)


#: Parameters whose r_hat is above this are examined by :func:`slow_parameters`.
SLOW_R_HAT = 1.01
#: A parameter's pooled draws are called bimodal when the density between its two halves
#: falls below this fraction of the lower of the two peaks around it.
VALLEY_FRACTION = 0.5
#: Crossings per chain that :func:`slow_parameters` aims at when it suggests more draws.
TARGET_CROSSINGS = 10


@dataclass
class SlowParameter:
    """How the chains move through one slowly mixing parameter.

    The pooled draws are split in two at the threshold that best separates them (the
    largest between-group variance, as Otsu's method); ``low`` and ``high`` are the means of
    the two groups. A chain is in the low state once it falls to ``low`` or below, in the high
    state once it rises to ``high`` or above, and keeps its state in between, so a crossing is
    a move from one group's centre to the other's.

    Attributes
    ----------
    name : str
        The parameter.
    r_hat : float
        Its r_hat over the chains examined.
    chains : list of int
        The chains examined, in order.
    low, high : float
        The centres of the two groups of draws.
    bimodal : bool
        The density of the pooled draws dips between ``low`` and ``high`` below
        :data:`VALLEY_FRACTION` of the lower peak (two separate states, not one wide one).
    share_high : list of float
        Per chain, the fraction of its draws in the high state.
    crossings : list of int
        Per chain, the moves between the states.
    far_chain : int
        The chain whose mean is furthest from the others' mean.
    far_distance_sd : float
        That distance, in pooled within-chain sds.
    draws : int
        Draws per chain.
    """

    name: str
    r_hat: float
    chains: list[int]
    low: float
    high: float
    bimodal: bool
    share_high: list[float]
    crossings: list[int]
    far_chain: int
    far_distance_sd: float
    draws: int

    @property
    def suggested_draws(self) -> int:
        """Draws per chain for about :data:`TARGET_CROSSINGS` crossings per chain.

        At the rate seen; at least twice the draws; a chain that never crossed counts half a
        crossing.
        """
        per_chain = max(float(np.mean(self.crossings)), 0.5)
        return int(max(2 * self.draws, math.ceil(TARGET_CROSSINGS * self.draws / per_chain)))


def _split(x: np.ndarray) -> tuple[float, float]:
    """The means of the two groups of ``x`` cut where their between-group variance peaks."""
    xs = np.sort(x)
    n = xs.size
    csum = np.cumsum(xs)
    k = np.arange(1, n)
    left = csum[:-1] / k
    right = (csum[-1] - csum[:-1]) / (n - k)
    between = k * (n - k) * (left - right) ** 2
    i = int(np.argmax(between))
    return float(left[i]), float(right[i])


def _valley(x: np.ndarray, low: float, high: float, bins: int = 40) -> bool:
    """Whether a histogram of ``x`` dips between ``low`` and ``high`` (:data:`VALLEY_FRACTION`)."""
    lo, hi = np.quantile(x, [0.005, 0.995])
    if not hi > lo:
        return False
    counts, edges = np.histogram(x, bins=bins, range=(lo, hi))
    smooth = np.convolve(counts, np.ones(3) / 3.0, mode="same")
    centres = 0.5 * (edges[1:] + edges[:-1])
    inner = (centres > low) & (centres < high)
    if not inner.any():
        return False
    left = smooth[centres <= low].max(initial=0.0)
    right = smooth[centres >= high].max(initial=0.0)
    return bool(smooth[inner].min() < VALLEY_FRACTION * min(left, right))


def _crossings(x: np.ndarray, low: float, high: float) -> tuple[float, int]:
    """Share of draws in the high state and moves between states, along one chain."""
    state = None
    high_draws = moves = 0
    for v in x:
        new = "high" if v >= high else "low" if v <= low else state
        if new is None:  # the chain starts between the centres: the nearer one
            new = "high" if v - low > high - v else "low"
        if state is not None and new != state:
            moves += 1
        state = new
        high_draws += state == "high"
    return high_draws / max(x.size, 1), moves


def slow_parameters(draws: Mapping[str, np.ndarray], r_hat: Mapping[str, float], *,
                    limit: float = SLOW_R_HAT, top: int = 3,
                    chains: list[int] | None = None) -> list[SlowParameter]:
    """The parameters that mix worst, and how the chains move through each.

    Parameters
    ----------
    draws : mapping of str to numpy.ndarray
        Per parameter, draws shaped ``(chain, draw)``.
    r_hat : mapping of str to float
        Per parameter, its r_hat (over ``chains``).
    limit : float
        Only parameters with an r_hat above this are examined.
    top : int
        At most this many, the highest r_hat first.
    chains : list of int, optional
        The chains to examine (default all).

    Returns
    -------
    list of SlowParameter
    """
    names = sorted((n for n in draws if n in r_hat and np.isfinite(r_hat[n])
                    and r_hat[n] > limit), key=lambda n: -r_hat[n])[:top]
    out = []
    for name in names:
        x = np.asarray(draws[name], dtype=np.float64)
        used = list(range(x.shape[0])) if chains is None else list(chains)
        x = x[used]
        if x.shape[1] < 2 or np.ptp(x) == 0:
            continue
        low, high = _split(x.ravel())
        states = [_crossings(c, low, high) for c in x]
        means = x.mean(axis=1)
        pooled = float(np.sqrt(np.mean(x.var(axis=1, ddof=1))))
        others = np.array([np.delete(means, i).mean() for i in range(len(means))]) \
            if len(means) > 1 else means
        far = np.abs(means - others) / pooled if pooled > 0 else np.zeros_like(means)
        i = int(np.argmax(far))
        out.append(SlowParameter(
            name=name, r_hat=float(r_hat[name]), chains=used, low=low, high=high,
            bimodal=_valley(x.ravel(), low, high), share_high=[s for s, _ in states],
            crossings=[m for _, m in states], far_chain=used[i],
            far_distance_sd=float(far[i]), draws=int(x.shape[1])))
    return out
