"""The vectorised categorical draws are PyTensor's draws, integer for integer.

inference.fast_categorical replaces CategoricalRV.rng_fn (a Python searchsorted per row)
while the posterior predictive is drawn; the draws must be the same integers from the same
generator, whatever the shapes, and PyTensor's own function must come back afterwards.
"""

import numpy as np
import pytest
from bayescheck.inference.fast_categorical import categorical_rng_fn, vectorised_categorical
from pytensor.tensor.random.basic import CategoricalRV

SHAPES = [  # (p's shape, size)
    ((4,), None), ((4,), (7,)), ((1000, 3), None), ((1000, 3), (1000,)), ((5, 2), (6, 5)),
    ((1, 6), (9, 1)), ((3, 1, 4), (2, 3, 5)), ((2,), (3, 4)),
]


def _p(rng, shape, zeros=False):
    p = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
    if zeros:  # empty categories: equal cumulative sums, where "<" versus "<=" would show
        p[..., 0] = 0.0
        p /= p.sum(-1, keepdims=True)
    return p


@pytest.mark.parametrize(("shape", "size"), SHAPES)
@pytest.mark.parametrize("zeros", [False, True])
def test_the_same_integers_as_pytensor_from_the_same_generator(shape, size, zeros):
    p = _p(np.random.default_rng(1), shape, zeros)
    ours = categorical_rng_fn(CategoricalRV, np.random.default_rng(7), p, size)
    theirs = CategoricalRV.rng_fn(np.random.default_rng(7), p, size)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)
    # and not because every draw is the same: another seed gives other integers (unless
    # one category holds all the mass: two categories, one emptied)
    other = categorical_rng_fn(CategoricalRV, np.random.default_rng(8), p, size)
    if ours.size > 20 and not (zeros and shape[-1] == 2):
        assert not np.array_equal(ours, other)


def test_ties_at_the_uniform_draw_go_where_searchsorted_puts_them():
    """u equal to a cumulative sum: searchsorted (side "left") returns that entry's index."""

    class Fixed:
        def uniform(self, size):
            return np.broadcast_to(np.array([0.25, 0.5, 0.0, 1.0]), size)

    p = np.array([0.25, 0.25, 0.5])
    ours = categorical_rng_fn(CategoricalRV, Fixed(), p, (4,))
    np.testing.assert_array_equal(ours, [np.searchsorted(np.cumsum(p), u)
                                         for u in (0.25, 0.5, 0.0, 1.0)])


def test_bad_sizes_are_refused_as_pytensor_refuses_them():
    p = np.full((5, 2), 0.5)
    for size, match in [((), "incompatible"), ((5, 1), "incompatible"), ((3,), "")]:
        with pytest.raises(ValueError, match=match):  # (3,): numpy's broadcasting error
            CategoricalRV.rng_fn(np.random.default_rng(0), p, size)
        with pytest.raises(ValueError, match=match):
            categorical_rng_fn(CategoricalRV, np.random.default_rng(0), p, size)


def test_pytensor_function_is_used_inside_the_block_and_restored_after(monkeypatch):
    import pytensor
    import pytensor.tensor as pt
    from bayescheck.inference import fast_categorical

    calls = []

    def spy(cls, rng, p, size):
        calls.append(p.shape)
        return categorical_rng_fn(cls, rng, p, size)

    monkeypatch.setattr(fast_categorical, "categorical_rng_fn", spy)
    original = CategoricalRV.__dict__["rng_fn"]
    p = pt.dmatrix("p")
    rng = pytensor.shared(np.random.default_rng(3))
    draw = pt.random.categorical(p, rng=rng)
    f = pytensor.function([p], draw, mode="FAST_COMPILE")
    probs = _p(np.random.default_rng(2), (300, 4))
    with vectorised_categorical():
        with vectorised_categorical():  # nested: restored only when the outer block ends
            assert CategoricalRV.__dict__["rng_fn"] is not original
        assert CategoricalRV.__dict__["rng_fn"] is not original
        rng.set_value(np.random.default_rng(3))
        inside = f(probs)
    assert calls == [(300, 4)]  # the draw inside the block went through the vectorised search
    assert CategoricalRV.__dict__["rng_fn"] is original
    rng.set_value(np.random.default_rng(3))
    np.testing.assert_array_equal(inside, f(probs))
