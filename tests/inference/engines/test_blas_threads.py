"""BLAS thread limits through threadpoolctl, with its scan of the libraries kept."""

import pytest
import threadpoolctl
from bayescheck.inference.engines import blas_threads


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_one_blas_thread_limits_every_blas_and_scans_the_libraries_once():
    """Inside the context every BLAS library runs on one thread, and the libraries loaded are
    found once, not on every entry (that scan was most of a mixture check's density calls)."""
    import scipy.linalg  # noqa: F401 - numpy's and scipy's OpenBLAS both loaded

    with blas_threads.one_blas_thread():
        inside = _blas_threads()
        assert blas_threads.blas_on_one_thread()
    first = blas_threads._CONTROLLER[0]
    with blas_threads.one_blas_thread():
        pass
    assert blas_threads._CONTROLLER[0] is first
    assert len(inside) >= 2 and all(n == 1 for n in inside)


def test_more_threads_are_seen():
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if max(_blas_threads()) == 1:
            pytest.skip("an OpenBLAS built for one thread")
        assert not blas_threads.blas_on_one_thread()
