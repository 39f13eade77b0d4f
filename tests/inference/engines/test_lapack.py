"""The ctypes LAPACK/BLAS calls give scipy.linalg's numbers to the last bit.

``inference.engines.lapack`` calls the routines of scipy's own OpenBLAS with the arguments
scipy 1.18 passes, so that the ARD fit needs no scipy import; every function is compared
with its scipy counterpart bit for bit, on the shapes and memory orders the SBL engine uses.
Our calls run OpenBLAS on one thread (threaded, some routines round differently), so scipy's
run on one BLAS thread too: threadpoolctl limits the library both share (one shared object,
loaded once).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.engines import lapack
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.linalg.blas import dger
from scipy.linalg.lapack import dpotri
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
SIZES = [1, 2, 3, 7, 20, 64, 150]


def _spd(n: int, rng, order="C") -> np.ndarray:
    x = rng.normal(size=(2 * n + 1, n))
    a = x.T @ x + np.diag(rng.gamma(1.0, size=n))
    return np.asarray(a, order=order)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)


def test_the_library_is_found_so_the_comparisons_test_the_ctypes_calls():
    assert lapack.available()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_cholesky_equals_scipys(n, order):
    a = _spd(n, np.random.default_rng(n), order)
    _same(lapack.cholesky_lower(a), cholesky(a, lower=True, check_finite=False))


def test_factoring_the_other_triangle_would_differ_and_the_test_sees_it():
    """dpotrf 'L' on a Fortran copy (the textbook call) does not give scipy's last bits."""
    import ctypes

    a = _spd(64, np.random.default_rng(3))
    want = cholesky(a, lower=True, check_finite=False)
    f = np.array(a, order="F", copy=True)
    info = ctypes.c_int(0)
    lapack._routines()["dpotrf"](ctypes.c_char_p(b"L"), ctypes.byref(ctypes.c_int(64)),
                                 f.ctypes.data_as(ctypes.c_void_p),
                                 ctypes.byref(ctypes.c_int(64)), ctypes.byref(info),
                                 ctypes.c_size_t(1))
    other = np.tril(f)
    assert info.value == 0 and not np.array_equal(other, want)
    np.testing.assert_allclose(other, want, rtol=1e-12, atol=1e-12)


def test_not_positive_definite_raises_as_scipy():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="2-th leading minor"):
        lapack.cholesky_lower(a)
    with pytest.raises(np.linalg.LinAlgError):
        cholesky(a, lower=True, check_finite=False)


@pytest.mark.parametrize("n", SIZES)
def test_triangular_and_cholesky_solves_equal_scipys(n):
    rng = np.random.default_rng(100 + n)
    factor = cholesky(_spd(n, rng), lower=True, check_finite=False)
    right_sides = [np.eye(n), rng.normal(size=n), rng.normal(size=(3 * n, n)).T,
                   rng.normal(size=(n, 4)), np.asfortranarray(rng.normal(size=(n, 2)))]
    for b in right_sides:
        _same(lapack.solve_lower(factor, b),
              solve_triangular(factor, b, lower=True, check_finite=False))
        _same(lapack.cho_solve_lower(factor, b), cho_solve((factor, True), b,
                                                           check_finite=False))
        assert lapack.solve_lower(factor, b).flags.f_contiguous
    assert np.array_equal(b, right_sides[-1])  # the right-hand side is not overwritten


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("layout", ["C", "F", "C slice", "F slice"])
def test_triangular_solves_of_every_layout_equal_scipys(n, layout):
    """Upper and lower, with and without transposition, as the regression's R is handed in
    (a C-strided slice of its root) and as the other layouts."""
    rng = np.random.default_rng(300 + n)
    big = rng.normal(size=(n + 1, n + 1))
    big[np.diag_indices(n + 1)] = np.abs(big.diagonal()) + 1.0
    src = big if layout.startswith("C") else np.asfortranarray(big)
    a = src[:-1, :-1] if "slice" in layout else np.array(src[:-1, :-1], order=layout)
    for b in (rng.normal(size=n), np.eye(n), rng.normal(size=(2 * n, n)).T):
        for lower in (False, True):
            for trans in (False, True):
                _same(lapack.solve_triangular(a, b, lower=lower, trans=trans),
                      solve_triangular(a, b, trans=int(trans), lower=lower,
                                       check_finite=False))


@pytest.mark.parametrize("n", SIZES)
def test_potri_and_ger_equal_scipys(n):
    rng = np.random.default_rng(200 + n)
    factor = cholesky(_spd(n, rng), lower=True, check_finite=False)
    got, info = lapack.potri_lower(factor)
    want, want_info = dpotri(factor, lower=1)
    assert info == want_info == 0
    _same(got, want)
    s = np.asfortranarray(rng.normal(size=(n, n)))
    x = rng.normal(size=n)
    expected = dger(-0.7, x, x, a=s.copy(order="F"), overwrite_a=1)
    out = lapack.ger(-0.7, x, x, s)
    assert out is s  # in place, as dger with overwrite_a on a Fortran array
    _same(out, expected)


@pytest.mark.slow
def test_the_engine_calls_import_no_scipy():
    code = ("import sys, numpy as np; from inference.engines import lapack; "
            "a = np.eye(3) * 2.0; f = lapack.cholesky_lower(a); lapack.solve_lower(f, a); "
            "lapack.cho_solve_lower(f, a[0]); lapack.potri_lower(f); "
            "lapack.ger(1.0, a[0], a[0], np.asfortranarray(a)); "
            "import inference.engines.sbl; print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "False"


def test_wrong_shapes_are_refused_and_empty_systems_solved_as_scipy():
    """LAPACK takes raw pointers: a short right-hand side or a non-square matrix would be read
    or written past its end (a 1-D 'matrix' aborted the process), so shapes are checked."""
    L = np.tril(np.ones((3, 3))) + 2 * np.eye(3)
    with pytest.raises(ValueError):
        lapack.solve_lower(L, np.arange(6.0))
    with pytest.raises(ValueError):
        lapack.cholesky_lower(np.array([4.0, 1.0, 1.0]))
    assert lapack.solve_lower(np.zeros((0, 0)), np.zeros((0, 5))).shape == (0, 5)
    assert lapack.cho_solve_lower(np.zeros((0, 0)), np.zeros(0)).shape == (0,)
    np.testing.assert_array_equal(solve_triangular(np.zeros((0, 0)), np.zeros((0, 5))),
                                  lapack.solve_lower(np.zeros((0, 0)), np.zeros((0, 5))))
