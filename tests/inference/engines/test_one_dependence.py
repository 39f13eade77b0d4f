"""One-dependence estimators against independent derivations: SPODE and TAN scores equal the
network engine's query on the same structure, AODE equals its formula counted row by row here,
conditional mutual information equals its definition, the spanning tree is maximal
(networkx); each with a case that fails."""

import itertools

import networkx as nx
import numpy as np
import pytest
from bayescheck.inference.engines.networks import (
    NetworkSchema,
    cpt_posterior,
    dirichlet_prior,
    network_counts,
    query,
)
from bayescheck.inference.engines.one_dependence import (
    PairCounts,
    aode_log_scores,
    conditional_mutual_information,
    maximum_spanning_tree,
    one_dependence_log_scores,
    pair_counts,
    spode_parents,
)

CARD = (3, 2, 3, 2, 4)  # K classes, then 4 features


def data(seed, n=200):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CARD[0], n)
    X = np.column_stack([(rng.integers(0, r, n) + (y if j % 2 else 0)) % r
                         for j, r in enumerate(CARD[1:])])
    return y, X


def network_scores(y, X, parents, alpha, rows):
    """P(c, x) by the network engine on the class + features network."""
    d = X.shape[1]
    net_parents = [()] + [((0,) if p < 0 else (0, p + 1)) for p in parents]
    schema = NetworkSchema(tuple(["c"] + [f"x{j}" for j in range(d)]),
                           tuple(tuple(str(k) for k in range(r)) for r in CARD),
                           tuple(net_parents))
    post = cpt_posterior(network_counts(np.column_stack([y, X]), schema),
                         dirichlet_prior(schema, concentration=alpha))
    out = []
    for row in rows:
        joint, _ = query(post.mean, schema, 0, {j + 1: int(v) for j, v in enumerate(row)})
        out.append(joint)
    return np.log(np.array(out))


@pytest.mark.parametrize("sp", range(4))
def test_spode_scores_equal_the_network_engine(sp):
    y, X = data(sp)
    counts = pair_counts(y, X, CARD)
    parents = spode_parents(4, sp)
    rows = X[:15]
    got = one_dependence_log_scores(counts, parents, rows, 0.7)
    np.testing.assert_allclose(got, network_scores(y, X, parents, 0.7, rows), rtol=1e-12)
    # another super-parent gives other scores
    other = one_dependence_log_scores(counts, spode_parents(4, (sp + 1) % 4), rows, 0.7)
    assert not np.allclose(other, got)


def test_tan_scores_equal_the_network_engine_and_the_tree_is_maximal():
    y, X = data(9, 400)
    counts = pair_counts(y, X, CARD)
    w = conditional_mutual_information(counts)
    parents = maximum_spanning_tree(w, root=0)
    assert parents[0] == -1 and sum(p >= 0 for p in parents) == 3
    g = nx.Graph()
    for i, j in itertools.combinations(range(4), 2):
        g.add_edge(i, j, weight=w[i, j])
    best = sum(d["weight"] for *_, d in nx.maximum_spanning_tree(g).edges(data=True))
    assert sum(w[j, p] for j, p in enumerate(parents) if p >= 0) == pytest.approx(best)
    got = one_dependence_log_scores(counts, parents, X[:10], 1.0)
    np.testing.assert_allclose(got, network_scores(y, X, parents, 1.0, X[:10]), rtol=1e-12)


def test_conditional_mutual_information_is_its_definition():
    y, X = data(2, 300)
    w = conditional_mutual_information(pair_counts(y, X, CARD))
    n = len(y)
    for i, j in itertools.combinations(range(4), 2):
        total = 0.0
        for c, a, b in itertools.product(range(CARD[0]), range(CARD[i + 1]),
                                         range(CARD[j + 1])):
            pcab = np.mean((y == c) & (X[:, i] == a) & (X[:, j] == b))
            if pcab == 0:
                continue
            pc = np.mean(y == c)
            pca = np.mean((y == c) & (X[:, i] == a))
            pcb = np.mean((y == c) & (X[:, j] == b))
            total += pcab * np.log(pcab * pc / (pca * pcb))
        assert w[i, j] == pytest.approx(total, abs=1e-12) and w[j, i] == w[i, j]
    assert n == 300


def aode_by_rows(y, X, row, alpha, m_prime):
    """The (corrected) formula counted here from the rows."""
    K, *N = CARD
    n = len(y)
    scores = np.zeros(K)
    used = 0
    for i in range(4):
        if np.sum(X[:, i] == row[i]) < m_prime:
            continue
        used += 1
        for c in range(K):
            sel = (y == c) & (X[:, i] == row[i])
            s = (sel.sum() + alpha) / (n + K * N[i] * alpha)
            for j in range(4):
                if j != i:
                    s *= (np.sum(sel & (X[:, j] == row[j])) + alpha) / (sel.sum() + N[j] * alpha)
            scores[c] += s
    return np.log(scores / used), used


@pytest.mark.parametrize("m_prime", [0, 30, 60])
def test_aode_equals_its_formula_counted_from_rows(m_prime):
    y, X = data(4, 150)
    counts = pair_counts(y, X, CARD)
    got, used = aode_log_scores(counts, X[:12], 1.0, m_prime)
    for r in range(12):
        expected, k = aode_by_rows(y, X, X[r], 1.0, m_prime)
        assert used[r].sum() == k
        if k:
            np.testing.assert_allclose(got[r], expected, rtol=1e-12)


def test_aode_joint_table_sums_to_one_and_the_notes_denominator_does_not():
    y, X = data(5, 100)
    K, N0 = CARD[0], CARD[1]
    counts = pair_counts(y, X, CARD)
    ours = (counts.singles[0] + 1) / (counts.n + K * N0)
    notes = (counts.singles[0] + 1) / (counts.n + N0)
    assert ours.sum() == pytest.approx(1.0) and notes.sum() != pytest.approx(1.0)


def test_aode_falls_back_to_naive_bayes_when_no_super_parent_qualifies():
    y, X = data(6, 50)
    counts = pair_counts(y, X, CARD)
    got, used = aode_log_scores(counts, X[:3], 1.0, 10_000)
    assert not used.any()
    np.testing.assert_allclose(got, one_dependence_log_scores(counts, [-1] * 4, X[:3], 1.0))


def test_pair_counts_merge_and_round_trip():
    y, X = data(7, 120)
    whole = pair_counts(y, X, CARD)
    merged = pair_counts(y[:50], X[:50], CARD) + pair_counts(y[50:], X[50:], CARD)
    np.testing.assert_array_equal(merged.flat(), whole.flat())
    again = PairCounts.from_flat(CARD, whole.flat())
    np.testing.assert_array_equal(again.flat(), whole.flat())
    assert again.pair(3, 1).shape == (3, 4, 3)  # (K, N_3, N_1)
    with pytest.raises(ValueError, match="codes must be in"):
        pair_counts(y, X + 5, CARD)


def test_grown_counts_are_the_counts_of_the_larger_schema():
    y, X = data(5)
    small = pair_counts(y, X, CARD)
    big_card = (4, 3, 3, 2, 5)
    want = pair_counts(y, X, big_card)
    np.testing.assert_array_equal(small.grown(big_card).flat(), want.flat())
    assert (small.grown(big_card) + want).n == 2 * small.n
    with pytest.raises(ValueError, match="cannot shrink"):
        want.grown(CARD)
