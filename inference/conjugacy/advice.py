"""What a user can change when NUTS on their model gave no verdict.

The exact posterior knows the geometry the sampler had to explore. When the sampler's health
failed (the verdict is "inconclusive"), the strongest correlations of each Gaussian block's
exact posterior say whether a diagonal mass matrix, which every NUTS sampler adapts by
default, could follow it: a pair of coefficients correlated at 0.999 leaves the sampler
taking steps along the narrow direction, and its draws barely move along the long one
(Longley's intercept and YEAR, the NIST reference regression, correlated at -0.997 under a
N(0, 10^6 s2) prior: bulk ESS 10 of 4,000 draws with nutpie's diagonal adaptation, 2,500
with its low-rank one).
"""

from __future__ import annotations

import numpy as np

__all__ = ["STRONG_CORRELATION", "sampler_advice", "strongest_correlations"]

#: A posterior correlation beyond which a diagonal mass matrix is named as the likely cause.
STRONG_CORRELATION = 0.99

#: Largest Gaussian block whose correlation matrix is formed (d^2 floats, d^3 / 3 flops).
MAX_DIMENSION = 2000


def strongest_correlations(ex, limit: float = STRONG_CORRELATION) -> list[tuple]:
    """Pairs of scalars whose exact posterior correlation is at least ``limit`` in size.

    Parameters
    ----------
    ex : ExactPosterior
        The exact posterior.
    limit : float
        The smallest absolute correlation reported.

    Returns
    -------
    list of (str, str, float)
        ``(label, label, correlation)``, strongest first; labels as ``az.summary`` writes
        them (``"beta[6]"``). Gaussian blocks larger than :data:`MAX_DIMENSION` are skipped.
    """
    from scipy.linalg import solve_triangular

    pairs = []
    for block in ex.blocks:
        slices = getattr(block, "slices", {})
        if not hasattr(block, "precision_root") or not slices:
            continue
        R = block.precision_root()
        d = R.shape[0]
        if d < 2 or d > MAX_DIMENSION:
            continue
        S = solve_triangular(R, np.eye(d), lower=False)  # covariance = S S'
        cov = S @ S.T
        sd = np.sqrt(np.diag(cov))
        corr = cov / np.outer(sd, sd)
        labels = [""] * d
        for name in block.latents:
            s = slices[name]
            node = ex.graph.nodes[name]
            for k, (_, label, _) in enumerate(ex.scalar_labels(name, node.dims,
                                                                block.shapes[name])):
                labels[s.start + k] = label
        i, j = np.triu_indices(d, k=1)
        strong = np.abs(corr[i, j]) >= limit
        pairs += [(labels[a], labels[b], float(corr[a, b]))
                  for a, b in zip(i[strong], j[strong], strict=True)]
    return sorted(pairs, key=lambda p: -abs(p[2]))


def sampler_advice(ex, comparison, adaptation: str = "diag") -> list[str]:
    """Sentences on what to change when the sampler's health left no verdict.

    Parameters
    ----------
    ex : ExactPosterior
        The exact posterior the draws were judged against.
    comparison : bayescheck.inference.checking.compare.Comparison
        The judged draws.
    adaptation : str
        The mass-matrix adaptation the draws were taken with.

    Returns
    -------
    list of str
        Empty unless the comparison is inconclusive.
    """
    if comparison.verdict != "inconclusive":
        return []
    out = []
    pairs = strongest_correlations(ex)
    if pairs:
        a, b, r = pairs[0]
        more = (f" (and {len(pairs) - 1} more pair(s) beyond {STRONG_CORRELATION:g})"
                if len(pairs) > 1 else "")
        said = (f"The exact posterior has {a} and {b} correlated at {r:+.5f}{more}: a "
                f"sampler that adapts a diagonal mass matrix takes steps as small as the "
                f"narrow direction allows and barely moves along the long one.")
        if adaptation == "diag":
            said += (" Sample with nutpie's low-rank mass matrix (check_model(..., "
                     "adaptation=\"low_rank\"), `bayescheck check --adaptation low_rank`), or "
                     "centre and scale the columns behind these coefficients.")
        else:
            said += (" Even with the low-rank mass matrix it did not mix: centre and scale "
                     "the columns behind these coefficients, or reparametrise them.")
        out.append(said)
    slow = sorted((p for p in comparison.parameters if np.isfinite(p.ess_bulk)),
                  key=lambda p: p.ess_bulk)[:3]
    if slow:
        out.append("Slowest to mix (bulk ESS): " + ", ".join(
            f"{p.name} {p.ess_bulk:.0f}" for p in slow) + ".")
    if not pairs:
        out.append("No strong posterior correlation explains it: more tuning steps (tune) "
                   "and draws, or a prior that keeps the sampler out of long tails, are the "
                   "levers.")
    return out
