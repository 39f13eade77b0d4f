"""Connecting a :class:`bayescheck.models.ARD` to the SBL engine.

The engine is :func:`bayescheck.inference.engines.sbl.fit_sbl`.

SBL needs the whole design at once (type-II maximum likelihood is not a sum over batches), so
the batches are read and stacked: memory ``n x M`` floats. The fit returns the estimates
(alpha, sigma2), the Gaussian posterior of ``w`` given them, and, by ``[check] mode``:

conditional
    exact oracles: the Gaussian marginal of every relevant weight (the pruned ones are exactly
    0 in the conditional model, so there is nothing to compare);
hierarchical
    point estimates: every weight's posterior mean given the estimates, marked non-zero when
    it is in the relevant set, and sigma2; compared with the hierarchical posterior as
    information (:func:`bayescheck.inference.checking.compare.as_information`): the two models
    differ (type-II
    maximum likelihood against Gamma hyperpriors), so a difference is reported, not failed;
    only a numerical inconsistency fails;
both
    both lists (two sampler runs).

Whatever the mode, a fit that estimated ``(alpha, sigma2)`` carries a certificate
(``AnalyticFit.certificates``): the Tipping-Faul optimality conditions evaluated at the final
estimates (:func:`bayescheck.inference.engines.sbl.ard_optimality`), which fails when a
condition is violated by more than :data:`CERTIFICATE_TOL`. The conditions are local, and the
evidence has many local maxima, so the certificate says "local maximum" and lists the starts
the fit compared (their log evidence and the gap between them). The exact conditional
posterior and this certificate are what can be wrong in an ARD fit; together they make its
verdict.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.inference.engines.dist import Dist
from bayescheck.inference.engines.errors import OutOfRange
from bayescheck.inference.engines.sbl import (
    SBLResult,
    ard_optimality,
    ard_posterior,
    fit_sbl,
    resolve_relevance_threshold,
)
from bayescheck.inference.families.linear_regression import (
    check_features,
    new_rows,
    row_variances,
)
from bayescheck.inference.families.predictive import interval_columns, posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import (
    AnalyticFit,
    ExactMarginal,
    FitRecord,
    PointEstimate,
    Posterior,
)
from bayescheck.models.ard import ARD
from bayescheck.models.errors import BayescheckError, DataError
from bayescheck.models.spec import Spec

__all__ = ["CERTIFICATE_TOL", "FAMILIES", "START_WORDS", "certificate", "estimate",
           "exact_draws_ard", "fit_ard", "predict_ard"]

#: Largest violation of an optimality condition the certificate accepts, on a log scale
#: (|log(alpha / alpha_opt)|, log(ratio / threshold) for a pruned weight, |log(sigma2 /
#: sigma2_opt)|): a 1 % relative error. Measured (diabetes + 10 noise columns, the ARD
#: example): the fast method converged leaves ~1e-6 (its tol), MacKay ~2e-5, EM (linear
#: convergence) ~6e-4; alpha of one kept weight moved by 10 % gives 0.095.
CERTIFICATE_TOL = 1e-2


#: How each start of the fast method is named in the certificate and the fit's notes.
START_WORDS = {"empty": "from the empty model",
               "full_em": "from every column after a few EM steps",
               "given": "from the given precisions"}


def _starts_compared(sbl: SBLResult) -> tuple[list[dict], str]:
    """The starts of the fit as records, and a sentence on what was compared."""
    if not sbl.starts:
        return [], (f"one run of {sbl.method} from the full model; other starts or methods "
                    f"may reach a higher maximum")
    best = max(sbl.starts, key=lambda s: s.objective)
    records = [{"start": s.start, "log_evidence": s.log_evidence, "objective": s.objective,
                "n_relevant": s.n_relevant, "n_iter": s.n_iter, "converged": s.converged,
                "chosen": s is best} for s in sbl.starts]
    if len(sbl.starts) == 1:
        return records, (f"one start ({START_WORDS.get(best.start, best.start)}); another "
                         f"start may reach a higher maximum")
    runs = "; ".join(f"{START_WORDS.get(s.start, s.start)}: {s.objective:.4f} with "
                     f"{s.n_relevant} weights" for s in sbl.starts)
    gap = best.objective - max(s.objective for s in sbl.starts if s is not best)
    return records, (f"the best of {len(sbl.starts)} starts ({runs}; the other "
                     f"{gap:.3g} nats lower); a higher maximum elsewhere is not excluded")


def certificate(X: np.ndarray, y: np.ndarray, sbl: SBLResult, features: list[str],
                relevance_threshold, *, tol: float = CERTIFICATE_TOL) -> dict:
    """The Tipping-Faul optimality conditions at a fit's final ``(alpha, sigma2)``.

    The conditions are those of a local maximum: they hold at every maximum the fit can
    stop at, and the evidence of ARD has many (different supports). So the certificate
    certifies a local maximum, and says what was compared: the starts of the fast method,
    their (penalised) log evidence and the gap between them.

    Parameters
    ----------
    X, y : numpy.ndarray
        The design and target the fit saw.
    sbl : SBLResult
        The fit (its ``alpha`` and ``noise_var`` are checked, not trusted).
    features : list of str
        Column names, for the report.
    relevance_threshold : float or "ric"
        The fit's threshold (above 1 the conditions are those of the penalised evidence).
    tol : float
        Largest violation accepted (log scale, see :data:`CERTIFICATE_TOL`).

    Returns
    -------
    dict
        ``name``, ``verdict`` ("pass" / "fail"), ``reason``, ``scope`` ("local maximum"),
        ``tolerance``, ``largest_violation``, ``worst`` (a feature or "sigma2"),
        ``threshold``, ``starts`` (each start's ``start``, ``log_evidence``, ``objective``,
        ``n_relevant``, ``n_iter``, ``converged``, ``chosen``; empty for EM and MacKay),
        ``start_gap`` (the chosen start's objective minus the next best, None with one
        start), and the conditions: ``kept`` (feature, alpha, alpha_opt, violation),
        ``pruned`` (feature, q2_over_s, violation; by decreasing q2_over_s), ``sigma2``
        (value, stationary, violation).
    """
    opt = ard_optimality(X, y, sbl.alpha, sbl.noise_var,
                         relevance_threshold=relevance_threshold)
    kept = np.isfinite(sbl.alpha)
    worst = "sigma2" if opt.worst is None else features[opt.worst]
    ok = opt.max_violation <= tol
    starts, compared = _starts_compared(sbl)
    objectives = sorted((s["objective"] for s in starts), reverse=True)
    evidence = "penalised evidence" if opt.threshold > 1.0 else "evidence"
    conditions = ("alpha_i = s_i^2 / (q_i^2 - s_i) for kept weights, q_i^2 / s_i <= "
                  f"{opt.threshold:.4g} for pruned ones, sigma2 = |y - X mu|^2 / (N - sum "
                  "gamma)")
    if ok:
        reason = (f"a local maximum of the {evidence}: the estimates satisfy the Tipping-Faul "
                  f"conditions ({conditions}) to {opt.max_violation:.2g} (tolerance {tol:g}); "
                  f"{compared}")
    else:
        reason = (f"the estimates are not a maximum of the {evidence}: {worst} violates its "
                  f"condition by {opt.max_violation:.3g} (log scale, tolerance {tol:g})"
                  + ("" if sbl.converged else "; the fit stopped at max_iter without "
                     "converging"))
    return {
        "name": "type-II ML local maximum (Tipping-Faul conditions)",
        "verdict": "pass" if ok else "fail", "reason": reason, "scope": "local maximum",
        "tolerance": tol, "largest_violation": opt.max_violation,
        "worst": worst, "threshold": opt.threshold,
        "penalised": opt.threshold > 1.0,
        "starts": starts,
        "start_gap": objectives[0] - objectives[1] if len(objectives) > 1 else None,
        "kept": [{"feature": features[i], "alpha": float(sbl.alpha[i]),
                  "alpha_opt": float(opt.alpha_opt[i]), "q2_over_s": float(opt.ratio[i]),
                  "violation": float(opt.violation[i])}
                 for i in np.flatnonzero(kept)],
        # pruned weights closest to being kept first (all-zero columns, ratio NaN, last)
        "pruned": [{"feature": features[i], "q2_over_s": float(opt.ratio[i]),
                    "violation": float(opt.violation[i])}
                   for i in sorted(np.flatnonzero(~kept),
                                   key=lambda i: -np.nan_to_num(opt.ratio[i], nan=-np.inf))],
        "sigma2": {"value": sbl.noise_var, "stationary": opt.noise_opt,
                   "violation": opt.noise_violation},
    }


def _hierarchical_as_information(fit, comparison, idata, spec):
    """``posterior_checks`` of ARD: the hierarchical comparison is information."""
    from bayescheck.inference.checking.compare import (
        as_information,  # scipy.stats: not on the fit path
    )

    return as_information(comparison)


def _design_findings(model: ARD, X: np.ndarray) -> dict:
    """All-zero and constant columns of the design, by name (unusual, not errors)."""
    nonzero = np.any(X != 0, axis=0)  # not the squares: they underflow for tiny values
    zero = [f for f, v in zip(model.features, nonzero, strict=True) if not v]
    const = [f for j, f in enumerate(model.features)
             if nonzero[j] and np.all(X[:, j] == X[0, j])
             and not (model.intercept and f == "intercept")
             and not (model.formula is not None and f == "Intercept")]
    return {"zero_columns": zero, "constant_columns": const}


def _held_result(X: np.ndarray, y: np.ndarray, alpha, sigma2: float) -> SBLResult:
    """The exact posterior at hyperparameters held fixed, in the shape of a fit's result."""
    alpha = np.asarray(alpha, dtype=np.float64)
    post = ard_posterior(X, y, alpha, sigma2)
    return SBLResult(alpha=alpha, noise_var=float(sigma2), mean=post.mean,
                     relevant=post.relevant, cov=post.cov,
                     log_evidence=np.array([post.log_evidence]), n_iter=0, converged=True,
                     method="held")



def estimate(model: ARD, X: np.ndarray, y: np.ndarray) -> SBLResult:
    """The model's type-II ML fit on arrays, or its exact posterior at ``held`` values.

    ``relevance_threshold = "auto"`` is resolved on the shape of ``X`` (see
    :func:`bayescheck.inference.engines.sbl.resolve_relevance_threshold`).
    """
    threshold = resolve_relevance_threshold(model.relevance_threshold, *X.shape,
                                            method=model.method)
    # An overflow is not warned about but refused below, for the CLI and the estimator alike.
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if model.held is not None:
                return _held_result(X, y, *model.held)
            sbl = fit_sbl(X, y, method=model.method, max_iter=model.max_iter, tol=model.tol,
                          relevance_threshold=threshold)
    except OutOfRange as exc:
        if exc.column is None:
            raise
        raise OutOfRange(f"feature {model.features[exc.column]!r}: {exc.reason}") from None
    lost = [name for name, value in (
        ("log evidence", sbl.log_evidence[-1:]), ("noise variance", sbl.noise_var),
        ("weights' means", sbl.mean), ("weights' covariance", sbl.cov),
        ("precisions alpha", np.where(np.isposinf(sbl.alpha), 0.0, sbl.alpha)))
        if not np.all(np.isfinite(value))]
    if lost:
        raise OutOfRange(
            f"ARD's fit lost its numbers to float64's range ({', '.join(lost)} not finite) "
            f"(largest |x| = "
            f"{float(np.max(np.abs(X))) if X.size else 0.0:.3g}, largest |y| = "
            f"{float(np.max(np.abs(y))) if y.size else 0.0:.3g}); rescale the columns, for "
            f"example to unit standard deviation")
    return sbl


def fit_ard(spec: Spec, *, out: Path | None = None, resume: bool = False,
            progress: bool = False) -> AnalyticFit:
    """Type-II maximum-likelihood fit of an :class:`bayescheck.models.ARD` spec.

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
    findings = _design_findings(model, X)
    threshold = resolve_relevance_threshold(model.relevance_threshold, *X.shape,
                                            method=model.method)
    try:
        sbl = estimate(model, X, y)
    except OutOfRange as exc:
        raise DataError(str(exc), path=spec.data.label) from None

    features = list(model.features)
    relevant = [features[i] for i in sbl.relevant]
    findings["noise_collapsed"] = bool(sbl.noise_var <= 1e-8 * float(np.mean(y**2))
                                       or len(relevant) >= len(y))
    pruned = [f for f in features if f not in set(relevant)]
    posterior = sbl.posterior()
    mean = sbl.mean
    sd = posterior.sd()
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
    if model.formula is not None:
        parameters["w"]["formula"] = model.formula.to_json()
    log_ev = [float(v) for v in sbl.log_evidence]
    info = {"method": sbl.method, "n_iter": sbl.n_iter, "converged": sbl.converged,
            "max_iter": model.max_iter,
            "relevant_features": relevant, "log_evidence_per_iteration": log_ev,
            "relevance_threshold": model.relevance_threshold,
            "relevance_threshold_used": threshold}
    if sbl.starts:
        info["starts"] = [{"start": s.start, "log_evidence": s.log_evidence,
                           "objective": s.objective, "n_relevant": s.n_relevant,
                           "n_iter": s.n_iter, "converged": s.converged}
                          for s in sbl.starts]
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
    certificates = []
    if model.held is None:
        cert = certificate(X, y, sbl, features, threshold)
        certificates.append(cert)
        info["certificate"] = {k: cert[k] for k in ("verdict", "scope", "largest_violation",
                                                     "worst", "tolerance", "start_gap")}
        if threshold != "ric":
            ric = max(2.0 * np.log(len(features)), 1.0)
            info["kept_below_ric"] = {
                "threshold": float(ric),
                "features": [k["feature"] for k in cert["kept"] if k["q2_over_s"] <= ric]}
    return AnalyticFit(
        Posterior(model=model.name, parameters=parameters, marginals=marginals,
                  log_evidence=log_ev[-1], estimates=estimates, state=sbl),
        FitRecord(n_rows=len(y), batches=batches, seconds=time.perf_counter() - started,
                  info=info, findings=findings, certificates=certificates,
                  posterior_checks=_hierarchical_as_information if estimates else None))


def predict_ard(spec: Spec, posterior: dict, batch: Batch, *, level: float = 0.9,
                where: str = "posterior.json") -> dict[str, np.ndarray]:
    """Posterior predictive at each new row given the estimated ``(alpha, sigma2)``.

    ``N(x' m, sigma2 + x_r' C x_r)``, with ``C`` the posterior covariance of the relevant
    weights ``r`` (the pruned ones are exactly 0); the intercept is added as in the fit.

    Parameters
    ----------
    spec : models.Spec
        The spec the fit came from.
    posterior : dict
        ``posterior.json`` of ``bayescheck fit``.
    batch : models.Batch
        The new rows (the target column, if present, is not used).
    level : float
        Mass of the central interval.
    where : str
        Where ``posterior`` was read from, for error messages.

    Returns
    -------
    dict of str to numpy.ndarray
        ``mean``, ``sd``, ``lower_<level>``, ``upper_<level>`` per row.
    """
    if batch is None:
        raise BayescheckError(f"predict for {spec.model.name!r} needs --data NEW")
    model: ARD = spec.model
    saved = posterior_value(posterior, "w", where=where)
    features = list(posterior_value(posterior, "w", "features", where=where))
    if "formula" not in saved:
        check_features(features, model.features, where)
    X = new_rows(model, saved, batch, where)
    mean = np.asarray(posterior_value(posterior, "w", "mean", where=where), dtype=float)
    relevant = list(posterior_value(posterior, "w", "cov_features", where=where))
    unknown = [f for f in relevant if f not in features]
    if unknown:
        raise BayescheckError(f"{where}: cov_features {unknown} are not among the features")
    cols = [features.index(f) for f in relevant]
    cov = np.asarray(posterior_value(posterior, "w", "cov", where=where),
                     dtype=float).reshape(len(cols), len(cols))
    noise = float(posterior_value(posterior, "sigma2", "value", where=where))
    Xr = X[:, cols]
    return interval_columns(Dist("norm", X @ mean, np.sqrt(noise + row_variances(Xr, cov))),
                            level)


def exact_draws_ard(posterior: dict, *, draws: int, chains: int,
                    rng: np.random.Generator) -> tuple[dict, dict, dict]:
    """Independent draws of the conditional declaration's ``w_relevant`` and ``w``.

    The posterior of the weights given ``(alpha, sigma2)`` at the fit's estimates (type-II
    maximum likelihood, or the values held) is exactly Gaussian: ``w_relevant ~ N(mu, Sigma)``
    over the relevant set (dims ``relevant``), and ``w`` (dims ``feature``) equal to it there
    and exactly 0 where pruned, as :meth:`bayescheck.models.ARD.conditional_model` declares. The
    hyperparameters are not integrated over; the group's attributes say so.

    Returns
    -------
    variables, coords, attrs : dict
        As :mod:`bayescheck.inference.families.exact` expects.

    Raises
    ------
    BayescheckError
        When every weight was pruned (the conditional posterior is the point mass at 0, and
        the conditional declaration does not exist).
    """
    features = list(posterior_value(posterior, "w", "features"))
    relevant = list(posterior_value(posterior, "w", "cov_features"))
    if not relevant:
        raise BayescheckError("no exact posterior draws: every weight was pruned, so the "
                              "posterior of w given alpha and sigma2 is the point mass at 0")
    mean = np.asarray(posterior_value(posterior, "w", "mean"), dtype=float)
    cols = [features.index(f) for f in relevant]
    cov = np.asarray(posterior_value(posterior, "w", "cov"), dtype=float).reshape(
        len(cols), len(cols))
    root = np.linalg.cholesky(cov)
    w_rel = mean[cols] + rng.standard_normal((chains, draws, len(cols))) @ root.T
    w = np.zeros((chains, draws, len(features)))
    w[..., cols] = w_rel
    alpha = [np.inf if a is None else float(a) for a in posterior_value(posterior, "alpha",
                                                                        "value")]
    sigma2 = posterior_value(posterior, "sigma2")
    how = ("type-II maximum-likelihood estimates" if sigma2.get("estimated", True)
           else "values held fixed")
    attrs = {"conditional_on": f"alpha and sigma2 at their {how}, not integrated over: the "
                               f"exact posterior of w given them (alpha = inf: pruned, w = 0)",
             "alpha": np.asarray(alpha), "sigma2": float(sigma2["value"])}
    return ({"w_relevant": (("relevant",), w_rel), "w": (("feature",), w)},
            {"relevant": relevant, "feature": features}, attrs)


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("ard", model=ARD, fit=fit_ard, predict=predict_ard, exact_draws=exact_draws_ard),
)
