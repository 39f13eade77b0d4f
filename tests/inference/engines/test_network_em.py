"""EM for a network's CPTs with missing cells: without missing cells it is the exact Dirichlet
posterior mean; with them it reaches the maximum of the objective found independently by a
quasi-Newton search over a brute-force objective; the objective never falls; patterns merge
by addition; bad input is a ValueError."""

import numpy as np
import pytest
from bayescheck.inference.engines.network_em import MissingPatterns, network_em
from bayescheck.inference.engines.networks import (
    NetworkCounts,
    NetworkSchema,
    cpt_posterior,
    dirichlet_prior,
    network_counts,
)
from scipy import optimize, special

# a -> b, a -> c, b -> c with 2, 3, 2 states
SCHEMA = NetworkSchema(("a", "b", "c"), (("0", "1"), ("0", "1", "2"), ("0", "1")),
                       ((), (0,), (0, 1)))


def sample(rng, n, missing=0.0):
    pa = np.array([0.3, 0.7])
    pb = np.array([[0.6, 0.3, 0.1], [0.1, 0.2, 0.7]])
    pc = rng.dirichlet([1, 1], size=6)
    a = rng.choice(2, n, p=pa)
    b = np.array([rng.choice(3, p=pb[x]) for x in a])
    c = np.array([rng.choice(2, p=pc[x * 3 + y]) for x, y in zip(a, b, strict=True)])
    codes = np.column_stack([a, b, c])
    codes[rng.random(codes.shape) < missing] = -1
    return codes


def split(codes):
    incomplete = (codes < 0).any(axis=1)
    return network_counts(codes[~incomplete], SCHEMA), MissingPatterns.from_codes(codes)


def brute_objective(cpts, codes, prior):
    """log P(observed cells) from the full joint table, plus sum alpha log theta."""
    joint = np.einsum("a,ab,abc->abc", cpts[0][0], cpts[1], cpts[2].reshape(2, 3, 2))
    total = 0.0
    for row in codes:
        index = tuple(slice(None) if x < 0 else int(x) for x in row)
        total += np.log(joint[index].sum())
    return total + sum(float(np.sum(a * np.log(t))) for a, t in zip(prior, cpts, strict=True))


def unpack(z):
    shapes = [(1, 2), (2, 3), (6, 2)]
    out, pos = [], 0
    for q, r in shapes:
        logits = z[pos:pos + q * r].reshape(q, r)
        out.append(special.softmax(logits, axis=1))
        pos += q * r
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("concentration", [0.5, 1.0, 3.0])
def test_without_missing_cells_it_is_the_exact_posterior_mean(seed, concentration):
    codes = sample(np.random.default_rng(seed), 200)
    counts, patterns = split(codes)
    assert patterns.n == 0
    prior = dirichlet_prior(SCHEMA, concentration=concentration)
    em = network_em(counts, patterns, prior)
    exact = cpt_posterior(counts, prior).mean
    for got, want in zip(em.cpts, exact, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert em.converged and em.iterations == 1
    for got, c in zip(em.expected_counts, counts.tables, strict=True):
        np.testing.assert_array_equal(got, c)


@pytest.mark.slow
@pytest.mark.parametrize("seed, missing", [(3, 0.15), (4, 0.35)])
def test_reaches_the_maximum_found_by_direct_optimisation(seed, missing):
    codes = sample(np.random.default_rng(seed), 300, missing)
    counts, patterns = split(codes)
    assert patterns.cells > 50
    prior = dirichlet_prior(SCHEMA, concentration=1.0)
    em = network_em(counts, patterns, prior, tol=1e-13, max_iter=20000)
    assert em.converged
    res = optimize.minimize(lambda z: -brute_objective(unpack(z), codes, prior),
                            np.zeros(2 + 6 + 12), method="BFGS", options={"gtol": 1e-9})
    direct = unpack(res.x)
    assert brute_objective(list(em.cpts), codes, prior) >= -res.fun - 1e-9
    for got, want in zip(em.cpts, direct, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)  # BFGS on finite-difference gradients
    # the engine's log likelihood is the brute-force one at its estimate
    prior_term = sum(float(np.sum(a * np.log(t))) for a, t in zip(prior, em.cpts, strict=True))
    assert em.log_likelihood + prior_term == pytest.approx(
        brute_objective(list(em.cpts), codes, prior), rel=1e-12)
    assert em.objective[-1] == pytest.approx(em.log_likelihood + prior_term, rel=1e-12)


def test_the_objective_never_falls_and_a_wrong_m_step_is_caught():
    codes = sample(np.random.default_rng(5), 400, 0.3)
    counts, patterns = split(codes)
    prior = dirichlet_prior(SCHEMA, equivalent_sample_size=4.0)
    em = network_em(counts, patterns, prior, tol=1e-13, max_iter=20000)
    steps = np.diff(em.objective)
    assert em.converged and em.iterations > 3
    assert (steps >= -1e-12 * np.abs(em.objective[1:])).all()
    # the fixed point: one more M step from the expected counts returns the estimate
    again = [(e + a) / (e + a).sum(axis=1, keepdims=True)
             for e, a in zip(em.expected_counts, prior, strict=True)]
    for got, want in zip(again, em.cpts, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-9)
    # a CPT moved off the maximum has a lower objective (the comparison can fail)
    moved = [t.copy() for t in em.cpts]
    moved[1][0] = [0.5, 0.3, 0.2]
    assert brute_objective(moved, codes, prior) < em.objective[-1] - 1e-3


def test_patterns_merge_by_addition():
    codes = sample(np.random.default_rng(6), 300, 0.2)
    whole = MissingPatterns.from_codes(codes)
    parts = MissingPatterns.from_codes(codes[:100]) + MissingPatterns.from_codes(codes[100:])
    np.testing.assert_array_equal(parts.rows, whole.rows)
    np.testing.assert_array_equal(parts.counts, whole.counts)
    assert whole.n == int((codes < 0).any(axis=1).sum())
    assert whole.cells == int((codes < 0).sum())
    assert (MissingPatterns.empty(3) + whole).n == whole.n


def test_bad_input_is_a_value_error():
    codes = sample(np.random.default_rng(7), 50, 0.2)
    counts, patterns = split(codes)
    prior = dirichlet_prior(SCHEMA, concentration=1.0)
    with pytest.raises(ValueError, match="prior of 'b'"):
        network_em(counts, patterns, (prior[0], prior[1][:1], prior[2]))
    with pytest.raises(ValueError, match="outside"):
        network_em(counts, MissingPatterns(np.array([[0, 3, -1]]), np.array([1])), prior)
    with pytest.raises(ValueError, match="max_iter"):
        network_em(counts, patterns, prior, max_iter=0)
    wide = NetworkSchema(tuple(f"x{i}" for i in range(17)), (("0", "1"),) * 17, ((),) * 17)
    empty = NetworkCounts.empty(wide)
    with pytest.raises(ValueError, match="131072 configurations"):
        network_em(empty, MissingPatterns(np.full((1, 17), -1), np.array([1])),
                   dirichlet_prior(wide, concentration=1.0))


def test_a_row_with_every_cell_missing_changes_nothing():
    codes = sample(np.random.default_rng(8), 200)
    counts, _ = split(codes)
    prior = dirichlet_prior(SCHEMA, concentration=1.0)
    blank = MissingPatterns(np.full((1, 3), -1), np.array([5]))
    em = network_em(counts, blank, prior)
    for got, want in zip(em.cpts, cpt_posterior(counts, prior).mean, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for e in em.expected_counts:
        assert e.sum() == pytest.approx(counts.n + 5, rel=1e-12)


def test_recoded_patterns_renumber_and_regroup():
    rows = np.array([[0, -1, 1], [1, 2, -1], [1, -1, 1]])
    m = MissingPatterns.from_codes(np.vstack([rows, rows[:1]]))
    # node 0: 0 <-> 1 swapped; node 1: 2 -> 0; node 2 unchanged
    out = m.recoded([np.array([1, 0]), np.array([1, 2, 0]), np.array([0, 1])])
    expected = MissingPatterns.from_codes(np.array([[1, -1, 1], [0, 0, -1], [0, -1, 1],
                                                    [1, -1, 1]]))
    np.testing.assert_array_equal(out.rows, expected.rows)
    np.testing.assert_array_equal(out.counts, expected.counts)
    assert out.n == 4 and out.cells == m.cells
