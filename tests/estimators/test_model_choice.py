"""Model choice from Python: ``GaussianMixture.bic / aic / score / score_samples`` against
scikit-learn's GaussianMixture set to the same parameters, and every ``log_evidence_`` against
a formula written here (scipy's multivariate Normal / t, gammaln) or a peer."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from scipy import stats  # noqa: E402
from scipy.linalg import solve_triangular  # noqa: E402
from scipy.special import gammaln  # noqa: E402
from sklearn import mixture  # noqa: E402
from sklearn.datasets import load_diabetes, load_iris, load_wine  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from bayescheck.estimators import (  # noqa: E402
    ARDRegression,
    BayesianLinearRegression,
    BayesianNetworkClassifier,
    CategoricalNaiveBayes,
    GaussianMixture,
    GaussianNaiveBayes,
    SemiNaiveBayesClassifier,
)


def _standardised(loader):
    return StandardScaler().fit_transform(loader(return_X_y=True)[0])


def _sklearn_at(est: GaussianMixture) -> mixture.GaussianMixture:
    """scikit-learn's mixture holding our fit's weights, means and covariances."""
    kind = est.covariance_type
    ref = mixture.GaussianMixture(n_components=est.n_components, covariance_type=kind)
    cov = est.covariances_
    if kind in ("full", "tied"):
        covs = cov if kind == "full" else cov[None]
        chol = [solve_triangular(np.linalg.cholesky(c), np.eye(len(c)), lower=True).T
                for c in covs]
        prec_chol = np.array(chol) if kind == "full" else chol[0]
    else:
        prec_chol = 1.0 / np.sqrt(cov)
    ref.weights_, ref.means_, ref.covariances_ = est.weights_, est.means_, cov
    ref.precisions_cholesky_ = prec_chol
    ref.n_features_in_ = est.n_features_in_
    return ref


@pytest.mark.parametrize(("loader", "kind", "K"), [
    (load_iris, "full", 3), (load_iris, "tied", 3), (load_iris, "diag", 3),
    (load_iris, "spherical", 3), (load_wine, "full", 2), (load_wine, "diag", 3)])
def test_bic_aic_score_are_sklearns_at_the_same_parameters(loader, kind, K):
    X = _standardised(loader)
    est = GaussianMixture(n_components=K, covariance_type=kind, n_init=2).fit(X)
    ref = _sklearn_at(est)
    np.testing.assert_allclose(est.score_samples(X), ref.score_samples(X), rtol=1e-12)
    assert est.score(X) == pytest.approx(ref.score(X), rel=1e-12)
    assert est.bic(X) == pytest.approx(ref.bic(X), rel=1e-12)
    assert est.aic(X) == pytest.approx(ref.aic(X), rel=1e-12)
    # the parameter count written out: bic - aic = p (log n - 2)
    D = X.shape[1]
    p = K * D + {"full": K * D * (D + 1) // 2, "tied": D * (D + 1) // 2, "diag": K * D,
                 "spherical": K}[kind] + K - 1
    assert est.bic(X) - est.aic(X) == pytest.approx(p * (np.log(len(X)) - 2), rel=1e-12)
    # other means are another mixture: the comparison can fail
    ref.means_ = est.means_ + 1e-3
    assert ref.bic(X) != pytest.approx(est.bic(X), rel=1e-9)


def test_score_samples_is_the_mixture_density_written_with_scipy():
    X = _standardised(load_wine)[:, :5]
    est = GaussianMixture(n_components=2, n_init=2).fit(X)
    dens = sum(w * stats.multivariate_normal(m, c).pdf(X)
               for w, m, c in zip(est.weights_, est.means_, est.covariances_, strict=True))
    np.testing.assert_allclose(est.score_samples(X), np.log(dens), rtol=1e-10)


def test_bic_counts_no_weights_when_equal_and_no_covariances_when_known():
    X = _standardised(load_iris)
    n, D = X.shape
    eq = GaussianMixture(n_components=3, covariance_type="diag", equal_weights=True,
                         n_init=2).fit(X)
    assert eq.bic(X) == pytest.approx(-2 * eq.score(X) * n + (3 * D + 3 * D) * np.log(n),
                                      rel=1e-12)
    known = GaussianMixture(n_components=3, known_sd=0.7, n_init=2).fit(X)
    assert known.aic(X) == pytest.approx(-2 * known.score(X) * n + 2 * (3 * D + 2), rel=1e-12)


def test_bic_chooses_two_components_on_standardised_iris():
    X = _standardised(load_iris)
    ours = [GaussianMixture(n_components=k, covariance_type="full", n_init=3).fit(X).bic(X)
            for k in (1, 2, 3, 4)]
    assert int(np.argmin(ours)) + 1 == 2  # iris standardised: 2 components by BIC


# ---- log evidence --------------------------------------------------------------------------


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def test_regression_log_evidence_is_the_marginal_normal_and_t():
    X, y = _diabetes()
    Xd = np.column_stack([np.ones(len(X)), X])
    known = BayesianLinearRegression(noise_sd=0.8, prior_precision=2.0).fit(X, y)
    cov = 0.8 ** 2 * np.eye(len(y)) + Xd @ Xd.T / 2.0
    want = stats.multivariate_normal(np.zeros(len(y)), cov).logpdf(y)
    assert known.log_evidence_ == pytest.approx(want, rel=1e-10)
    a0, b0 = 3.0, 2.0
    unknown = BayesianLinearRegression(noise="unknown", noise_shape=a0, noise_scale=b0,
                                       prior_precision=2.0).fit(X, y)
    shape = b0 / a0 * (np.eye(len(y)) + Xd @ Xd.T / 2.0)
    want = stats.multivariate_t(np.zeros(len(y)), shape, df=2 * a0).logpdf(y)
    assert unknown.log_evidence_ == pytest.approx(want, rel=1e-10)
    # streamed: the same evidence; another prior: another number (the check can fail)
    streamed = BayesianLinearRegression(noise="unknown", noise_shape=a0, noise_scale=b0,
                                        prior_precision=2.0)
    for idx in np.array_split(np.arange(len(y)), 7):
        streamed.partial_fit(X[idx], y[idx])
    assert streamed.log_evidence_ == pytest.approx(unknown.log_evidence_, rel=1e-10)
    other = BayesianLinearRegression(noise="unknown", noise_shape=a0, noise_scale=b0,
                                     prior_precision=0.5).fit(X, y)
    assert other.log_evidence_ != pytest.approx(want, rel=1e-6)
    assert BayesianLinearRegression(prior_precision=0.0).fit(X, y).log_evidence_ is None


def test_ard_log_evidence_is_the_marginal_normal_at_its_estimate():
    X, y = _diabetes()
    est = ARDRegression().fit(X, y)
    Xd = np.column_stack([np.ones(len(X)), X])
    alpha = np.concatenate([[est.result_.alpha[0]], est.lambda_])
    keep = np.isfinite(alpha)
    cov = np.eye(len(y)) / est.alpha_ + (Xd[:, keep] / alpha[keep]) @ Xd[:, keep].T
    want = stats.multivariate_normal(np.zeros(len(y)), cov).logpdf(y)
    assert est.log_evidence_ == pytest.approx(want, rel=1e-9)
    assert not keep.all()  # some weights were pruned: the kept set matters
    cov_all = np.eye(len(y)) / est.alpha_ + (Xd[:, keep] / (alpha[keep] / 4)) @ Xd[:, keep].T
    assert est.log_evidence_ != pytest.approx(
        stats.multivariate_normal(np.zeros(len(y)), cov_all).logpdf(y), rel=1e-6)


def _dirichlet_multinomial(counts, a):
    counts = np.asarray(counts, float)
    return (gammaln(a * len(counts)) - gammaln(a * len(counts) + counts.sum())
            + np.sum(gammaln(a + counts) - gammaln(a)))


def _tennis():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    frame = pd.read_csv(root / "examples" / "semi_naive_bayes" / "play_tennis.csv")
    features = ["outlook", "temperature", "humidity", "wind"]
    return frame[features], frame["play_tennis"].to_numpy(), features


def test_naive_bayes_log_evidence_is_the_dirichlet_multinomials_and_the_naive_network():
    X, y, features = _tennis()
    a = 0.7
    est = CategoricalNaiveBayes(concentration=a).fit(X, y)
    classes = np.unique(y)
    want = _dirichlet_multinomial([np.sum(y == c) for c in classes], a)
    for f in features:
        levels = np.unique(X[f])
        for c in classes:
            want += _dirichlet_multinomial([np.sum((y == c) & (X[f] == v)) for v in levels], a)
    assert est.log_evidence_ == pytest.approx(want, rel=1e-12)
    net = BayesianNetworkClassifier(concentration=a).fit(X, y)  # naive structure: the same
    assert net.log_evidence_ == pytest.approx(want, rel=1e-12)
    assert CategoricalNaiveBayes(concentration=1.0).fit(X, y).log_evidence_ != \
        pytest.approx(want, rel=1e-6)
    assert CategoricalNaiveBayes(class_prior="frequency").fit(X, y).log_evidence_ is None


def test_gaussian_naive_bayes_log_evidence_is_the_marginal_t_per_class_and_feature():
    X, y = load_iris(return_X_y=True)
    mu0, kappa0, a0, b0 = 1.0, 0.5, 2.0, 1.5
    est = GaussianNaiveBayes(mu0=mu0, kappa0=kappa0, a0=a0, b0=b0).fit(X, y)
    want = _dirichlet_multinomial(np.bincount(y), 1.0)
    for c in range(3):
        rows = X[y == c]
        n = len(rows)
        shape = b0 / a0 * (np.eye(n) + np.ones((n, n)) / kappa0)
        for j in range(X.shape[1]):
            want += stats.multivariate_t(np.full(n, mu0), shape, df=2 * a0).logpdf(rows[:, j])
    assert est.log_evidence_ == pytest.approx(want, rel=1e-10)
    assert GaussianNaiveBayes(gaussian="ml").fit(X, y).log_evidence_ is None


@pytest.mark.parametrize("kind", ["tan", "spode"])
def test_semi_naive_log_evidence_is_its_networks(kind):
    X, y, features = _tennis()
    est = SemiNaiveBayesClassifier(kind=kind, super_parent="outlook" if kind == "spode"
                                   else None, concentration=0.5).fit(X, y)
    edges = [("play", f) for f in features] + [(p, f) for f, p in est.parents_.items() if p]
    net = BayesianNetworkClassifier(edges=edges, target="play", concentration=0.5).fit(X, y)
    assert est.log_evidence_ == pytest.approx(net.log_evidence_, rel=1e-12)
    naive = BayesianNetworkClassifier(target="play", concentration=0.5).fit(X, y)
    assert est.log_evidence_ != pytest.approx(naive.log_evidence_, rel=1e-6)
    assert SemiNaiveBayesClassifier(kind="aode").fit(X, y).log_evidence_ is None


def test_network_log_evidence_is_pgmpys_k2_score():
    pytest.importorskip("pgmpy")
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.structure_score import K2

    X, y, features = _tennis()
    edges = [("play", f) for f in features] + [("outlook", "humidity"), ("wind", "temperature")]
    est = BayesianNetworkClassifier(edges=edges, target="play").fit(X, y)
    data = X.assign(play=y).astype(str)
    model = DiscreteBayesianNetwork(edges)
    assert est.log_evidence_ == pytest.approx(K2(data).score(model), rel=1e-12)
    fewer = DiscreteBayesianNetwork(edges[:-1])
    assert est.log_evidence_ != pytest.approx(K2(data).score(fewer), rel=1e-6)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")
def test_the_model_choice_examples_numbers_are_its_output(capsys):
    """examples/model_choice/README.md quotes the script's output: rerun, the same text."""
    import runpy
    from pathlib import Path

    pytest.importorskip("pgmpy")
    folder = Path(__file__).resolve().parents[2] / "examples" / "model_choice"
    runpy.run_path(str(folder / "compare_by_evidence.py"), run_name="__main__")
    printed = capsys.readouterr().out.strip()
    assert printed and printed in (folder / "README.md").read_text()
