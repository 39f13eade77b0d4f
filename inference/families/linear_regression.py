"""Connecting a :class:`models.LinearRegression` to the conjugate engines, over a stream."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from models.errors import NotIdentifiedError
from models.linear_regression import LinearRegression
from models.spec import Spec

from ..engines.errors import NotIdentified
from ..engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    regression_stats_joint,
)
from ..result import AnalyticFit, ExactMarginal
from ..streaming import CHECKPOINT_NAME, model_key, run_stream

__all__ = ["fit_linear_regression"]


def _interval_record(names, marginal) -> dict:
    """Posterior mean and 90 % central interval of every coefficient (one vectorised call)."""
    lo, hi = marginal.ppf(np.array([[0.05], [0.95]]))
    mean = marginal.mean()
    return {
        "mean": dict(zip(names, map(float, mean), strict=True)),
        "q05": dict(zip(names, map(float, lo), strict=True)),
        "q95": dict(zip(names, map(float, hi), strict=True)),
    }


def fit_linear_regression(spec: Spec, *, out: Path | None = None, resume: bool = False,
                          progress: bool = False) -> AnalyticFit:
    """Stream the data through the conjugate engine of a :class:`models.LinearRegression`."""
    model: LinearRegression = spec.model
    d = len(model.features)
    if model.known_noise:
        noise_var = model.noise_sd ** 2
        prior = (GaussianPosterior.flat(d, noise_var=noise_var) if model.flat else
                 GaussianPosterior.from_prior(model.prior_mean, model.prior_cov,
                                              noise_var=noise_var))
    else:
        kw = {"shape": model.noise_shape, "scale": model.noise_scale}
        prior = (NormalInverseGammaPosterior.flat(d, **kw) if model.flat else
                 NormalInverseGammaPosterior.from_prior(model.prior_mean, model.prior_cov,
                                                        **kw))

    def absorb(state, batch):
        joint = model.joint_design(batch)
        return state.update(regression_stats_joint(joint)), len(joint)

    def summarize(state):
        if not state.identified:
            return None
        return _interval_record(model.features, state.marginal())

    started = time.perf_counter()
    files = spec.data.files()
    stream = run_stream(spec.data, initial_state=prior, absorb=absorb, summarize=summarize,
                        checkpoint=None if out is None else Path(out) / CHECKPOINT_NAME,
                        resume=resume, model_key=model_key(spec),
                        total=len(files) or None, progress=progress)
    post = stream.state
    try:
        post.require_identified()
    except NotIdentified as exc:
        raise NotIdentifiedError(f"{spec.data.label}: {exc}") from None
    marginals = post.marginals()
    features = list(model.features)
    parameters = {"theta": {
        "features": features,
        "mean": post.mean.tolist(),
        "sd": post.sd.tolist(),
        "cov": post.cov.tolist(),
        "distribution": "normal" if model.known_noise else "student_t",
    }}
    oracles = [ExactMarginal(f"theta[{f}]", "theta", {"feature": f}, m)
               for f, m in zip(features, marginals, strict=True)]
    if model.known_noise:
        parameters["sigma2"] = {"value": model.noise_sd ** 2, "fixed": True}
    else:
        parameters["theta"]["df"] = post.df
        parameters["theta"]["scale"] = post.t_scale.tolist()
        noise = post.noise_marginal()
        parameters["sigma2"] = {"mean": float(noise.mean()), "sd": float(noise.std()),
                                "shape": post.shape, "scale": post.scale,
                                "distribution": "inverse_gamma"}
        oracles.append(ExactMarginal("sigma2", "sigma2", {}, noise))
    return AnalyticFit(
        model=model.name, parameters=parameters, marginals=oracles,
        log_evidence=post.log_evidence, n_rows=int(post.n),
        batches=[{"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
                 for r in stream.records],
        trajectory=stream.trajectory, seconds=time.perf_counter() - started, state=post)
