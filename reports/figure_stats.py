"""The statistics the report's figures draw, with numpy alone.

The figures show arviz_stats' kernel density estimate and its multi-chain rank test (the
ones arviz_plots draws). Importing arviz_stats costs 1-3 s of CPU (xarray, pandas and most
of scipy: scipy.signal, scipy.stats, scipy.optimize), more than drawing every figure of a
report, so a report process would spend most of its time on the import. The same
quantities are computed here from their definitions; ``tests/reports/test_figure_stats.py``
checks them against arviz_stats (equal to about 1e-9).

- :func:`kde`: Gaussian kernel density on a 512-bin histogram of the draws' range,
  convolved with a sampled Gaussian (half-width 4 bandwidths) after reflecting a fifth
  of the bins at each end (boundary correction), normalised to integrate to 1. Bandwidth:
  the mean of Silverman's rule (0.9 min(sd, IQR / 1.34) n^-1/5; Silverman 1986, eq. 3.31)
  and the improved Sheather-Jones plug-in (Botev, Grotowski and Kroese 2010, "Kernel
  density estimation via diffusion", Ann. Statist. 38, eq. 30 with l = 7), the root of the
  fixed-point equation on (0, 0.01) of the squared relative bandwidth, Silverman's where it
  has none: arviz_stats' default ("experimental") bandwidth.
- :func:`fractional_ranks`, :func:`pit_ecdf`: ranks over all chains scaled to (0, 1], each
  chain's ECDF minus the uniform CDF.
- :func:`mchain_uniformity_test`: the pointwise multi-chain rank test (Säilynoja, Bürkner and
  Vehtari 2022, "Graphical test for discrete uniformity and its applications in goodness-of-
  fit evaluation and multiple sample comparison", Stat. Comput. 32): at each of the
  ``n`` points ``z_i = i / (n + 1)`` the number of a chain's ranks at or below ``z_i`` is
  hypergeometric (a chain's ``n`` of the ``c n`` ranks, ``floor(z_i c n)`` drawn); its
  two-sided mid-p value per chain, combined over chains and then over points by the Cauchy
  combination (Liu and Xie 2020, JASA 115), with each chain's and point's closed-form
  Shapley contribution to the mean (arviz_stats' ``mtc_c`` method).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fractional_ranks", "kde", "mchain_uniformity_test", "pit_ecdf"]

GRID_LEN = 512


def _silverman(x: np.ndarray, sd: float) -> float:
    q25, q75 = np.quantile(x, [0.25, 0.75])
    return 0.9 * min(sd, (q75 - q25) / 1.34) * len(x) ** -0.2


def _dct(x: np.ndarray) -> np.ndarray:
    """Type-II discrete cosine transform (unnormalised, first term not halved) via one FFT."""
    n = len(x)
    reordered = np.concatenate((x[0::2], x[np.arange(n - 1, 0, -2)]))
    twiddle = np.r_[1.0, 2.0 * np.exp(-1j * np.arange(1, n) * np.pi / (2 * n))]
    return np.real(twiddle * np.fft.fft(reordered))


class _IsjEquation:
    """``t - xi gamma^[l](t)`` of Botev et al. (2010), eq. 30 with l = 7, as a function of t.

    The terms that do not depend on ``t`` (``k^2s a_k^2`` for s = 2..7, the constants of
    each stage) are computed once per sample: Brent's method evaluates the equation about
    ten times per KDE, and recomputing the powers was most of each evaluation (0.4 of
    0.55 ms). Every operation on ``t`` is the one written in the equation, in the same
    order, so the values are the same to the last bit.
    """

    ELL = 7

    def __init__(self, n: int, k_sq: np.ndarray, a_sq: np.ndarray):
        self.n = n
        self.scaled = -k_sq * np.pi**2  # the exponent's factor of t
        # stage s = 7..2: (0.5 pi^2s, k^2s a^2, c_s (2s - 1)!! / sqrt(pi / 2), 2 / (3 + 2s))
        self.stages = []
        for s in range(self.ELL, 1, -1):
            odd_product = np.prod(np.arange(1.0, 2 * s + 1, 2)) / math.sqrt(np.pi / 2)
            c = (1 + 0.5 ** (s + 0.5)) / 3
            self.stages.append((0.5 * np.pi ** (2.0 * s), k_sq**s * a_sq, c * odd_product,
                                2.0 / (3.0 + 2.0 * s)))

    def __call__(self, t: float) -> float:
        top, weights, _, _ = self.stages[0]
        f = top * (weights * np.exp(self.scaled * t)).sum()
        for i in range(1, len(self.stages)):
            scale, weights, constant, power = self.stages[i]
            t_s = (constant / (self.n * f)) ** power
            f = scale * (weights * np.exp(self.scaled * t_s)).sum()
        return t - (2 * self.n * math.sqrt(np.pi) * f) ** -0.4


def _root(fun, lo: float, hi: float, xtol: float = 2e-12, rtol: float = 4 * 2.220446049250313e-16,
          max_iter: int = 100) -> float | None:
    """A root of ``fun`` in ``[lo, hi]`` by Brent's method, or None without a sign change.

    Brent (1973), "Algorithms for minimization without derivatives", ch. 4: keep a bracket
    ``[current, block]``; step by inverse quadratic or secant interpolation when it lands
    well inside the bracket and shrinks fast enough, else bisect. The tolerances are
    scipy.optimize.brentq's defaults, so that where the equation has several roots in the
    interval (a multimodal sample) the same one is found as arviz_stats finds.
    """
    previous, current = lo, hi
    f_prev, f_cur = fun(previous), fun(current)
    if not (np.isfinite(f_prev) and np.isfinite(f_cur)) or f_prev * f_cur > 0:
        return None
    if f_prev == 0:
        return previous
    if f_cur == 0:
        return current
    block = f_block = step_prev = step = 0.0
    for _ in range(max_iter):
        if f_prev != 0 and f_cur != 0 and (f_prev < 0) != (f_cur < 0):
            block, f_block = previous, f_prev
            step_prev = step = current - previous
        if abs(f_block) < abs(f_cur):  # keep the best estimate in ``current``
            previous, current, block = current, block, current
            f_prev, f_cur, f_block = f_cur, f_block, f_cur
        delta = (xtol + rtol * abs(current)) / 2
        bisect = (block - current) / 2
        if f_cur == 0 or abs(bisect) < delta:
            return current
        if abs(step_prev) > delta and abs(f_cur) < abs(f_prev):
            if previous == block:  # secant
                trial = -f_cur * (current - previous) / (f_cur - f_prev)
            else:  # inverse quadratic through the three points
                d_prev = (f_prev - f_cur) / (previous - current)
                d_block = (f_block - f_cur) / (block - current)
                trial = -f_cur * (f_block * d_block - f_prev * d_prev) / (
                    d_block * d_prev * (f_block - f_prev))
            if 2 * abs(trial) < min(abs(step_prev), 3 * abs(bisect) - delta):
                step_prev, step = step, trial
            else:
                step_prev = step = bisect
        else:
            step_prev = step = bisect
        previous, f_prev = current, f_cur
        current += step if abs(step) > delta else (delta if bisect > 0 else -delta)
        f_cur = fun(current)
    return current


def _isj(x: np.ndarray, counts: np.ndarray, grid_range: float, silverman: float) -> float:
    """Improved Sheather-Jones bandwidth from the histogram ``counts`` (Botev et al. 2010).

    ``silverman`` (the sample's Silverman bandwidth) is taken where the equation has no root.
    """
    n, bins = len(x), len(counts) - 1
    a = _dct(counts / n)
    k_sq = np.arange(1, bins, dtype=np.float64) ** 2
    a_sq = a[1:bins] ** 2
    t = _root(_IsjEquation(n, k_sq, a_sq), 0.0, 0.01)
    if t is None or t <= 0:
        t = (silverman / grid_range) ** 2
    return math.sqrt(t) * grid_range


def _kde_1d(x: np.ndarray, grid_len: int) -> tuple[np.ndarray, np.ndarray]:
    x = x[np.isfinite(x)]
    if x.size == 0 or np.all(x == x[0]):
        return np.zeros(grid_len), np.full(grid_len, np.nan)
    lo, hi, sd = x.min(), x.max(), float(np.std(x))
    counts, edges = np.histogram(x, bins=grid_len, range=(lo, hi))
    silverman = _silverman(x, sd)
    bw = 0.5 * (silverman + _isj(x, counts, hi - lo, silverman))
    width = edges[1] - edges[0]
    density = counts / width / len(x)
    bw_bins = bw / width
    half = math.ceil(4 * bw_bins)
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) / bw_bins) ** 2)
    pad = int(grid_len / 5)  # reflect a fifth of the bins at each end
    padded = np.concatenate([density[pad - 1::-1], density, density[:grid_len - pad - 1:-1]])
    full = np.convolve(padded, kernel, mode="full")
    pdf = full[half:half + len(padded)][pad:pad + grid_len] / (bw_bins * math.sqrt(2 * np.pi))
    pdf = pdf / (pdf.sum() * width)
    return (edges[1:] + edges[:-1]) / 2, pdf


def kde(x, grid_len: int = GRID_LEN) -> tuple[np.ndarray, np.ndarray]:
    """Kernel density estimate of each row of ``x`` (the last axis); ``grid, pdf``.

    Both have the shape of ``x`` with the last axis replaced by ``grid_len`` points. A row
    with no finite value or one value only gets zeros and NaN (nothing to draw).
    """
    x = np.asarray(x, dtype=np.float64)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
    out = [_kde_1d(r, grid_len) for r in rows]
    shape = x.shape[:-1] + (grid_len,)
    return (np.stack([g for g, _ in out]).reshape(shape),
            np.stack([p for _, p in out]).reshape(shape))


def fractional_ranks(x) -> np.ndarray:
    """Ranks 1..N of every value of ``x`` (ties in sort order) divided by N, in its shape."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.ravel()
    ranks = np.empty(flat.size, dtype=int)
    ranks[np.argsort(flat, axis=None)] = np.arange(1, flat.size + 1)
    return (ranks / flat.size).reshape(x.shape)


def pit_ecdf(ranks, npoints: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ECDF at ``npoints`` even points of [0, 1] minus the uniform CDF there."""
    ranks = np.asarray(ranks, dtype=np.float64)
    points = np.linspace(0, 1, npoints)
    xs, ys = [], []
    for row in ranks.reshape(-1, ranks.shape[-1]):
        row = np.sort(row[np.isfinite(row)])
        xs.append(points)
        ys.append(np.searchsorted(row, points, side="right") / row.size - points
                  if row.size else np.full(npoints, np.nan))
    shape = ranks.shape[:-1] + (npoints,)
    return np.stack(xs).reshape(shape), np.stack(ys).reshape(shape)


def _shapley_mean(values: np.ndarray) -> np.ndarray:
    """Shapley contribution of each value to their mean, along the last axis (closed form)."""
    n = values.shape[-1]
    if n == 1:
        return np.zeros_like(values)
    harmonic = np.sum(1.0 / np.arange(1, n + 1))
    others = (values.sum(axis=-1, keepdims=True) - values) / (n - 1)
    return values / n + (harmonic - 1) / n * (values - others)


def _hypergeom_tables(total: int, good: int, drawn: np.ndarray):
    """Hypergeometric pmf and cdf tables, ``(len(drawn), good + 1)``.

    Of ``total`` items ``good`` are marked; row ``i`` holds the probabilities that 0..good
    marked ones are among ``drawn[i]`` taken without replacement.
    """
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, total + 1)))])

    def log_choose(a, b):
        ok = (b >= 0) & (b <= a)
        safe_b = np.clip(b, 0, a)
        return np.where(ok, log_fact[a] - log_fact[safe_b] - log_fact[a - safe_b], -np.inf)

    k = np.arange(good + 1)[None, :]
    n = drawn[:, None]
    log_pmf = (log_choose(np.full_like(k, good), k) + log_choose(total - good, n - k)
               - log_choose(np.asarray([total]), n))
    pmf = np.exp(log_pmf)
    # Each tail summed from its own end, the upper one complemented (as scipy's boost
    # hypergeometric does): a cdf near 1 summed from 0 carries the rounding of every term
    # (about 1e-14 absolute), which the mid-p upper tail 1 - lower then turns into a large
    # relative error where that tail is small (3e-4 measured at 1200 items, enough to move
    # a p-value of 3e-7 by 5.5e-6 relative against arviz-stats').
    lower = np.cumsum(pmf, axis=1)
    above = np.zeros_like(pmf)  # P(X > k)
    above[:, :-1] = np.cumsum(pmf[:, :0:-1], axis=1)[:, ::-1]
    return pmf, np.minimum(np.where(lower <= 0.5, lower, 1.0 - above), 1.0)


def mchain_uniformity_test(ranks) -> tuple[float, np.ndarray, np.ndarray]:
    """Multi-chain rank uniformity test of fractional ``ranks`` ``(chain, draw)``.

    Returns the p-value, each chain's Shapley contribution at each point ``(draw, chain)``
    and each point's contribution to the p-value ``(draw,)`` (see the module's text).
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    chains, n = ranks.shape
    if n == 0:
        return math.nan, np.array([]), np.array([])
    if chains < 2:
        raise ValueError("the multi-chain rank test needs at least 2 chains")
    z = np.arange(1, n + 1) / (n + 1)
    total = chains * n
    drawn = np.floor(z * total).astype(int)
    pmf, cdf = _hypergeom_tables(total, n, drawn)
    rows = np.arange(n)
    gamma = np.empty((n, chains))
    for j, chain in enumerate(np.sort(ranks, axis=1)):
        below = np.searchsorted(chain, z, side="right")
        lower = cdf[rows, below] - 0.5 * pmf[rows, below]  # mid-p lower tail
        gamma[:, j] = 2 * np.minimum(lower, 1.0 - lower)
    between = np.tan((0.5 - gamma) * np.pi)
    point_p = 0.5 - np.arctan(between.mean(axis=1)) / np.pi
    within = np.tan((0.5 - point_p) * np.pi)
    p_value = float(0.5 - np.arctan(within.mean()) / np.pi)
    return p_value, _shapley_mean(between), _shapley_mean(within)
