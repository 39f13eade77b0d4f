"""Conjugate updates against conjugate-models (``pip install conjugate-models``).

Both sides start from the same raw data in memory: ours is ``bayescheck.fit`` of a model
object whose data is a pandas frame (validation, the posterior's summaries and quantiles,
the log evidence included); conjugate-models takes sufficient statistics, so its side is
numpy's sums over the same arrays plus its update. The posterior parameters must agree.

- Beta-Bernoulli: ``binomial_beta`` against ``BetaBernoulli``;
- Dirichlet-categorical: ``multinomial_dirichlet`` against ``DirichletCategorical``;
- Gaussian with unknown mean and variance: ``normal`` (Normal-Inverse-Gamma) against
  ``LinearRegression`` with only an intercept and unknown noise;
- linear regression with unknown noise: ``linear_regression`` (Normal-Inverse-Gamma; it
  inverts the precision explicitly) against ``LinearRegression``.
"""

from __future__ import annotations

import numpy as np
from harness import Context, Row, interleave, shape

PEER = "conjugate-models"


def _rel(a, b) -> float:
    a, b = np.atleast_1d(np.asarray(a, float)), np.atleast_1d(np.asarray(b, float))
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def _fit(model, frame):
    import bayescheck

    return bayescheck.fit(bayescheck.Spec(model=model,
                                          data=bayescheck.DataSource.from_frame(frame)))


def conjugate(ctx: Context) -> list[Row]:
    import pandas as pd
    from conjugate import distributions as cd
    from conjugate import models as cm

    import bayescheck

    n = ctx.size(1_000_000, 100_000)
    rng = np.random.default_rng(0)
    rows = []

    # Beta-Bernoulli
    flips = rng.random(n) < 0.3
    coin = pd.DataFrame({"heads": flips})
    model = bayescheck.BetaBernoulli(target="heads", a=2.0, b=3.0)
    _fit(model, coin.iloc[:10])  # warm: first-call imports
    timed = interleave({
        "ours": lambda: _fit(model, coin).parameters["p"],
        "peer": lambda: cm.binomial_beta(n=len(flips), x=int(np.count_nonzero(flips)),
                                         prior=cd.Beta(2.0, 3.0))}, ctx.repeat)
    ours, peer = timed["ours"][1], timed["peer"][1]
    diff = max(_rel(ours["a"], peer.alpha), _rel(ours["b"], peer.beta))
    rows.append(Row("Beta-Bernoulli update from raw 0/1 rows", shape(n), timed["ours"][0],
                    f"{PEER} binomial_beta (numpy count)", timed["peer"][0],
                    note=f"posterior (a, b) equal to {diff:.0e}"))

    # Dirichlet-categorical
    faces = rng.integers(6, size=n)
    die = pd.DataFrame({"face": faces})
    model = bayescheck.DirichletCategorical(target="face", concentration=1.0,
                                            categories=tuple(str(k) for k in range(6)))
    _fit(model, die.iloc[:10])
    timed = interleave({
        "ours": lambda: _fit(model, die).parameters["pi"],
        "peer": lambda: cm.multinomial_dirichlet(x=np.bincount(faces, minlength=6),
                                                 prior=cd.Dirichlet(np.ones(6)))}, ctx.repeat)
    diff = _rel(timed["ours"][1]["alpha"], timed["peer"][1].alpha)
    rows.append(Row("Dirichlet-categorical update from raw rows, 6 categories", shape(n),
                    timed["ours"][0], f"{PEER} multinomial_dirichlet (numpy bincount)",
                    timed["peer"][0], note=f"posterior alpha equal to {diff:.0e}"))

    # Gaussian, unknown mean and variance: NIG(mu0 0, nu 1/4, alpha 2, beta 1)
    x = rng.normal(3.0, 2.0, size=n)
    frame = pd.DataFrame({"y": x})
    model = bayescheck.LinearRegression(features=("intercept",), target="y",
                                        prior_mean=np.zeros(1), prior_cov=np.full((1, 1), 4.0),
                                        noise_sd=None, noise_shape=2.0, noise_scale=1.0,
                                        intercept=True)
    _fit(model, frame.iloc[:10])
    timed = interleave({
        "ours": lambda: _fit(model, frame).parameters,
        "peer": lambda: cm.normal(x_total=x.sum(), x2_total=np.dot(x, x), n=n,
                                  prior=cd.NormalInverseGamma(0.0, nu=0.25, alpha=2.0,
                                                              beta=1.0))}, ctx.repeat)
    ours, peer = timed["ours"][1], timed["peer"][1]
    diff = {"mean": _rel(ours["theta"]["mean"], peer.mu),
            "shape": _rel(ours["sigma2"]["shape"], peer.alpha),
            "scale": _rel(ours["sigma2"]["scale"], peer.beta)}
    rows.append(Row("Normal-Inverse-Gamma update of a Gaussian's mean and variance",
                    shape(n), timed["ours"][0], f"{PEER} normal (numpy sums)",
                    timed["peer"][0],
                    note="posterior " + ", ".join(f"{k} equal to {v:.0e}"
                                                  for k, v in diff.items())))

    # linear regression, unknown noise
    d = 10
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + rng.normal(size=n)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)]).assign(y=y)
    model = bayescheck.LinearRegression(features=tuple(f"x{j}" for j in range(d)), target="y",
                                        prior_mean=np.zeros(d), prior_cov=4.0 * np.eye(d),
                                        noise_sd=None, noise_shape=2.0, noise_scale=1.0)
    _fit(model, frame.iloc[:100])
    prior = cd.NormalInverseGamma(mu=np.zeros(d), delta_inverse=4.0 * np.eye(d), alpha=2.0,
                                  beta=1.0)
    timed = interleave({"ours": lambda: _fit(model, frame).parameters,
                        "peer": lambda: cm.linear_regression(X=X, y=y, prior=prior)},
                       ctx.repeat)
    ours, peer = timed["ours"][1], timed["peer"][1]
    diff = {"mean": _rel(ours["theta"]["mean"], peer.mu),
            "shape": _rel(ours["sigma2"]["shape"], peer.alpha),
            "scale": _rel(ours["sigma2"]["scale"], peer.beta)}
    rows.append(Row("Normal-Inverse-Gamma linear regression update", shape(n, d),
                    timed["ours"][0], f"{PEER} linear_regression", timed["peer"][0],
                    note="posterior " + ", ".join(f"{k} equal to {v:.0e}"
                                                  for k, v in diff.items())))
    return rows


BENCHMARKS = {"conjugate": conjugate}
