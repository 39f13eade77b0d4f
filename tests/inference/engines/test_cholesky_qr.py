"""A tall batch's root by preconditioned Cholesky QR (``inference.engines.cholesky_qr``).

The root must be the Householder root to rounding on well-conditioned data, keep the NIST
StRD digits of ``numpy.linalg.lstsq``, and a batch that the Gram matrix would cost digits
(a poor preconditioner) must be factored by Householder QR instead: the negative tests show
that without the guard the same batch loses them.
"""

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from inference.engines import cholesky_qr as cq
from inference.engines import linear_gaussian as lg
from inference.engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    RegressionStats,
    regression_stats,
    regression_stats_joint,
)

sys.path.insert(0, str(Path(__file__).parent))
from test_nist_strd import DATASETS, lre, lstsq  # noqa: E402

pytestmark = pytest.mark.skipif(cq._blas() is None,
                                reason="not a scipy wheel with its own OpenBLAS")


@pytest.fixture(autouse=True)
def one_blas_thread():
    """As in a big stream (and OpenBLAS threads only spin on a shared 2-core machine)."""
    from threadpoolctl import threadpool_limits

    lg.load_lapack()  # loaded first, so that the limit covers it
    with threadpool_limits(1, user_api="blas"):
        yield


@pytest.fixture
def gram_calls(monkeypatch):
    """The condition estimates of every :func:`cq.gram_root` call (None: Cholesky failed)."""
    calls = []
    original = cq.gram_root

    def spy(Z, P):
        done = original(Z, P)
        calls.append(None if done is None else done[1])
        return done

    monkeypatch.setattr(cq, "gram_root", spy)
    return calls


def householder_stats(Z) -> RegressionStats:
    return RegressionStats(len(Z), lg.triangular_root(Z))


def column_errors(a, b) -> np.ndarray:
    """Each column's norm of a - b over its norm in b (roots differ in entries near 0)."""
    return np.linalg.norm(a - b, axis=0) / np.linalg.norm(b, axis=0)


def tall_design(m=10_000, d=50, seed=0, offset=1e3):
    """Gaussian features beside an intercept, one of them offset (``offset`` + noise), and y.

    With the offset the design is mildly ill-conditioned (the intercept and that feature
    nearly collinear): Householder statistics of different batchings then differ by about
    5e-11 in the intercept's mean. Without it (``offset=0``) the data are well conditioned.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    X[:, 0] = 1.0
    X[:, 1] = offset + X[:, 1]
    y = X @ rng.normal(size=d) + rng.normal(size=m)
    return np.asfortranarray(np.column_stack([X, y]))


def test_root_equals_householder_to_1e12(gram_calls):
    Z = tall_design()
    root = cq.batch_root(Z)
    assert len(gram_calls) == 1 and gram_calls[0] <= cq.MAX_COND  # the Gram way was taken
    reference = lg.triangular_root(Z)
    assert np.all(np.diag(root) >= 0)
    assert np.allclose(np.tril(root, -1), 0.0, atol=0.0)
    assert column_errors(root, reference).max() < 1e-12
    assert not np.array_equal(root, reference)  # another computation, not a copy of it


def test_a_stream_of_tall_batches_equals_householder_tsqr_to_1e12(gram_calls):
    """Batches cut at random (tall ones by the Gram way, short ones by Householder) give
    the posterior of Householder statistics and of the whole block to 1e-12 relative."""
    Z = tall_design(m=30_000, d=20, seed=1, offset=0.0)
    d = Z.shape[1] - 1
    rng = np.random.default_rng(2)
    cuts = sorted(rng.choice(np.arange(1, len(Z)), size=6, replace=False))
    pieces = [Z[lo:hi] for lo, hi in itertools.pairwise([0, *cuts, len(Z)])]
    priors = [GaussianPosterior.from_prior(np.zeros(d), 10.0 * np.eye(d), noise_var=1.0),
              NormalInverseGammaPosterior.from_prior(np.zeros(d), 10.0 * np.eye(d),
                                                     shape=2.0, scale=1.0)]
    for prior in priors:
        ours, theirs = prior, prior
        for piece in pieces:
            ours = ours.update(regression_stats_joint(piece))
            theirs = theirs.update(householder_stats(piece))
        whole = prior.update(householder_stats(Z))
        for other in (theirs, whole):
            np.testing.assert_allclose(ours.mean, other.mean, rtol=1e-12)
            np.testing.assert_allclose(ours.sd, other.sd, rtol=1e-12)
            # The covariance as a matrix (its off-diagonal entries near 0 carry absolute
            # errors of eps times the diagonal, as between any two batchings).
            assert np.linalg.norm(ours.cov - other.cov) < 1e-12 * np.linalg.norm(other.cov)
            assert ours.log_evidence == pytest.approx(other.log_evidence, rel=1e-12)
        # Householder statistics cut differently differ from the whole block as much.
        assert np.linalg.norm(theirs.cov - whole.cov) < 1e-12 * np.linalg.norm(whole.cov)
    assert gram_calls and all(c is not None and c <= cq.MAX_COND for c in gram_calls)


def test_the_1e12_check_can_fail():
    """Negative control: one row left out of one tall batch is seen at that tolerance."""
    Z = tall_design(m=10_000, d=20, seed=1, offset=0.0)
    d = Z.shape[1] - 1
    prior = GaussianPosterior.from_prior(np.zeros(d), 10.0 * np.eye(d), noise_var=1.0)
    whole = prior.update(householder_stats(Z))
    short = prior.update(regression_stats_joint(np.delete(Z, 5000, axis=0)))
    assert not np.allclose(short.mean, whole.mean, rtol=1e-12, atol=0)


@pytest.mark.parametrize("copies", [100, 200])
def test_tall_longley_by_the_gram_way_keeps_the_digits(copies, gram_calls):
    """Longley repeated (the same least-squares problem, certified values hold): the batch
    is factored the Gram way and keeps lstsq's digits (cond(Z) about 5e9)."""
    X, y, certified = DATASETS["Longley"]()
    X, y = np.tile(X, (copies, 1)), np.tile(y, copies)
    d = X.shape[1]
    post = GaussianPosterior.flat(d, noise_var=1.0).update(regression_stats(X, y))
    assert len(gram_calls) == 1 and gram_calls[0] <= cq.MAX_COND
    assert lre(post.mean, certified) >= lre(lstsq(X, y), certified) - 1.0


@pytest.mark.parametrize("sample", [32, 64])
def test_longley_with_a_small_sample_keeps_the_digits(sample, gram_calls):
    """A preconditioner from 4-8 rows per column still leaves cond(Y) small on Longley."""
    X, y, certified = DATASETS["Longley"]()
    X, y = np.tile(X, (50, 1)), np.tile(y, 50)
    root = cq.batch_root(np.column_stack([X, y]), sample=sample)
    assert len(gram_calls) == 1 and gram_calls[0] <= cq.MAX_COND
    mean = GaussianPosterior.flat(X.shape[1], noise_var=1.0).update(
        RegressionStats(len(y), root)).mean
    assert lre(mean, certified) >= lre(lstsq(X, y), certified) - 1.0


def test_wampler_has_no_preconditioner_and_goes_householder(gram_calls):
    """Wampler's y is exactly a polynomial in x (residual 0): [X y] is singular, so the
    sample's R has a zero pivot and the batch is factored by Householder QR, bit for bit."""
    X, y, _ = DATASETS["Wampler1"]()
    Z = np.column_stack([np.tile(X, (100, 1)), np.tile(y, 100)])
    assert np.array_equal(cq.batch_root(Z), lg.triangular_root(Z))
    assert gram_calls == []


def sorted_quartic(m=10_000, seed=1):
    """A quartic in t sorted on [0, 1] (intercept, t .. t^4) and y: cond(Z) about 1e5."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 1.0, m))
    X = np.column_stack([t ** k for k in range(5)])
    y = X @ np.array([1.0, -2.0, 3.0, -1.0, 0.5]) + 1e-3 * rng.normal(size=m)
    return X, y


def relative_error(mean, reference) -> float:
    return float(np.max(np.abs(mean - reference) / np.abs(reference)))


def flat_mean(root) -> np.ndarray:
    d = root.shape[0] - 1
    return GaussianPosterior.flat(d, noise_var=1.0).update(RegressionStats(0, root)).mean


def test_stratified_sample_preconditions_sorted_rows(gram_calls):
    """The sample spans the sorted rows: Y is nearly orthogonal, the Gram way is taken and
    the least-squares solution is lstsq's to Householder's accuracy."""
    X, y = sorted_quartic()
    reference = lstsq(X, y)
    house = relative_error(flat_mean(lg.triangular_root(np.column_stack([X, y]))), reference)
    ours = relative_error(flat_mean(cq.batch_root(np.column_stack([X, y]))), reference)
    assert gram_calls and gram_calls[0] < 2.0
    assert house < 1e-13 and ours < 10 * max(house, 1e-15)


def test_a_poor_preconditioner_is_refused_and_would_lose_digits(monkeypatch, gram_calls):
    """Negative test. Take the first rows as the sample (what a naive preconditioner does):
    on sorted rows they span t in [0, 0.05] only, cond(Y) is about 1e5 and the Gram matrix
    loses about 4 digits, which the unguarded path shows; the guard sends the batch to
    Householder QR, bit for bit."""
    X, y = sorted_quartic()
    Z = np.column_stack([X, y])
    reference = lstsq(X, y)
    house_root = lg.triangular_root(Z)
    house = relative_error(flat_mean(house_root), reference)
    monkeypatch.setattr(cq, "sample_index", lambda m, k: np.arange(k))
    unguarded = cq.batch_root(Z, max_cond=np.inf)
    assert gram_calls[-1] > 1e3 * cq.MAX_COND
    assert relative_error(flat_mean(unguarded), reference) > 1e3 * max(house, 1e-15)
    guarded = cq.batch_root(Z)
    assert np.array_equal(guarded, house_root)


def test_the_first_rows_of_polynomial_data_fail_the_cholesky(monkeypatch, gram_calls):
    """With fewer sample rows the Gram matrix is not even numerically positive definite:
    ``gram_root`` says so (None) and the batch is factored by Householder QR."""
    X, y = sorted_quartic()
    Z = np.column_stack([X, y])
    monkeypatch.setattr(cq, "sample_index", lambda m, k: np.arange(k))
    assert np.array_equal(cq.batch_root(Z, sample=40), lg.triangular_root(Z))
    assert gram_calls == [None]


def test_short_batches_go_householder(gram_calls):
    Z = tall_design(m=4 * cq.sample_rows(51) - 1, d=50)
    assert np.array_equal(cq.batch_root(Z), lg.triangular_root(Z))
    assert gram_calls == []


def test_sample_index_is_stratified_and_fixed():
    idx = cq.sample_index(10_000, 510)
    assert len(idx) == 510 and np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] < 10_000
    edges = np.arange(511) * 10_000 // 510
    assert np.all((idx >= edges[:-1]) & (idx < edges[1:]))  # one row in each stratum
    assert np.array_equal(idx, cq.sample_index(10_000, 510))
    # Not in step with a period: rows repeating every 16 are all sampled.
    assert len(set(cq.sample_index(3200, 256) % 16)) == 16


def test_the_input_is_not_modified_unless_allowed():
    Z = tall_design(m=5000, d=10)
    before = Z.copy()
    cq.batch_root(Z)
    assert np.array_equal(Z, before)


def test_real_data_fair_affairs_goes_the_gram_way_to_householder_s_result(gram_calls):
    """statsmodels' bundled Fair (1978) affairs data: 6,366 rows, an intercept and 8
    unscaled features (cond(Z) about 350). The batch goes the Gram way (cond(Y) about 1.2)
    and its least-squares solution is Householder's to 1e-12, lstsq's to 1e-13."""
    fair = pytest.importorskip("statsmodels.datasets.fair")
    frame = fair.load_pandas().data
    X = np.column_stack([np.ones(len(frame)), frame.drop(columns="affairs").to_numpy(float)])
    y = frame["affairs"].to_numpy(float)
    Z = np.column_stack([X, y])
    ours, house = flat_mean(cq.batch_root(Z)), flat_mean(lg.triangular_root(Z))
    assert len(gram_calls) == 1 and gram_calls[0] < 2.0
    np.testing.assert_allclose(ours, house, rtol=1e-12)
    np.testing.assert_allclose(ours, lstsq(X, y), rtol=1e-13)


def test_the_batch_root_does_not_import_scipy():
    """Like the Householder QR, the Gram way runs before anything imports scipy.linalg (a
    stream spends that import beside its first batches); checked in a fresh interpreter."""
    import subprocess

    code = ("import sys, numpy as np\n"
            "from inference.engines import cholesky_qr as cq\n"
            "Z = np.asfortranarray(np.random.default_rng(0).normal(size=(5000, 9)))\n"
            "r = cq.batch_root(Z)\n"
            "assert np.allclose(r.T @ r, Z.T @ Z)\n"
            "print(sorted(m for m in sys.modules if m.startswith('scipy.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[3])
    assert "scipy.linalg" not in done.stdout, done.stdout


def test_a_heavy_tailed_batch_is_refused(gram_calls):
    """Cauchy features: a sample of 510 rows does not represent the batch's largest values,
    cond(Y) is in the hundreds and the batch is factored by Householder QR, bit for bit
    (the Gram work was spent for nothing: such batches cost about 1.8x Householder's)."""
    Z = np.asfortranarray(np.random.default_rng(3).standard_cauchy(size=(10_000, 51)))
    assert np.array_equal(cq.batch_root(Z), lg.triangular_root(Z))
    assert len(gram_calls) == 1 and gram_calls[0] > cq.MAX_COND
