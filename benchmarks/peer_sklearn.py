"""bayescheck's scikit-learn estimators against scikit-learn's own, in one process.

- BayesianRidge against ``BayesianLinearRegression`` given BayesianRidge's noise and prior
  precisions (so both compute the same posterior; ours does not estimate them);
- ARDRegression and LassoCV against ``ARDRegression`` on a 1000 x 2000 sparse design with 30
  true non-zero weights (density 0.05, noise sd 0.05): time, support F1, noise sd;
- GaussianMixture against ``GaussianMixture``: EM from the same start, seconds per iteration;
- GaussianNB and CategoricalNB against ``GaussianNaiveBayes`` / ``CategoricalNaiveBayes``:
  rows per second of ``fit`` and ``predict_proba``.
"""

from __future__ import annotations

import warnings

import numpy as np
from harness import Context, Row, f1_score, interleave, shape


def regression(ctx: Context) -> list[Row]:
    from sklearn.linear_model import BayesianRidge

    from bayescheck.estimators import BayesianLinearRegression

    n, d = ctx.size(1_000_000, 100_000), 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    found = BayesianRidge(fit_intercept=False).fit(X, y)  # the hyperparameters ours is given
    ours = BayesianLinearRegression(noise_sd=float(found.alpha_) ** -0.5,
                                    prior_precision=float(found.lambda_), fit_intercept=False)
    timed = interleave({"peer": lambda: BayesianRidge(fit_intercept=False).fit(X, y),
                        "ours": lambda: ours.fit(X, y).coef_.copy(),
                        "xtx": lambda: X.T @ X}, ctx.repeat)
    coef = timed["peer"][1].coef_
    rel = float(np.max(np.abs(timed["ours"][1] - coef)) / np.max(np.abs(coef)))
    return [
        Row(
            "linear regression fit, in memory (ours given BayesianRidge's alpha_, lambda_)",
            shape(n, d),
            timed["ours"][0],
            "scikit-learn BayesianRidge",
            timed["peer"][0],
            note=f"coefficients equal to {rel:.0e} (relative); bare X'X "
            f"{timed['xtx'][0]:.3f} s, ours / X'X {timed['ours'][0] / timed['xtx'][0]:.2f}",
        )
    ]


def sparse_design(n: int, m: int, k: int, density: float, noise: float, seed: int = 0):
    """``y = X w + noise``: X = scipy.sparse.random(n, m, density), k weights ~ N(0, 1)."""
    import scipy.sparse as sp

    X = sp.random(n, m, density=density, random_state=seed, format="csc")
    rng = np.random.default_rng(seed)
    w = np.zeros(m)
    w[rng.choice(m, k, replace=False)] = rng.normal(size=k)
    return X.toarray(), X @ w + noise * rng.normal(size=n), w


def ard(ctx: Context) -> list[Row]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import ARDRegression, LassoCV

    from bayescheck.estimators import ARDRegression as OurARD

    n, m, k = ctx.size((1000, 2000, 30), (200, 400, 10))
    noise = 0.05
    X, y, w = sparse_design(n, m, k, density=0.05, noise=noise)
    repeat = ctx.repeat if ctx.quick else 1  # ARDRegression takes 15-180 s a fit here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        timed = interleave({"ours": lambda: OurARD(fit_intercept=False).fit(X, y),
                            "ard": lambda: ARDRegression(fit_intercept=False).fit(X, y),
                            "lasso": lambda: LassoCV(cv=5, fit_intercept=False,
                                                     random_state=0).fit(X, y)}, repeat)

    def support(est):
        return f1_score(np.abs(est.coef_) > 1e-3, w != 0), int(np.sum(np.abs(est.coef_) > 1e-3))

    ours = timed["ours"][1]
    f1_ours, kept_ours = support(ours)
    sd_ours = float(ours.alpha_) ** -0.5
    rows = []
    for key, name in (("ard", "scikit-learn ARDRegression"), ("lasso", "scikit-learn LassoCV")):
        est = timed[key][1]
        f1, kept = support(est)
        if key == "ard":
            sd = f"noise sd ours {sd_ours:.3f} / theirs {float(est.alpha_) ** -0.5:.3f}"
        else:
            sd = f"noise sd ours {sd_ours:.3f} / LassoCV none"
        rows.append(Row(f"ARD, sparse design (density 0.05, {k} true weights, noise sd {noise})",
                        shape(n, m), timed["ours"][0], name, timed[key][0],
                        note=f"support F1 ours {f1_ours:.2f} ({kept_ours} kept) / theirs "
                             f"{f1:.2f} ({kept} kept); {sd} (true {noise})"))
    return rows


def mixture_data(n: int, d: int, k: int, seed: int = 0) -> np.ndarray:
    """K overlapping Gaussian clusters with random full covariances."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 2.5, size=(k, d))
    factors = rng.normal(0.0, 0.6, size=(k, d, d)) + np.eye(d)
    labels = rng.choice(k, size=n, p=np.arange(1, k + 1) / np.arange(1, k + 1).sum())
    return centres[labels] + np.einsum("nij,nj->ni", factors[labels],
                                       rng.standard_normal((n, d)))


def nearest_centre_start(X: np.ndarray, k: int, seed: int = 1):
    """k-means++ centres, and the weights and precisions of the nearest-centre partition."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    centres = np.empty((k, d))
    centres[0] = X[rng.integers(n)]
    d2 = np.square(X - centres[0]).sum(axis=1)
    for j in range(1, k):
        cdf = np.cumsum(d2)
        centres[j] = X[min(int(np.searchsorted(cdf, rng.random() * cdf[-1])), n - 1)]
        np.minimum(d2, np.square(X - centres[j]).sum(axis=1), out=d2)
    labels = np.argmin(np.stack([np.square(X - c).sum(axis=1) for c in centres]), axis=0)
    weights = np.bincount(labels, minlength=k) / n
    covs = np.stack([np.cov(X[labels == j], rowvar=False, bias=True) for j in range(k)])
    from scipy.linalg import cholesky, solve_triangular

    # scikit-learn takes precisions: L^-T L^-1 from the Cholesky factor L of each covariance
    roots = [solve_triangular(cholesky(c + 1e-6 * np.eye(d), lower=True), np.eye(d), lower=True)
             for c in covs]
    return weights, centres, np.stack([r.T @ r for r in roots])


def mixture(ctx: Context) -> list[Row]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    from bayescheck.estimators import GaussianMixture as OurMixture

    n, d, k = ctx.size(1_000_000, 100_000), 5, 3
    iterations = ctx.size(20, 10)
    X = mixture_data(n, d, k)
    weights, means, precisions = nearest_centre_start(X, k)
    ours = OurMixture(n_components=k, covariance_type="full", means_init=means, n_init=1,
                      max_iter=iterations, tol=0.0)
    peer = GaussianMixture(n_components=k, covariance_type="full", max_iter=iterations, tol=0.0,
                           init_params="random_from_data", weights_init=weights,
                           means_init=means, precisions_init=precisions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        timed = interleave({"ours": lambda: ours.fit(X), "peer": lambda: peer.fit(X)},
                           ctx.repeat)
    ours_it, peer_it = ours.n_iter_, peer.n_iter_
    ll_ours, ll_peer = ours.log_likelihood_ / n, float(peer.score(X))
    return [Row(f"Gaussian mixture EM, K={k} full, per iteration (fit / iterations)",
                shape(n, d), timed["ours"][0] / ours_it, "scikit-learn GaussianMixture",
                timed["peer"][0] / peer_it,
                note=f"{ours_it} / {peer_it} iterations from the same centres; log-likelihood "
                     f"per row ours {ll_ours:.6f} / theirs {ll_peer:.6f}")]


def naive_bayes(ctx: Context) -> list[Row]:
    from sklearn.naive_bayes import CategoricalNB, GaussianNB

    from bayescheck.estimators import CategoricalNaiveBayes, GaussianNaiveBayes

    n, d, classes = ctx.size(1_000_000, 100_000), 10, 3
    rng = np.random.default_rng(0)
    y = rng.integers(classes, size=n)
    X = rng.normal(size=(n, d)) + y[:, None] * rng.normal(size=d)
    codes = np.minimum(rng.poisson(1.0 + y[:, None] * rng.random(d), size=(n, d)), 4)
    cases = (
        ("Gaussian", X, GaussianNaiveBayes(gaussian="ml", class_prior="frequency"),
         GaussianNB(var_smoothing=0.0), "scikit-learn GaussianNB(var_smoothing=0)"),
        ("categorical", codes, CategoricalNaiveBayes(concentration=1.0, class_prior="frequency"),
         CategoricalNB(alpha=1.0), "scikit-learn CategoricalNB(alpha=1)"),
    )
    rows = []
    for kind, data, ours, peer, peer_name in cases:
        fit = interleave({"ours": lambda o=ours, x=data: o.fit(x, y),
                          "peer": lambda p=peer, x=data: p.fit(x, y)}, ctx.repeat)
        proba = interleave({"ours": lambda o=ours, x=data: o.predict_proba(x),
                            "peer": lambda p=peer, x=data: p.predict_proba(x)}, ctx.repeat)
        diff = float(np.max(np.abs(proba["ours"][1] - proba["peer"][1])))
        settings = ("maximum-likelihood means and variances" if kind == "Gaussian"
                    else "Laplace-smoothed categories")
        rows.append(Row(f"{kind} naive Bayes fit ({settings}), rows/s", shape(n, d),
                        n / fit["ours"][0], peer_name, n / fit["peer"][0], unit="rows/s"))
        rows.append(Row(f"{kind} naive Bayes predict_proba, rows/s", shape(n, d),
                        n / proba["ours"][0], peer_name, n / proba["peer"][0], unit="rows/s",
                        note=f"probabilities equal to {diff:.0e}"))
    return rows


BENCHMARKS = {"sklearn-regression": regression, "sklearn-ard": ard,
              "sklearn-mixture": mixture, "sklearn-naive-bayes": naive_bayes}
