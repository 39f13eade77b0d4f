"""The network engine against independent derivations.

Variable elimination against brute-force enumeration of the joint, d-separation against
networkx ``is_d_separator`` on random DAGs, the BD score against the chain rule of
posterior predictives, the posterior-mean claim for queries against Monte Carlo; each with a
case that must fail.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from bayescheck.inference.engines.networks import (
    CycleError,
    NetworkCounts,
    NetworkSchema,
    count_columns,
    count_tables,
    cpt_posterior,
    d_separation,
    dirichlet_prior,
    find_cycle,
    grow_tables,
    log_marginal_likelihood,
    network_counts,
    query,
    reorder_tables,
    topological_order,
)


def random_schema(rng, n, p_edge=0.4, max_card=3):
    order = rng.permutation(n)
    parents = [[] for _ in range(n)]
    for a, b in itertools.combinations(range(n), 2):
        if rng.random() < p_edge:
            parents[order[b]].append(int(order[a]))
    states = tuple(tuple(f"s{k}" for k in range(rng.integers(2, max_card + 1)))
                   for _ in range(n))
    return NetworkSchema(tuple(f"v{i}" for i in range(n)), states,
                         tuple(tuple(p) for p in parents))


def random_cpts(rng, schema):
    return tuple(rng.dirichlet(np.ones(r), size=schema.n_configs(v))
                 for v, r in enumerate(schema.cardinality))


def brute_joint(cpts, schema):
    """The full joint table by enumeration, axes in node order."""
    card = schema.cardinality
    joint = np.zeros(card)
    for x in itertools.product(*(range(r) for r in card)):
        p = 1.0
        for v in range(len(card)):
            j = 0
            for q in schema.parents[v]:
                j = j * card[q] + x[q]
            p *= cpts[v][j, x[v]]
        joint[x] = p
    return joint


def brute_query(joint, target, evidence):
    index = tuple(evidence.get(v, slice(None)) for v in range(joint.ndim))
    sub = joint[index]
    kept = [v for v in range(joint.ndim) if v not in evidence]
    axes = tuple(i for i, v in enumerate(kept) if v != target)
    return sub.sum(axis=axes)


def dag(schema):
    g = nx.DiGraph()
    g.add_nodes_from(range(len(schema.nodes)))
    g.add_edges_from((p, v) for v, pa in enumerate(schema.parents) for p in pa)
    return g


# ---- structure -------------------------------------------------------------------------


def test_cycle_is_found_and_named():
    parents = ((2,), (0,), (1,), ())
    cycle = find_cycle(parents)
    assert cycle[0] == cycle[-1] and set(cycle) == {0, 1, 2}
    with pytest.raises(CycleError, match="a -> .* -> a|b -> .* -> b|c -> .* -> c"):
        NetworkSchema(("a", "b", "c", "d"), (("0", "1"),) * 4, parents)
    assert find_cycle(((), (0,), (0, 1))) is None


def test_topological_order_puts_parents_first():
    rng = np.random.default_rng(3)
    for _ in range(20):
        s = random_schema(rng, 8)
        order = topological_order(s.parents)
        pos = {v: i for i, v in enumerate(order)}
        assert sorted(order) == list(range(8))
        assert all(pos[p] < pos[v] for v, pa in enumerate(s.parents) for p in pa)


# ---- counting --------------------------------------------------------------------------


def test_counts_match_a_loop_and_merge_by_addition():
    rng = np.random.default_rng(0)
    s = random_schema(rng, 5)
    codes = np.column_stack([rng.integers(0, r, size=300) for r in s.cardinality])
    c = network_counts(codes, s)
    for v in range(5):
        expected = np.zeros_like(c.tables[v])
        for row in codes:
            j = 0
            for p in s.parents[v]:
                j = j * s.cardinality[p] + row[p]
            expected[j, row[v]] += 1
        np.testing.assert_array_equal(c.tables[v], expected)
    halves = network_counts(codes[:120], s) + network_counts(codes[120:], s)
    assert all(np.array_equal(a, b) for a, b in zip(halves.tables, c.tables, strict=True))
    assert (NetworkCounts.empty(s) + c).n == 300
    with pytest.raises(ValueError, match="row 7"):
        bad = codes.copy()
        bad[7, 2] = s.cardinality[2]
        network_counts(bad, s)


def test_states_appended_then_sorted_give_the_counts_of_the_final_states():
    """The one-pass path: count batch 1 with the states seen so far, grow the tables when
    batch 2 brings new states (appended), add its counts, renumber to the final order; this
    equals counting everything at once with the final states (including never-seen parent
    configurations, whose rows stay zero)."""
    rng = np.random.default_rng(4)
    s = random_schema(rng, 6, p_edge=0.5, max_card=4)
    card = s.cardinality
    codes = np.column_stack([rng.integers(0, r, size=400) for r in card])
    first, second = codes[:250].copy(), codes[250:]
    # the highest state of nodes 0, 2 and 4 appears only in the second batch
    late = [0, 2, 4]
    for v in late:
        first[first[:, v] == card[v] - 1, v] = 0
    old = [r - 1 if v in late else r for v, r in enumerate(card)]
    tables = count_tables(np.asfortranarray(first), old, s.parents)
    tables = grow_tables(tables, s.parents, old, card)
    tables = [a + b for a, b in zip(tables, count_tables(second, card, s.parents), strict=True)]
    expected = network_counts(np.vstack([first, second]), s).tables
    assert all(np.array_equal(a, b) for a, b in zip(tables, expected, strict=True))
    # renumbering: new code k is old code orders[v][k]
    orders = [rng.permutation(r) for r in card]
    inverse = [np.argsort(o) for o in orders]
    recoded = np.column_stack([inverse[v][codes[:, v]] for v in range(len(card))])
    renumbered = reorder_tables(network_counts(codes, s).tables, s.parents, card, orders)
    direct = network_counts(recoded, s).tables
    assert all(np.array_equal(a, b) for a, b in zip(renumbered, direct, strict=True))
    # a wrong renumbering is caught by the same comparison
    wrong = [o[::-1] if len(o) > 1 else o for o in orders]
    assert not all(np.array_equal(a, b) for a, b in zip(
        reorder_tables(network_counts(codes, s).tables, s.parents, card, wrong), direct,
        strict=True))


@pytest.mark.parametrize("rows", [7, 300_001, 300_002])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_count_columns_equal_counting_row_by_row(rows, dtype):
    """Families of under 256 cells (counted in bytes, long ones as byte pairs) and larger
    ones, from codes of any integer type, odd and even lengths."""
    rng = np.random.default_rng(rows)
    card = [2, 3, 4, 5, 40, 1]
    parents = [(), (0,), (0, 1), (1, 2), (2, 3), (4,)]  # 2, 6, 24, 60, 800, 40 ... cells
    columns = [rng.integers(0, r, rows).astype(dtype) for r in card]
    got = count_columns(columns, card, parents)
    for v, table in enumerate(got):
        index = np.zeros(rows, np.int64)
        for u in (*parents[v], v):
            index = index * card[u] + columns[u]
        want = np.zeros(table.size, np.int64)
        np.add.at(want, index, 1)
        assert table.dtype == np.int64 and table.shape[1] == card[v]
        assert (table.ravel() == want).all(), v


def test_count_tables_of_nodes_without_states_yet():
    parents = ((), (0,))
    empty = count_tables(np.zeros((0, 2), np.int32), [0, 0], parents)
    assert [t.shape for t in empty] == [(1, 0), (0, 0)]
    grown = grow_tables(empty, parents, [0, 0], [2, 3])
    assert [t.shape for t in grown] == [(1, 2), (2, 3)] and not any(t.any() for t in grown)
    with pytest.raises(ValueError, match="node 'b', row 1"):
        count_tables(np.array([[0, 0], [1, 3]]), [2, 3], parents, ("a", "b"))


def test_bdeu_prior_spreads_the_equivalent_sample_size():
    s = NetworkSchema(("a", "b"), (("0", "1", "2"), ("x", "y")), ((), (0,)))
    a = dirichlet_prior(s, equivalent_sample_size=6.0)
    assert a[0].shape == (1, 3) and np.allclose(a[0], 2.0)
    assert a[1].shape == (3, 2) and np.allclose(a[1], 1.0)
    assert all(np.isclose(t.sum(), 6.0) for t in a)
    with pytest.raises(ValueError, match="exactly one"):
        dirichlet_prior(s)


def test_log_marginal_likelihood_is_the_chain_of_posterior_predictives():
    rng = np.random.default_rng(1)
    s = random_schema(rng, 4)
    codes = np.column_stack([rng.integers(0, r, size=40) for r in s.cardinality])
    prior = dirichlet_prior(s, equivalent_sample_size=3.0)
    running = [p.copy() for p in prior]
    chain = 0.0
    for row in codes:  # P(x_n | x_1..x_{n-1}): posterior-mean CPTs, then count the row
        for v in range(4):
            j = 0
            for p in s.parents[v]:
                j = j * s.cardinality[p] + row[p]
            chain += np.log(running[v][j, row[v]] / running[v][j].sum())
            running[v][j, row[v]] += 1
    score = log_marginal_likelihood(network_counts(codes, s), prior)
    assert score == pytest.approx(chain, rel=1e-12)
    # the same data under the empty structure score differently (the score can tell)
    empty = NetworkSchema(s.nodes, s.states, ((),) * 4)
    other = log_marginal_likelihood(network_counts(codes, empty),
                                    dirichlet_prior(empty, equivalent_sample_size=3.0))
    if any(s.parents):
        assert other != pytest.approx(chain, rel=1e-6)


# ---- exact inference -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_variable_elimination_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    s = random_schema(rng, 6)
    cpts = random_cpts(rng, s)
    joint = brute_joint(cpts, s)
    assert joint.sum() == pytest.approx(1.0)
    for _ in range(5):
        target = int(rng.integers(6))
        others = [v for v in range(6) if v != target]
        ev_nodes = rng.choice(others, size=rng.integers(0, 4), replace=False)
        evidence = {int(v): int(rng.integers(s.cardinality[v])) for v in ev_nodes}
        got, p_e = query(cpts, s, target, evidence)
        expected = brute_query(joint, target, evidence)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        assert p_e == pytest.approx(expected.sum(), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_every_target_with_and_without_evidence_equals_enumeration(seed):
    """Every node as the target, alone and with each other node as evidence: the target's
    own place in the elimination order (moved last) meets every family it is in."""
    rng = np.random.default_rng(100 + seed)
    s = random_schema(rng, 6)
    cpts = random_cpts(rng, s)
    joint = brute_joint(cpts, s)
    for target in range(6):
        for evidence in [{}] + [{v: 0} for v in range(6) if v != target]:
            got, _ = query(cpts, s, target, evidence)
            np.testing.assert_allclose(got, brute_query(joint, target, evidence),
                                       rtol=1e-12, atol=1e-15)


def test_enumeration_would_catch_a_wrong_cpt():
    """A CPT entry off by a factor 1.5 (renormalised) changes the answer enumeration gives."""
    rng = np.random.default_rng(5)
    s = NetworkSchema(("a", "b", "c"), (("0", "1"),) * 3, ((), (0,), (0, 1)))
    cpts = random_cpts(rng, s)
    wrong = [c.copy() for c in cpts]
    wrong[1][0, 0] *= 1.5
    wrong[1][0] /= wrong[1][0].sum()
    got, _ = query(wrong, s, 2, {0: 0})
    assert not np.allclose(got, brute_query(brute_joint(cpts, s), 2, {0: 0}), rtol=1e-3)


def test_query_refuses_target_as_evidence_and_bad_codes():
    s = NetworkSchema(("a", "b"), (("0", "1"),) * 2, ((), (0,)))
    cpts = (np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]]))
    with pytest.raises(ValueError, match="both the target and evidence"):
        query(cpts, s, 1, {1: 0})
    with pytest.raises(ValueError, match="outside"):
        query(cpts, s, 1, {0: 2})


def test_query_posterior_mean_is_exact_under_independent_dirichlet_rows():
    """E[P(t, e | theta)] and E[P(e | theta)] equal the expression at the posterior means
    (each term holds one entry per node); Monte Carlo over theta agrees within 4.5 standard
    errors, and the plug-in maximum-likelihood CPTs do not."""
    rng = np.random.default_rng(11)
    s = NetworkSchema(("a", "b", "c", "d"), (("0", "1"), ("0", "1", "2"), ("0", "1"),
                                             ("0", "1")), ((), (0,), (0, 1), (2,)))
    codes = np.column_stack([rng.integers(0, r, size=12) for r in s.cardinality])
    post = cpt_posterior(network_counts(codes, s), dirichlet_prior(s, concentration=0.5))
    exact, exact_e = query(post.mean, s, 1, {3: 0})
    draws = 40000
    ta, tb, tc, td = (np.stack([rng.dirichlet(row, size=draws) for row in a], axis=1)
                      for a in post.alpha)
    # sum over a, c of theta_a[a] theta_b[a, t] theta_c[(a, t), c] theta_d[c, 0], per draw
    values = np.einsum("da,dab,dabc,dc->db", ta[:, 0], tb, tc.reshape(draws, 2, 3, 2),
                       td[:, :, 0])
    evid = values.sum(axis=1)
    se = values.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(values.mean(axis=0) - exact) < 4.5 * se)
    assert abs(evid.mean() - exact_e) < 4.5 * evid.std() / np.sqrt(draws)
    counts = network_counts(codes, s).tables
    mle = [np.where(c.sum(1, keepdims=True) > 0, c / np.maximum(c.sum(1, keepdims=True), 1),
                    1.0 / c.shape[1]) for c in counts]
    plug_in, _ = query(mle, s, 1, {3: 0})
    assert np.any(np.abs(values.mean(axis=0) - plug_in) > 4.5 * se)


# ---- d-separation ----------------------------------------------------------------------


def whole_graph_moral_separated(schema, x, y, z):
    """The notes' procedure: moralise the WHOLE graph (wrong on unobserved colliders)."""
    g = nx.moral_graph(dag(schema))
    g.remove_nodes_from(z)
    return not any(nx.has_path(g, a, b) for a in x for b in y)


def moral_ancestral_edges(schema, anc):
    edges = set()
    for v in anc:
        for p in schema.parents[v]:
            edges.add(frozenset((p, v)))
        for a, b in itertools.combinations(schema.parents[v], 2):
            edges.add(frozenset((a, b)))
    return edges


def test_d_separation_equals_networkx_on_random_dags():
    rng = np.random.default_rng(7)
    wrong_by_whole_graph = 0
    checked = 0
    for _ in range(60):
        s = random_schema(rng, int(rng.integers(4, 10)), p_edge=float(rng.uniform(0.2, 0.6)))
        g = dag(s)
        n = len(s.nodes)
        for _ in range(10):
            perm = rng.permutation(n)
            kx, ky = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            kz = int(rng.integers(0, n - kx - ky + 1))
            x, y = set(perm[:kx].tolist()), set(perm[kx:kx + ky].tolist())
            z = set(perm[kx + ky:kx + ky + kz].tolist())
            got = d_separation(s.parents, sorted(x), sorted(y), sorted(z))
            assert got.separated == nx.is_d_separator(g, x, y, z), (s, x, y, z)
            checked += 1
            wrong_by_whole_graph += whole_graph_moral_separated(s, x, y, z) != got.separated
            if not got.separated:
                p = got.path
                assert p[0] in x and p[-1] in y and not set(p) & z
                edges = moral_ancestral_edges(s, set(got.ancestral))
                assert all(frozenset(link) in edges for link in itertools.pairwise(p))
                for a, b in got.moral_links:
                    assert a not in s.parents[b] and b not in s.parents[a]
    assert checked == 600
    # the notes' whole-graph moralisation is wrong on some of these: the comparison can fail
    assert wrong_by_whole_graph > 0


def test_unobserved_collider_separates_its_parents():
    """a -> c <- b: a and b are independent (the whole moral graph marries them); given c
    they are not, and the path is the marriage a - b."""
    parents = ((), (), (0, 1))
    assert d_separation(parents, [0], [1]).separated
    got = d_separation(parents, [0], [1], [2])
    assert not got.separated and got.path == (0, 1) and got.moral_links == ((0, 1),)
    # a descendant of the collider observed opens it too
    parents = ((), (), (0, 1), (2,))
    assert not d_separation(parents, [0], [1], [3]).separated
    with pytest.raises(ValueError, match="must not share"):
        d_separation(parents, [0], [0])


def test_count_columns_takes_numpy_integer_cardinalities():
    """A schema's cardinalities may be numpy integers: the byte path casts them."""
    rng = np.random.default_rng(3)
    card = [2, 3]
    columns = [rng.integers(0, r, 50).astype(np.int32) for r in card]
    want = count_columns(columns, card, [(), (0,)])
    got = count_columns(columns, np.array(card, dtype=np.int64), [(), (0,)])
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
