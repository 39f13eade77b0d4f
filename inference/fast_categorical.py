"""PyTensor's categorical draws without its per-row Python loop, for the posterior predictive.

``check`` draws the posterior predictive in PyTensor's FAST_COMPILE mode (numpy ``perform``
of each op, no compilation: :func:`bayescheck.reports.check.add_posterior_predictive`). There
``CategoricalRV.rng_fn`` (PyTensor 3.3) finds each row's category with
``np.vectorize(np.searchsorted, signature="(n),()->()")``, a Python call per row: for the
Asia network (1000 rows, 8 categorical nodes, 500 draws) 4 million calls, 29 of the check's
71 s of CPU (benchmarks/SUITE.md, round 8).

For a non-decreasing row ``c`` (the cumulative sum of probabilities) and a number ``u``,
``np.searchsorted(c, u)`` (side "left") is the first index ``i`` with ``c[i] >= u``, which is
the number of entries with ``c[i] < u``: ``(c < u[..., None]).sum(-1)`` gives the same
integers from the same uniform draws, for every row at once, broadcast as ``np.vectorize``
broadcasts. The draws are therefore identical, not merely equal in distribution
(``tests/inference/test_fast_categorical.py``).
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

__all__ = ["categorical_rng_fn", "vectorised_categorical"]

_LOCK = threading.Lock()
_USERS = 0
_ORIGINAL = None


def categorical_rng_fn(cls, rng, p, size):
    """``CategoricalRV.rng_fn`` with the row search done by one comparison over all rows.

    The same size checks and the same ``rng.uniform(size=size)`` call as PyTensor's, so the
    generator is left in the same state and the draws are the same integers.
    """
    if size is None:
        size = p.shape[:-1]
    else:
        if len(size) < (p.ndim - 1):
            raise ValueError("`size` is incompatible with the shape of `p`")
        for s, ps in zip(reversed(size), reversed(p.shape[:-1]), strict=False):
            if s == 1 and ps != 1:
                raise ValueError("`size` is incompatible with the shape of `p`")
    unif_samples = rng.uniform(size=size)
    cumulative = p.cumsum(axis=-1)
    return (cumulative < np.expand_dims(unif_samples, -1)).sum(axis=-1, dtype=np.int64)


@contextlib.contextmanager
def vectorised_categorical():
    """Within the block, PyTensor's categorical ``perform`` uses :func:`categorical_rng_fn`.

    PyTensor's own function is put back when the last block that asked for the change ends
    (blocks may overlap in threads: a count under a lock).
    """
    global _USERS, _ORIGINAL
    from pytensor.tensor.random.basic import CategoricalRV

    if "rng_fn" not in CategoricalRV.__dict__:  # another PyTensor: its own draws, left alone
        yield
        return
    with _LOCK:
        if _USERS == 0:
            _ORIGINAL = CategoricalRV.__dict__["rng_fn"]
            CategoricalRV.rng_fn = classmethod(categorical_rng_fn)
        _USERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _USERS -= 1
            if _USERS == 0:
                CategoricalRV.rng_fn = _ORIGINAL
                _ORIGINAL = None
