"""Connecting a :class:`bayescheck.models.LinearRegression` to the conjugate engines."""

from __future__ import annotations

import operator
import time
from functools import partial
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.inference.engines.dist import Dist
from bayescheck.inference.engines.errors import NotIdentified
from bayescheck.inference.engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    RegressionStats,
    load_lapack,
    regression_stats_joint,
)
from bayescheck.inference.families.predictive import interval_columns, posterior_value
from bayescheck.inference.families.registry import Family
from bayescheck.inference.result import AnalyticFit, ExactMarginal, FitRecord, Posterior
from bayescheck.inference.scale.distributed import active, stream_or_reduce
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, model_key, run_stream
from bayescheck.models.design import feature_matrix
from bayescheck.models.errors import BayescheckError, NotIdentifiedError
from bayescheck.models.linear_regression import LinearRegression
from bayescheck.models.spec import Spec

__all__ = ["FAMILIES", "batch_statistic", "exact_draws_linear_regression", "fit_linear_regression",
           "new_rows", "posterior_parameters", "predict_linear_regression",
           "prior_posterior", "row_variances"]


def _interval_record(names, marginal) -> dict:
    """Posterior mean and 90 % central interval of every coefficient (one vectorised call)."""
    lo, hi = marginal.ppf(np.array([[0.05], [0.95]]))
    mean = marginal.mean()
    return {
        "mean": dict(zip(names, map(float, mean), strict=True)),
        "q05": dict(zip(names, map(float, lo), strict=True)),
        "q95": dict(zip(names, map(float, hi), strict=True)),
    }



def prior_posterior(model: LinearRegression):
    """The model's prior as an engine posterior of no data (the state a stream starts from)."""
    d = len(model.features)
    if model.known_noise:
        noise_var = model.noise_sd ** 2
        return (GaussianPosterior.flat(d, noise_var=noise_var) if model.flat else
                GaussianPosterior.from_prior(model.prior_mean, model.prior_cov,
                                             noise_var=noise_var))
    kw = {"shape": model.noise_shape, "scale": model.noise_scale}
    return (NormalInverseGammaPosterior.flat(d, **kw) if model.flat else
            NormalInverseGammaPosterior.from_prior(model.prior_mean, model.prior_cov, **kw))


def posterior_parameters(model: LinearRegression, post) -> dict:
    """``posterior.json``'s ``parameters`` of an identified engine posterior ``post``."""
    features = list(model.features)
    parameters = {"theta": {
        "features": features,
        "mean": post.mean.tolist(),
        "sd": post.sd.tolist(),
        "cov": post.cov.tolist(),
        "distribution": "normal" if model.known_noise else "student_t",
    }}
    if model.formula is not None:
        parameters["theta"]["formula"] = model.formula.to_json()
    if model.known_noise:
        parameters["sigma2"] = {"value": model.noise_sd ** 2, "fixed": True}
        return parameters
    parameters["theta"]["df"] = post.df
    parameters["theta"]["scale"] = post.t_scale.tolist()
    # P^-1 (theta | sigma2 ~ N(mean, sigma2 P^-1)): the predictive needs it, and cov
    # (b / (a - 1) P^-1) does not give it back when a <= 1.
    parameters["theta"]["scale_matrix"] = post.scale_matrix.tolist()
    noise = post.noise_marginal()
    parameters["sigma2"] = {"mean": float(noise.mean()), "sd": float(noise.std()),
                            "shape": post.shape, "scale": post.scale,
                            "distribution": "inverse_gamma"}
    return parameters


def fit_linear_regression(spec: Spec, *, out: Path | None = None, resume: bool = False,
                          progress: bool = False, declaration: bool = False) -> AnalyticFit:
    """Stream the data through the conjugate engine of a linear regression.

    ``declaration=True`` (``check``) also takes each batch's
    :meth:`~bayescheck.models.LinearRegression.declaration_root` on the same pass, from the same
    validated rows, and keeps them in ``AnalyticFit.declaration`` (``"rows"``,
    ``"batch_roots"`` in file order), so the PyMC declaration need not read the files again.
    Not on a cluster, nor after ``resume`` (the skipped batches have no root here): the
    declaration reads the files then.
    """
    model: LinearRegression = spec.model
    # In-process the stream builds the prior itself once its reading threads run (the
    # prior's scipy.linalg import, about 0.3 s of CPU, then overlaps the first batches);
    # the QR's LAPACK is loaded first, so the stream's BLAS thread limit covers it.
    prior = prior_posterior(model) if active() is not None else None
    load_lapack()
    roots: dict[str, np.ndarray] | None = {} if declaration and active() is None else None

    def statistic(batch):
        if roots is None:
            return batch_statistic(model, batch)
        joint = model.joint_design(batch)
        # Before the engine's QR, which overwrites the block.
        roots[batch.name] = model.declaration_root(joint)
        return regression_stats_joint(joint, overwrite=True)

    def summarize(state):
        if not state.identified:
            return None
        return _interval_record(model.features, state.marginal())

    started = time.perf_counter()
    files = spec.data.files()
    stream = stream_or_reduce(
        spec.data, initial_state=prior,
        statistic=statistic if roots is not None else partial(batch_statistic, model),
        apply=_apply, merge=operator.add, summarize=summarize, progress=progress,
        checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
        model_key=model_key(spec),
        stream=lambda absorb, statistic: run_stream(
            spec.data, initial_state=partial(prior_posterior, model), absorb=absorb,
            statistic=statistic, summarize=summarize,
            checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME, resume=resume,
            model_key=model_key(spec), total=len(files) or None, progress=progress))
    post = stream.state
    try:
        post.require_identified()
    except NotIdentified as exc:
        raise NotIdentifiedError(f"{spec.data.label}: {exc}") from None
    parameters = posterior_parameters(model, post)
    features = list(model.features)
    oracles = [ExactMarginal(f"theta[{f}]", "theta", {"feature": f}, m)
               for f, m in zip(features, post.marginals(), strict=True)]
    if not model.known_noise:
        oracles.append(ExactMarginal("sigma2", "sigma2", {}, post.noise_marginal()))
    gathered = {}
    if roots is not None and stream.records and all(r.name in roots for r in stream.records):
        gathered = {"rows": int(post.n), "batch_roots": [roots[r.name] for r in stream.records]}
    return AnalyticFit(
        Posterior(
            model=model.name,
            parameters=parameters,
            marginals=oracles,
            log_evidence=post.log_evidence,
            state=post,
        ),
        FitRecord(
            n_rows=int(post.n),
            batches=[
                {"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
                for r in stream.records
            ],
            trajectory=stream.trajectory,
            seconds=time.perf_counter() - started,
            declaration=gathered,
        ),
    )


def batch_statistic(model: LinearRegression, batch: Batch) -> RegressionStats:
    """The statistic of one batch: the R factor of its validated ``[X | y]``.

    Statistics of batches merge by ``+`` in any grouping (a tree reduction over partitions,
    on a Dask cluster, gives the stream's result to rounding), and a posterior absorbs one
    by ``update``.
    """
    return regression_stats_joint(model.joint_design(batch), overwrite=True)


def _apply(state, stats: RegressionStats):
    return state.update(stats)


def row_variances(X: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``x' M x`` for each row ``x`` of ``X`` (M symmetric), without forming ``X M X'``."""
    return np.einsum("ij,jk,ik->i", X, matrix, X)


def check_features(saved, model_features, where: str) -> None:
    """The saved fit's coefficient names must be the spec's (same columns, same order)."""
    if list(saved) != list(model_features):
        raise BayescheckError(f"{where}: the fit's features {list(saved)} are not the spec's "
                              f"{list(model_features)}; refit with this spec")


def new_rows(model, saved: dict, batch: Batch, where: str) -> np.ndarray:
    """New rows as the fit's design: the formula's encoding saved with the fit, or the columns.

    ``saved`` is the coefficients' entry of ``posterior.json`` (``theta`` or ``w``). With a
    formula the encoding (levels, transforms' state, columns) is the one saved, so a level
    the fit did not see is refused, naming the file, row and level.
    """
    if "formula" in saved:
        from bayescheck.models.formula import FormulaDesign

        design = FormulaDesign.from_json(saved["formula"])
        spec_formula = getattr(model.formula, "formula", None)
        if spec_formula != design.formula:
            raise BayescheckError(f"{where}: the fit's formula {design.formula!r} is not the "
                                  f"spec's {spec_formula!r}; refit with this spec")
        return design.matrix(batch)
    if model.formula is not None:
        raise BayescheckError(f"{where}: the fit has no formula, the spec has "
                              f"{model.formula.formula!r}; refit with this spec")
    return feature_matrix(batch, features=model.features, intercept=model.intercept)


def predict_linear_regression(spec: Spec, posterior: dict, batch: Batch, *, level: float = 0.9,
                              where: str = "posterior.json") -> dict[str, np.ndarray]:
    """Posterior predictive of the response at each new row.

    Normal ``N(x' m, sigma^2 + x' C x)`` with known noise; Student-t with ``2a`` degrees of
    freedom, location ``x' m`` and scale ``sqrt(b / a (1 + x' P^-1 x))`` under the
    Normal-Inverse-Gamma posterior. The intercept column is added as in the fit.

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
    model: LinearRegression = spec.model
    theta = posterior_value(posterior, "theta", where=where)
    if "formula" not in theta:
        check_features(posterior_value(posterior, "theta", "features", where=where),
                       model.features, where)
    X = new_rows(model, theta, batch, where)
    loc = X @ np.asarray(posterior_value(posterior, "theta", "mean", where=where), dtype=float)
    if model.known_noise:
        cov = np.asarray(posterior_value(posterior, "theta", "cov", where=where), dtype=float)
        noise = float(posterior_value(posterior, "sigma2", "value", where=where))
        dist = Dist("norm", loc, np.sqrt(noise + row_variances(X, cov)))
    else:
        shape = float(posterior_value(posterior, "sigma2", "shape", where=where))
        scale = float(posterior_value(posterior, "sigma2", "scale", where=where))
        if "scale_matrix" not in theta:
            posterior_value(posterior, "theta", "scale_matrix", where=where)
        v = np.asarray(theta["scale_matrix"], dtype=float)
        dist = Dist("t", 2.0 * shape, loc, np.sqrt(scale / shape * (1.0 + row_variances(X, v))))
    return interval_columns(dist, level)


def exact_draws_linear_regression(posterior: dict, *, draws: int, chains: int,
                                  rng: np.random.Generator) -> dict:
    """Independent draws of the declaration's ``theta`` (and ``sigma2``) from the exact posterior.

    Known noise: ``theta ~ N(m, C)``. Unknown noise: ``sigma2 ~ InvGamma(a, b)`` and
    ``theta | sigma2 ~ N(m, sigma2 P^-1)``, so the pairs are joint draws.

    Parameters
    ----------
    posterior : dict
        ``posterior.json`` of a linear regression fit.
    draws, chains : int
        Draws per chain and number of chains.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    variables : dict
        ``{"theta": (("feature",), array (chains, draws, d))}`` and, for unknown noise,
        ``{"sigma2": ((), array (chains, draws))}``.
    coords : dict
        ``{"feature": names}``.
    """
    mean = np.asarray(posterior_value(posterior, "theta", "mean"), dtype=float)
    coords = {"feature": list(posterior_value(posterior, "theta", "features"))}
    n, d = chains * draws, len(mean)
    z = rng.standard_normal((n, d))
    if posterior_value(posterior, "theta", "distribution") == "normal":
        chol = np.linalg.cholesky(np.asarray(posterior_value(posterior, "theta", "cov"), float))
        theta = mean + z @ chol.T
        return {"theta": (("feature",), theta.reshape(chains, draws, d))}, coords
    shape = float(posterior_value(posterior, "sigma2", "shape"))
    scale = float(posterior_value(posterior, "sigma2", "scale"))
    chol = np.linalg.cholesky(np.asarray(posterior_value(posterior, "theta", "scale_matrix"),
                                         float))
    sigma2 = scale / rng.gamma(shape, size=n)  # InvGamma(a, b) = b / Gamma(a, 1)
    theta = mean + np.sqrt(sigma2)[:, None] * (z @ chol.T)
    return {"theta": (("feature",), theta.reshape(chains, draws, d)),
            "sigma2": ((), sigma2.reshape(chains, draws))}, coords


#: What inference offers for the model(s) of this module (:mod:`.registry`).
FAMILIES = (
    Family("linear_regression", model=LinearRegression, fit=fit_linear_regression,
           predict=predict_linear_regression, exact_draws=exact_draws_linear_regression,
           on_cluster=True, gathers_declaration=True),
)
