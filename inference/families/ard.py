"""Connecting a :class:`models.ARD` to the SBL engine (:func:`inference.engines.sbl.fit_sbl`).

SBL needs the whole design at once (type-II maximum likelihood is not a sum over batches), so
the batches are read and stacked: memory ``n x M`` floats. The fit returns the estimates
(alpha, sigma2), the Gaussian posterior of ``w`` given them, and, by ``[check] mode``:

conditional
    exact oracles: the Gaussian marginal of every relevant weight (the pruned ones are exactly
    0 in the conditional model, so there is nothing to compare);
hierarchical
    point estimates: every weight's posterior mean given the estimates, marked non-zero when
    it is in the relevant set, and sigma2; compared with the hierarchical posterior;
both
    both lists (two sampler runs).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy import special

from models.ard import ARD
from models.errors import DataError
from models.spec import Spec

from ..engines.dist import Dist
from ..engines.sbl import SBLResult, ard_posterior, fit_sbl
from ..result import AnalyticFit, ExactMarginal, PointEstimate

__all__ = ["fit_ard", "INTERVAL_LEVEL"]

#: Central interval drawn for each weight in the report.
INTERVAL_LEVEL = 0.9
#: Above this many features the report's weight figure draws the relevant ones only.
MAX_DRAWN_WEIGHTS = 60


def _design_notes(model: ARD, X: np.ndarray, label: str) -> list[str]:
    """What is unusual about the design, said plainly (none of it is an error)."""
    notes = []
    n, m = X.shape
    if n < m:
        notes.append(f"more features ({m}) than rows ({n}): the weights are not identified "
                     f"by the data alone; at the type-II ML optimum at most {n} of them are "
                     f"kept")
    norms = np.einsum("ij,ij->j", X, X)
    zero = [f for f, v in zip(model.features, norms, strict=True) if v == 0.0]
    if zero:
        notes.append(f"all-zero column(s) {', '.join(zero)} in {label}: never relevant, "
                     f"pruned")
    const = [f for j, f in enumerate(model.features)
             if norms[j] > 0 and np.all(X[:, j] == X[0, j])
             and not (model.intercept and f == "intercept")]
    if const and model.intercept:
        notes.append(f"constant column(s) {', '.join(const)} duplicate the intercept: they "
                     f"share its role (collinear columns; the evidence decides which are kept)")
    elif len(const) > 1:
        notes.append(f"constant columns {', '.join(const)} duplicate each other: at most one "
                     f"acts as the intercept (collinear columns; the evidence decides)")
    return notes


def _held_result(X: np.ndarray, y: np.ndarray, alpha, sigma2: float) -> SBLResult:
    """The exact posterior at hyperparameters held fixed, in the shape of a fit's result."""
    alpha = np.asarray(alpha, dtype=np.float64)
    post = ard_posterior(X, y, alpha, sigma2)
    return SBLResult(alpha=alpha, noise_var=float(sigma2), mean=post.mean,
                     relevant=post.relevant, cov=post.cov,
                     log_evidence=np.array([post.log_evidence]), n_iter=0, converged=True,
                     method="held")


def fit_ard(spec: Spec, *, out: Path | None = None, resume: bool = False,
            progress: bool = False) -> AnalyticFit:
    """Type-II maximum-likelihood fit of an :class:`models.ARD` spec.

    ``out``, ``resume`` and ``progress`` are accepted for the dispatch contract; SBL is not a
    stream, so there is no checkpoint to resume.
    """
    model: ARD = spec.model
    started = time.perf_counter()
    batches = []
    parts = []
    for batch in spec.data.batches():
        parts.append(model.design(batch))
        batches.append({"name": batch.name, "fingerprint": batch.fingerprint,
                        "rows": len(parts[-1][1])})
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    if not np.any(y != 0):
        raise DataError("the target is 0 in every row: the noise variance cannot be estimated",
                        path=spec.data.label, column=model.target)
    notes = _design_notes(model, X, spec.data.label)
    if model.held is None:
        sbl = fit_sbl(X, y, method=model.method, max_iter=model.max_iter, tol=model.tol,
                      relevance_threshold=model.relevance_threshold)
    else:
        sbl = _held_result(X, y, *model.held)

    features = list(model.features)
    relevant = [features[i] for i in sbl.relevant]
    if sbl.noise_var <= 1e-8 * float(np.mean(y**2)) or len(relevant) >= len(y):
        notes.append(f"sigma2 ({sbl.noise_var:.3g}) collapsed: the {len(relevant)} kept weights "
                     f"interpolate the {len(y)} rows (type-II ML over-fits here); a larger "
                     f"[fit] relevance_threshold (\"ric\") keeps fewer weights")
    pruned = [f for f in features if f not in set(relevant)]
    posterior = sbl.posterior()
    mean = sbl.mean
    sd = posterior.sd()
    z = special.ndtri(0.5 + INTERVAL_LEVEL / 2)  # stats.norm.ppf, without importing stats
    parameters = {
        "w": {"features": features, "mean": mean.tolist(), "sd": sd.tolist(),
              "relevant": relevant, "pruned": pruned, "cov": sbl.cov.tolist(),
              "cov_features": relevant,
              "distribution": "normal given alpha and sigma2 (pruned weights exactly 0)"},
        "alpha": {"features": features, "value": sbl.alpha.tolist(),
                  "note": ("type-II maximum likelihood" if model.held is None else "held")
                          + "; infinite (null) = pruned"},
        "sigma2": {"value": sbl.noise_var, "estimated": model.held is None,
                   "note": "type-II maximum likelihood" if model.held is None else "held"},
    }
    log_ev = [float(v) for v in sbl.log_evidence]
    info = {"method": sbl.method, "n_iter": sbl.n_iter, "converged": sbl.converged,
            "relevant_features": relevant, "log_evidence_per_iteration": log_ev,
            "relevance_threshold": model.relevance_threshold}
    marginals, estimates = [], []
    if model.mode in ("conditional", "both"):
        marginals = [ExactMarginal(f"w[{f}]", "w_relevant", {"relevant": f},
                                   Dist("norm", mean[i], sd[i]))
                     for i, f in zip(sbl.relevant, relevant, strict=True)]
    if model.mode in ("hierarchical", "both"):
        estimates = [PointEstimate(f"w[{f}]", "w", {"feature": f}, float(mean[i]),
                                   nonzero=f in set(relevant))
                     for i, f in enumerate(features)]
        estimates.append(PointEstimate("sigma2", "sigma2", {}, sbl.noise_var))
    notes = [("alpha and sigma2 held fixed (not estimated)" if model.held is not None else
              f"{sbl.method}: {sbl.n_iter} iteration(s), "
              f"{'converged' if sbl.converged else 'NOT converged (max_iter reached)'}"),
             f"relevant: {', '.join(relevant) or '(none)'} ({len(relevant)} of {len(features)})",
             f"sigma2 {sbl.noise_var:.6g}", *notes]
    shown = (np.arange(len(features)) if len(features) <= MAX_DRAWN_WEIGHTS
             else sbl.relevant[:MAX_DRAWN_WEIGHTS])
    caption = (f"Posterior mean and {round(100 * INTERVAL_LEVEL)} % interval of each weight "
               f"given the type-II ML estimates of alpha and sigma2; pruned weights (alpha "
               f"infinite) are exactly 0 (open circles).")
    if len(shown) < len(features):
        caption += (f" {len(features)} weights: only the relevant ones are drawn"
                    f"{f' (the first {len(shown)})' if len(shown) < len(relevant) else ''}.")
    plots = [
        {"kind": "intervals", "title": "Weights", "caption": caption,
         "names": [features[i] for i in shown], "mean": mean[shown].tolist(),
         "lower": (mean - z * sd)[shown].tolist(), "upper": (mean + z * sd)[shown].tolist(),
         "zero": [features[i] in set(pruned) for i in shown]},
        {"kind": "series", "title": "Log evidence per iteration",
         "caption": f"{sbl.method}: log p(y | alpha, sigma2) after each iteration "
                    f"(0 = the starting point).",
         "values": log_ev, "xlabel": "iteration", "ylabel": "log evidence"},
    ]
    return AnalyticFit(
        model=model.name, parameters=parameters, marginals=marginals,
        log_evidence=log_ev[-1], n_rows=len(y), batches=batches,
        seconds=time.perf_counter() - started, state=sbl, notes=notes,
        estimates=estimates, plots=plots, info=info)
