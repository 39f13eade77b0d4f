"""Connecting :class:`bayescheck.models.GaussianMixture` to its EM engine.

This module also holds the mixture-specific part of its cross-check.

The fit reads every row, runs :func:`bayescheck.inference.engines.mixture_em.fit_em` (maximum
likelihood,
or MAP-EM when the spec gives priors) and names the components the way the PyMC declaration
does: sorted by mean in one dimension (the declaration orders the means), aligned to the
deterministic k-means centres of the data (:func:`bayescheck.inference.engines.mixture_em.kmeans`)
in several (the declaration relabels its draws against the EM means so aligned). The same
clustering starts the declaration's sampler: it is handed over as
``AnalyticFit.declaration["clustering"]``, since models do not import engines. The point
estimates compared with the posterior are the coordinates in which MAP-EM is the mode:
``weights``, ``means``, ``covariances`` (full / tied; lower triangle) or ``variances``
(diag / spherical).

:func:`posterior_checks` adds to the generic point-estimate comparison
(:func:`bayescheck.inference.checking.compare.compare_estimates`: the estimate inside the
posterior's central interval) what this family claims besides:

* closeness to the posterior mode: ``|estimate - mode| / sd <= max_mode_sd`` for each
  parameter, with the mode of each marginal estimated from the draws by a kernel density
  (:func:`marginal_mode`); the joint mode that EM finds and the marginal modes differ by
  O(1/sqrt(n)) posterior sds, well inside the threshold;
* the E-step responsibilities at the estimate against the posterior mean of the assignment
  probabilities, computed per draw from the sampled parameters (on at most ``max_rows`` rows
  and ``max_draws`` draws): every ``|gamma_ik - E[gamma_ik]|`` within
  ``max(resp_atol, max_mode_sd * sd(gamma_ik))``.

Before these, the chains are grouped by the mode they sit in
(:func:`bayescheck.inference.checking.modes.chain_modes`:
per-chain means of every compared parameter, in within-chain sds). When they separate cleanly
into several modes, the estimate is judged against the chains of the mode it claims (the
nearest), sampler health included, and the other modes are reported as information, with the
log posterior density of their draws against the EM mode's (:func:`chain_log_densities`, the
engine's :func:`~bayescheck.inference.engines.mixture_em.log_posterior`: the objective EM maximised,
so a draw above the EM objective proves EM's mode is not the highest).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.numbers import MAX_MAGNITUDE, numeric_columns
from bayescheck.inference.checking.modes import (
    ChainModes,
    SlowParameter,
    chain_modes,
    slow_parameters,
)
from bayescheck.inference.engines.mixture_em import (
    NEAR_SINGULAR_RATIO,
    MixturePrior,
    fit_em,
    kmeans,
    log_posterior,
    match_components,
    mixture_rows,
    near_singular_components,
)
from bayescheck.inference.engines.mixture_em import responsibilities as em_responsibilities
from bayescheck.inference.families.predictive import posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, FitRecord, PointEstimate, Posterior
from bayescheck.inference.scale.distributed import ClusterRows, active
from bayescheck.inference.scale.em_checkpoint import EMJournal
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, model_key
from bayescheck.models.errors import BayescheckError, DataError
from bayescheck.models.gaussian_mixture import GaussianMixture
from bayescheck.models.spec import Spec

__all__ = ["FAMILIES", "chain_log_densities", "estimate", "fit_gaussian_mixture", "marginal_mode",
           "posterior_checks", "predict_gaussian_mixture"]


def _order(means: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The EM components in the order the declaration names them.

    Sorted by mean in one dimension; in several, matched to the k-means ``centres``.
    """
    if means.shape[1] == 1:
        return np.argsort(means[:, 0], kind="stable")
    return match_components(means, centres)


def _reordered(result, order):
    return result._replace(weights=result.weights[order], means=result.means[order],
                           covariances=result.covariances[order])



def estimate(model: GaussianMixture, rows, journal=None):
    """EM (ML or MAP) on the rows, components named as the declaration names them.

    Parameters
    ----------
    model : GaussianMixture
    rows : numpy.ndarray or inference.engines.mixture_em.Rows
        The data matrix, or rows held elsewhere (a Dask cluster's partitions).
    journal : inference.em_checkpoint.EMJournal, optional
        Checkpoints EM's progress (and resumes it), as ``fit_em``'s ``journal``.

    Returns
    -------
    result : inference.engines.mixture_em.EMResult
        Components sorted by mean in one dimension, aligned to the k-means centres in several.
    clustering : tuple or None
        The deterministic k-means ``(centres, labels)`` of an in-memory matrix (None for
        rows held elsewhere, whose centres come from the same k-means over the partitions).

    Raises
    ------
    ValueError
        From the engine, when EM cannot fit the rows.
    """
    prior = MixturePrior(**model.em_prior()) if model.is_map else None
    result = fit_em(rows, n_components=model.n_components, covariance=model.covariance,
                    max_iter=model.max_iter, tol=model.tol, n_init=model.n_init,
                    seed=model.seed, init_means=model.init_means, known_sd=model.known_sd,
                    equal_weights=model.equal_weights, prior=prior, journal=journal)
    if isinstance(rows, np.ndarray):
        clustering = kmeans(rows, model.n_components)
        centres = clustering[0]
    else:
        clustering, centres = None, rows.kmeans(model.n_components)
    return _reordered(result, _order(result.means, centres)), clustering


def fit_gaussian_mixture(spec: Spec, *, out: Path | None = None, resume: bool = False,
                         progress: bool = False) -> AnalyticFit:
    """Fit a :class:`bayescheck.models.GaussianMixture` by EM.

    ``posterior.json`` holds ``weights``, ``means``, ``sds`` and ``covariances`` (or
    ``variances``) at the estimate, and under ``"fit"``: ``log_likelihood`` (the total over
    the data at the estimate), ``objective`` (log-likelihood plus log prior for MAP),
    ``n_iter``, ``converged``, ``restart_log_likelihoods`` (each start's final
    log-likelihood), the objective per iteration of the best start, the responsibilities
    of the first rows and ``near_singular_components``
    (:func:`~bayescheck.inference.engines.mixture_em.near_singular_components`: components
    whose variance in some direction is below a thousandth of the whole mixture's there).
    """
    model: GaussianMixture = spec.model
    started = time.perf_counter()
    if active() is None:
        X = rows = model.data_matrix(spec.data)
    else:  # the rows stay on the workers; one map-reduce per EM iteration
        X, rows = None, ClusterRows(spec.data, model.batch_matrix)
        model.check_rows(rows.n, rows.ptp(), rows.head(1)[0], where=spec.data.label)
    # On a cluster, EM's progress is checkpointed (and resumed): rows are read again there
    # only by a resume, where in-process they are in this process's memory.
    journal = None
    if X is None and out is not None:
        journal = EMJournal(Path(out) / CHECKPOINT_NAME, model_key(spec), rows.records,
                            resume=resume)
    try:
        result, clustering = estimate(model, rows, journal)
    except ValueError as exc:  # the spec and data were validated; what is left is the data's
        raise DataError(f"EM cannot fit these data: {exc}", path=spec.data.label) from None
    finally:
        if journal is not None:
            journal.flush()
    K = result.means.shape[0]
    comps = [str(k) for k in range(K)]
    features = list(model.features)
    kind = "MAP" if model.is_map else "ML"
    parameters = {
        "weights": {"estimate": result.weights.tolist(), "components": comps,
                    "fixed": model.equal_weights, "kind": kind},
        "means": {"estimate": result.means.tolist(), "components": comps,
                  "features": features, "kind": kind},
        "sds": {"estimate": result.sds.tolist(), "components": comps, "features": features,
                "fixed": model.known_sd is not None},
    }
    if model.cov_var == "variances":
        var = np.diagonal(result.covariances, axis1=1, axis2=2)
        parameters["variances"] = {"estimate": (var if model.covariance == "diag"
                                                else var[:, 0]).tolist(), "kind": kind}
    if model.known_sd is None:
        parameters["covariances"] = {"estimate": result.covariances.tolist(),
                                     "covariance": model.covariance, "kind": kind}
    gamma = em_responsibilities(rows.head(20) if X is None else X[:20], result)
    info = {
        "estimate": kind,
        "log_likelihood": result.log_likelihood,
        "objective": result.objective,
        "n_iter": result.n_iter,
        "converged": result.converged,
        "restart_log_likelihoods": result.restart_log_likelihoods.tolist(),
        "restart_objectives": result.restart_objectives.tolist(),
        "best_restart": result.best_restart,
        "history": result.history.tolist(),
        "reg_covar": result.reg_covar,
        "messages": list(result.messages),
        "near_singular_components": []
        if model.known_sd is not None
        else near_singular_components(
            result.weights, result.means, result.covariances, rows.n if X is None else X.shape[0]
        ),
        "near_singular_ratio": NEAR_SINGULAR_RATIO,
        "responsibilities_first_rows": gamma[:20].tolist(),
    }
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=[],
            estimates=_estimates(model, result),
            state=result,
        ),
        FitRecord(
            n_rows=int(rows.n if X is None else X.shape[0]),
            seconds=time.perf_counter() - started,
            info=info,
            data_matrix=X,
            declaration={"clustering": clustering},
            posterior_checks=posterior_checks,
        ),
    )


def _estimates(model: GaussianMixture, result) -> list[PointEstimate]:
    K, D = result.means.shape
    feats = list(model.features)
    out = []
    if not model.equal_weights:
        out += [PointEstimate(f"weights[{k}]", "weights", {"component": str(k)},
                              float(result.weights[k])) for k in range(K)]
    out += [PointEstimate(f"means[{k}, {f}]", "means", {"component": str(k), "feature": f},
                          float(result.means[k, j]))
            for k in range(K) for j, f in enumerate(feats)]
    if model.cov_var == "covariances":
        cov = result.covariances
        out += [PointEstimate(f"covariances[{k}, {feats[i]}, {feats[j]}]", "covariances",
                              {"component": str(k), "feature": feats[i], "feature_": feats[j]},
                              float(cov[k, i, j]))
                for k in range(K if model.covariance == "full" else 1)
                for i in range(D) for j in range(i + 1)]
    elif model.cov_var == "variances":
        var = np.diagonal(result.covariances, axis1=1, axis2=2)
        if model.covariance == "diag":
            out += [PointEstimate(f"variances[{k}, {f}]", "variances",
                                  {"component": str(k), "feature": f}, float(var[k, j]))
                    for k in range(K) for j, f in enumerate(feats)]
        else:
            out += [PointEstimate(f"variances[{k}]", "variances", {"component": str(k)},
                                  float(var[k, 0])) for k in range(K)]
    return out


# --------------------------------------------------------------------------------------------
# Mixture-specific checks on the draws
# --------------------------------------------------------------------------------------------


def marginal_mode(x: np.ndarray, grid_size: int = 512) -> float:
    """The mode of a marginal posterior from its draws.

    It is the maximum of a Gaussian kernel density estimate (Scott's bandwidth) on a grid
    between the 0.5 % and 99.5 % quantiles. A mode is hard to estimate where the density is
    flat: at 4000 draws of a normal posterior its error is a few tenths of a posterior sd,
    which the threshold of the check allows.
    """
    from scipy.stats import gaussian_kde

    x = np.asarray(x, dtype=np.float64).ravel()
    if x.size < 2 or np.ptp(x) == 0:
        return float(np.mean(x))
    lo, hi = np.quantile(x, [0.005, 0.995])
    grid = np.linspace(lo, hi, grid_size)
    return float(grid[int(np.argmax(gaussian_kde(x)(grid)))])


def _stack(posterior, var: str) -> np.ndarray:
    da = posterior[var]
    other = [d for d in da.dims if d not in ("chain", "draw")]
    return np.asarray(da.transpose("chain", "draw", *other).values, dtype=np.float64)


def _draw_responsibilities(X, weights, means, covs) -> np.ndarray:
    """gamma (S, n, K) from S draws of weights (S, K), means (S, K, D), covs (S, K, D, D)."""
    L = np.linalg.cholesky(covs)  # (S, K, D, D)
    diff = X[None, None, :, :] - means[:, :, None, :]  # (S, K, n, D)
    z = np.linalg.solve(L, np.swapaxes(diff, -1, -2))  # (S, K, D, n): triangular systems
    quad = np.sum(z ** 2, axis=2)  # (S, K, n)
    half_logdet = np.sum(np.log(np.diagonal(L, axis1=2, axis2=3)), axis=2)  # (S, K)
    logp = (np.log(weights)[:, :, None] - half_logdet[:, :, None] - 0.5 * quad)
    logp -= logp.max(axis=1, keepdims=True)
    p = np.exp(logp)
    p /= p.sum(axis=1, keepdims=True)
    return np.swapaxes(p, 1, 2)  # (S, n, K)


def posterior_checks(fit: AnalyticFit, comparison, idata, spec: Spec, *,
                     max_mode_sd: float = 2.0, resp_atol: float = 0.05, max_rows: int = 500,
                     max_draws: int = 1000):
    """Add the mixture's own criteria to a point-estimate comparison.

    Parameters
    ----------
    fit : AnalyticFit
        From :func:`fit_gaussian_mixture` (its ``state`` is the aligned EM result).
    comparison : inference.compare.EstimateComparison
        From :func:`bayescheck.inference.checking.compare.compare_estimates` on
        ``fit.posterior.estimates`` and every chain.
    idata : xarray.DataTree
        The draws of the declared model (already relabelled by the declaration).
    spec : models.Spec
        The spec (its data are read again for the responsibilities).
    max_mode_sd : float
        Largest accepted distance of an estimate from the marginal posterior mode, in
        posterior sds; also the number of sds a responsibility may differ from its posterior
        mean.
    resp_atol : float
        Responsibilities closer than this to their posterior mean always agree (posterior sds
        near 0 where the assignment is certain).
    max_rows, max_draws : int
        Rows (evenly spaced) and draws (thinned) used for the responsibilities.

    Returns
    -------
    inference.compare.EstimateComparison
        ``comparison`` itself, or, when the chains separate cleanly into several modes, a new
        comparison on the chains of the mode the estimate claims (with that comparison's
        level and thresholds). Each row gets ``sampled["mode"]`` and
        ``sampled["mode_distance_sd"]``; one more row, ``responsibilities``, is added; the
        verdict is recomputed; ``modes`` holds :func:`modes_summary`.
    """
    from bayescheck.inference.checking.compare import (
        EstimateCheck,
        compare_estimates,
        draws_from_idata,
    )

    X = spec.model.data_matrix(spec.data)
    draws = draws_from_idata(idata, fit.posterior.estimates)
    modes = chain_modes(draws, {e.name: e.value for e in fit.posterior.estimates})
    keep = modes.judged_chains
    if modes.split:
        stats_group = idata.sample_stats.ds if "sample_stats" in idata.children else {}

        def stat(name):
            if name not in stats_group:
                return None
            return np.asarray(stats_group[name].transpose("chain", "draw").values)[keep]

        comparison = compare_estimates(
            fit.posterior.estimates, {k: v[keep] for k, v in draws.items()},
            diverging=stat("diverging"), energy=stat("energy"),
            thresholds=comparison.thresholds, level=comparison.level,
            support_level=comparison.support_level)
    posterior = idata.posterior.ds.isel(chain=keep)
    by_name = {e.name: e for e in fit.posterior.estimates}
    for row in comparison.parameters:
        e = by_name.get(row.name)
        if e is None:
            continue
        da = posterior[e.var].sel(e.coords) if e.coords else posterior[e.var]
        x = np.asarray(da.values, dtype=np.float64).ravel()
        mode = marginal_mode(x)
        sd = row.sampled["sd"]
        dist = (row.estimate - mode) / sd if sd > 0 else math.nan
        row.sampled["mode"] = mode
        row.sampled["mode_distance_sd"] = dist
        if not abs(dist) <= max_mode_sd and row.verdict != "inconclusive":
            row.reasons.append(f"estimate {row.estimate:.4g} is {dist:+.2f} posterior sds from "
                               f"the posterior mode {mode:.4g} (at most {max_mode_sd:g})")
            row.verdict = "fail"

    # responsibilities: E-step at the estimate against the posterior mean, per draw
    result = fit.posterior.state
    K, D = result.means.shape
    rows = np.unique(np.linspace(0, X.shape[0] - 1, min(max_rows, X.shape[0])).astype(int))
    Xs = X[rows]
    means = _stack(posterior, "means").reshape(-1, K, D)
    S = means.shape[0]
    keep = np.unique(np.linspace(0, S - 1, min(max_draws, S)).astype(int))
    means = means[keep]
    weights = (_stack(posterior, "weights").reshape(-1, K)[keep] if "weights" in posterior
               else np.full((keep.size, K), 1.0 / K))
    covs = _draw_covariances(posterior, fit, keep, K, D)
    gamma_draws = _draw_responsibilities(Xs, weights, means, covs)
    gamma_mean = gamma_draws.mean(axis=0)
    gamma_sd = gamma_draws.std(axis=0, ddof=1)
    gamma_em = em_responsibilities(Xs, result)
    diff = gamma_em - gamma_mean
    allowed = np.maximum(resp_atol, max_mode_sd * gamma_sd)
    worst = np.unravel_index(int(np.argmax(np.abs(diff) / allowed)), diff.shape)
    i, k = int(worst[0]), int(worst[1])
    ok = bool(np.all(np.abs(diff) <= allowed))
    check = EstimateCheck(
        name="responsibilities", estimate=float(gamma_em[i, k]), nonzero=None,
        sampled={"mean": float(gamma_mean[i, k]), "sd": float(gamma_sd[i, k]),
                 "lower": math.nan, "upper": math.nan, "support_lower": math.nan,
                 "support_upper": math.nan, "max_abs_difference": float(np.max(np.abs(diff))),
                 "rows_compared": int(rows.size), "draws_used": int(keep.size),
                 "worst_row": int(rows[i]) + 1, "worst_component": k},
        distance_sd=float(diff[i, k] / gamma_sd[i, k]) if gamma_sd[i, k] > 0 else math.nan,
        inside=ok, zero_excluded=False, r_hat=math.nan, ess_bulk=math.nan, ess_tail=math.nan)
    comparison.add_check(check, None if ok else (
        f"E-step responsibility of row {rows[i] + 1}, component {k}: {gamma_em[i, k]:.4f} "
        f"vs posterior mean {gamma_mean[i, k]:.4f} (sd {gamma_sd[i, k]:.3g}); "
        f"allowed {allowed[i, k]:.3g}"))
    r_hat = {r.name: r.r_hat for r in comparison.parameters if r.name in draws}
    slow = slow_parameters(draws, r_hat, chains=modes.judged_chains)
    comparison.modes = modes_summary(modes, fit, idata, spec, X, slow=slow,
                                     diagnostics=comparison.diagnostics)
    return comparison


def _chain_parameters(posterior, fit, chain: int, n_draws: int):
    """One chain's parameters at ``n_draws`` evenly spaced draws.

    Weights (S, K), means (S, K, D) and covariances (S, K, D, D).
    """
    one = posterior.isel(chain=[chain])
    K, D = fit.posterior.state.means.shape
    S = one.sizes["draw"]
    keep = np.unique(np.linspace(0, S - 1, min(n_draws, S)).astype(int))
    means = _stack(one, "means").reshape(-1, K, D)[keep]
    weights = (_stack(one, "weights").reshape(-1, K)[keep] if "weights" in one
               else np.full((keep.size, K), 1.0 / K))
    return weights, means, _draw_covariances(one, fit, keep, K, D)


def chain_log_densities(fit: AnalyticFit, idata, spec: Spec, X: np.ndarray | None = None,
                        n_draws: int | None = None) -> np.ndarray:
    """Log posterior density of evenly spaced draws of each chain, minus the EM mode's.

    The density is what EM maximised (:func:`bayescheck.inference.engines.mixture_em.log_posterior`:
    log-likelihood plus log prior in the coordinates of the estimate), so 0 is the EM
    estimate's value and a draw above 0 is a point of higher density than the EM mode.

    Parameters
    ----------
    fit : AnalyticFit
    idata : xarray.DataTree
    spec : models.Spec
    X : numpy.ndarray, optional
        The data (read from ``spec`` when omitted).
    n_draws : int, optional
        Draws per chain; default between 5 and 100, fewer for large data (about 2e6 row x
        component x feature terms per chain).

    Returns
    -------
    numpy.ndarray
        ``(chain, n_draws)``.
    """
    model = spec.model
    X = model.data_matrix(spec.data) if X is None else X
    K, D = fit.posterior.state.means.shape
    if n_draws is None:
        n_draws = int(np.clip(2e6 / (X.shape[0] * K * D), 5, 100))
    prior = MixturePrior(**model.em_prior()) if model.is_map else None
    posterior = idata.posterior.ds
    out = []
    for c in range(posterior.sizes["chain"]):
        w, mu, cov = _chain_parameters(posterior, fit, c, n_draws)
        out.append([log_posterior(X, w[s], mu[s], cov[s], covariance=model.covariance,
                                  prior=prior, known_sd=model.known_sd,
                                  equal_weights=model.equal_weights)
                    for s in range(w.shape[0])])
    return np.asarray(out, dtype=np.float64) - float(fit.posterior.state.objective)


def modes_summary(modes: ChainModes, fit: AnalyticFit, idata, spec: Spec,
                  X: np.ndarray | None = None, *, slow: list[SlowParameter] = (),
                  diagnostics=None) -> dict:
    """Which chains hold which mode, their log densities against the EM mode, in words.

    With ``slow`` (:func:`bayescheck.inference.checking.modes.slow_parameters` on the judged chains)
    and the judged chains' ``diagnostics``, the words also say which parameters mix too
    slowly, how the chains move through them, and what the user can change.

    Returns
    -------
    dict
        ``split``, ``clean``, ``same_sd``, ``apart_sd``, ``judged_chains``,
        ``em_log_density`` (the EM objective), ``groups`` (per mode: ``chains``, ``claimed``,
        ``estimate_distance_sd``, ``worst_parameter``, ``weights`` (posterior means),
        ``log_density_median`` and ``log_density_max`` of its draws minus the EM mode's,
        ``above_em``), ``chains`` (per chain: ``group`` and the same two log densities),
        ``slow`` (per slowly mixing parameter: ``name``, ``r_hat``, ``component``, ``low``,
        ``high``, ``bimodal``, ``share_high`` and ``crossings`` per chain, ``far_chain``,
        ``far_distance_sd``, ``suggested_draws``) and ``message``, the sentences the report
        shows.
    """
    logd = chain_log_densities(fit, idata, spec, X)
    posterior = idata.posterior.ds
    groups = []
    for i, g in enumerate(modes.groups):
        w = (np.asarray(posterior["weights"].isel(chain=g).mean(("chain", "draw")).values)
             .tolist() if "weights" in posterior else None)
        ld = logd[g].ravel()
        groups.append({"chains": list(g), "claimed": i == modes.claimed,
                       "estimate_distance_sd": modes.estimate_distance_sd[i],
                       "worst_parameter": modes.worst_parameter[i], "weights": w,
                       "log_density_median": float(np.median(ld)),
                       "log_density_max": float(np.max(ld)),
                       "above_em": bool(np.max(ld) > 0)})
    chains = [{"chain": c, "group": next(i for i, g in enumerate(modes.groups) if c in g),
               "log_density_median": float(np.median(logd[c])),
               "log_density_max": float(np.max(logd[c]))} for c in range(logd.shape[0])]
    component = {e.name: e.coords.get("component") for e in fit.posterior.estimates}
    slow_rows = [{"name": p.name, "r_hat": p.r_hat, "component": component.get(p.name),
                  "chains": p.chains, "low": p.low, "high": p.high, "bimodal": p.bimodal,
                  "share_high": p.share_high, "crossings": p.crossings,
                  "far_chain": p.far_chain, "far_distance_sd": p.far_distance_sd,
                  "draws": p.draws, "suggested_draws": p.suggested_draws} for p in slow]
    message = _modes_message(modes, groups, healthy=diagnostics is None or diagnostics.healthy)
    claimed = groups[modes.claimed]
    if claimed["above_em"]:
        model = spec.model
        message.append(
            f"Draws of the chains around the estimate reach a log posterior density "
            f"{claimed['log_density_max']:+.1f} above EM's: EM stopped at a lower mode than "
            f"one these chains visit (the best of {model.n_init} start(s); final objectives "
            f"{', '.join(f'{v:.1f}' for v in fit.posterior.state.restart_objectives)}). "
            "More starts "
            f"([fit] n_init) may find the higher one; until then the estimate is judged "
            f"against a posterior that also holds a better mode."
        )
    if diagnostics is not None and not diagnostics.healthy:
        message += _remedies(slow_rows, diagnostics, spec, fit)
    return {
        "split": modes.split,
        "clean": modes.clean,
        "same_sd": modes.same_sd,
        "apart_sd": modes.apart_sd,
        "judged_chains": modes.judged_chains,
        "em_log_density": float(fit.posterior.state.objective),
        "draws_per_chain": logd.shape[1],
        "groups": groups,
        "chains": chains,
        "slow": slow_rows,
        "message": message,
    }


def _chain_list(chains) -> str:
    chains = list(chains)
    word = "chain" if len(chains) == 1 else "chains"
    return f"{word} " + ", ".join(str(c) for c in chains)


def _percent(v: float) -> str:
    return f"{100 * v:.0f} %"


def _remedies(slow: list[dict], diagnostics, spec: Spec, fit: AnalyticFit) -> list[str]:
    """What mixes too slowly for a verdict, how the chains move, and what the user can change."""
    out = []
    for p in slow:
        total = sum(p["crossings"])
        per_chain = ", ".join(f"chain {c}: {_percent(h)} of its draws near {p['high']:.4g}, "
                              f"{m} move(s)" for c, h, m in
                              zip(p["chains"], p["share_high"], p["crossings"], strict=True))
        how = (f"has two states, about {p['low']:.4g} and {p['high']:.4g}, with few draws "
               f"between them" if p["bimodal"] else
               f"drifts slowly between about {p['low']:.4g} and {p['high']:.4g}")
        out.append(f"{p['name']} (r_hat {p['r_hat']:.3f}) {how}: the chains moved from one to "
                   f"the other {total} time(s) in {p['draws']} draws each ({per_chain}); "
                   f"chain {p['far_chain']} is furthest from the others "
                   f"({p['far_distance_sd']:.1f} within-chain sds).")
    if slow:
        worst = max(slow, key=lambda p: p["suggested_draws"])
        comps = sorted({p["component"] for p in slow if p["component"] is not None}, key=str)
        K = spec.model.n_components
        fewer = (f"fewer components (n_components = {K - 1}; the slow parameters are "
                 f"those of component(s) {', '.join(comps)})" if K > 1 else "")
        prior = ("a stronger prior (a larger kappa, or iw_dof / ig_shape, which makes one "
                 "state clearly more probable than the other)")
        out.append(
            f"NUTS moves between these states too rarely for r_hat and the ESS to "
            f"settle, so the estimate is neither confirmed nor refuted. What can change it: more "
            f"draws (--draws {worst['suggested_draws']}, about 10 moves per chain at "
            f"the rate seen, for {worst['name']}), " + prior + (f", or {fewer}." if fewer else ".")
        )
    if diagnostics.divergences:
        out.append(f"{diagnostics.divergences} divergent transition(s): a longer tuning "
                   f"(--tune, twice the current) or a stronger covariance prior "
                   f"(iw_dof / ig_shape) usually removes them.")
    if not slow and not diagnostics.divergences:
        out.append("No parameter mixes slowly (every r_hat within its limit): the sampler's "
                   "health fails on the ESS or the energy (listed with the diagnostics); "
                   "more draws (--draws) usually settle them.")
    return out


def _modes_message(modes: ChainModes, groups: list[dict], *, healthy: bool = True
                   ) -> list[str]:
    def weights(g):
        return ("" if g["weights"] is None else
                "weights " + " / ".join(f"{v:.2f}" for v in g["weights"]) + "; ")

    claimed = groups[modes.claimed]
    out = []
    if len(groups) == 1 and healthy:
        out.append(f"All {len(claimed['chains'])} chains sit in one mode, the one the EM "
                   f"estimate claims (every chain's means within {modes.same_sd:g} posterior "
                   f"sds of another's), and mix well; the estimate is judged on every chain.")
    elif len(groups) == 1:
        out.append(f"No chain sits apart in a mode of its own (every chain's means within "
                   f"{modes.same_sd:g} posterior sds of another's), but the chains do not mix "
                   f"well enough for a verdict; the estimate is judged on every chain.")
    elif modes.split:
        out.append(f"The chains sit in {len(groups)} separate modes (chains of different "
                   f"modes more than {modes.apart_sd:g} posterior sds apart in some "
                   f"parameter). {_chain_list(claimed['chains']).capitalize()} hold the mode "
                   f"the EM estimate claims ({weights(claimed)}the estimate at most "
                   f"{claimed['estimate_distance_sd']:.2f} of its posterior sds from its "
                   f"draws' means) and judge it, sampler health included; the other "
                   f"mode(s) are information, not part of the verdict.")
        for g in groups[1:]:
            out.append(f"{_chain_list(g['chains']).capitalize()}: another mode "
                       f"({weights(g)}the estimate {g['estimate_distance_sd']:.1f} of its "
                       f"posterior sds away, in {g['worst_parameter']}).")
    else:
        out.append(f"The chains do not separate cleanly into modes: they form {len(groups)} "
                   f"groups, but some chains of different groups are within "
                   f"{modes.apart_sd:g} posterior sds (a chain moving between modes); every "
                   f"chain judges the estimate, so r_hat sees the disagreement.")
    for g in groups:
        where = "EM's own mode" if g is claimed else "that mode"
        out.append(f"Log posterior density of the draws of {_chain_list(g['chains'])} ({where}) "
                   f"relative to the EM estimate's: median {g['log_density_median']:+.1f}, "
                   f"highest {g['log_density_max']:+.1f}"
                   + (" — above the EM mode, so EM's estimate is not the highest mode of "
                      "this posterior." if g["above_em"] and g is not claimed else "."))
    return out


def _draw_covariances(posterior, fit, keep, K, D) -> np.ndarray:
    model_kind = fit.posterior.state.covariance
    n = keep.size
    if model_kind == "known":
        return np.broadcast_to(fit.posterior.state.covariances[0], (n, K, D, D)).copy()
    if "covariances" in posterior:
        return _stack(posterior, "covariances").reshape(-1, K, D, D)[keep]
    var = _stack(posterior, "variances")
    var = var.reshape(var.shape[0] * var.shape[1], *var.shape[2:])[keep]
    if var.ndim == 2:  # spherical: (S, K)
        var = np.repeat(var[:, :, None], D, axis=2)
    return var[..., None] * np.eye(D)


def predict_gaussian_mixture(spec: Spec, posterior: dict, batch: Batch, *, level: float = 0.9,
                             where: str = "posterior.json") -> dict[str, np.ndarray]:
    """Responsibilities, most probable component and log density of each new row.

    Evaluated at the fit's estimate (ML or MAP) of weights, means and covariances (the
    ``sds`` squared on the diagonal when the sd is known).

    Parameters
    ----------
    spec : models.Spec
        The spec the fit came from.
    posterior : dict
        ``posterior.json`` of ``bayescheck fit``.
    batch : models.Batch
        The new rows.
    level : float
        Unused (the mixture's predictions have no interval).
    where : str
        Where ``posterior`` was read from, for error messages.

    Returns
    -------
    dict of str to numpy.ndarray
        ``p_<component>`` per component, ``component`` and ``log_density`` per row.
    """
    if batch is None:
        raise BayescheckError(f"predict for {spec.model.name!r} needs --data NEW")
    model: GaussianMixture = spec.model
    features = list(posterior_value(posterior, "means", "features", where=where))
    if features != list(model.features):
        raise BayescheckError(f"{where}: the fit's features {features} are not the spec's "
                              f"{list(model.features)}; refit with this spec")
    comps = list(posterior_value(posterior, "weights", "components", where=where))
    weights = np.asarray(posterior_value(posterior, "weights", "estimate", where=where), float)
    means = np.asarray(posterior_value(posterior, "means", "estimate", where=where), float)
    if "covariances" in posterior.get("parameters", {}):
        covs = np.asarray(posterior_value(posterior, "covariances", "estimate", where=where),
                          float)
    else:
        sds = np.asarray(posterior_value(posterior, "sds", "estimate", where=where), float)
        covs = np.einsum("kd,de->kde", sds ** 2, np.eye(sds.shape[1]))
    X = numeric_columns(batch, features, max_magnitude=MAX_MAGNITUDE)  # the fit's limit
    if len(X) == 0:
        raise DataError("no rows to predict", path=batch.name)
    resp, log_density = mixture_rows(X, weights, means, covs)
    out = {f"p_{c}": resp[:, k] for k, c in enumerate(comps)}
    out["component"] = np.asarray(comps, dtype=object)[np.argmax(resp, axis=1)]
    out["log_density"] = log_density
    return out


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("gaussian_mixture", model=GaussianMixture, fit=fit_gaussian_mixture,
           predict=predict_gaussian_mixture, on_cluster=True),
)
