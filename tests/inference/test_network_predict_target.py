"""predict_target: all rows at once (gathers over the target's Markov blanket) must equal
variable elimination row by row, complete rows, rows with barren empty cells and rows with
other empty cells alike; complete rows must not run an elimination at all."""

import math

import bayescheck.inference.engines.networks as engine
import numpy as np
import pytest
from bayescheck.inference.engines.networks import NetworkSchema, predict_target, query


def _network(seed: int, n: int = 9):
    rng = np.random.default_rng(seed)
    card = [int(rng.integers(2, 5)) for _ in range(n)]
    parents = tuple(tuple(sorted(rng.choice(v, size=min(v, int(rng.integers(0, 4))),
                                            replace=False).tolist())) for v in range(n))
    schema = NetworkSchema(tuple(f"n{v}" for v in range(n)),
                           tuple(tuple(f"s{k}" for k in range(c)) for c in card), parents)
    cpts = [rng.dirichlet(np.ones(card[v]), size=schema.n_configs(v)) for v in range(n)]
    codes = np.column_stack([rng.integers(0, c, 400) for c in card])
    return rng, schema, cpts, codes


def _by_elimination(cpts, schema, target, codes):
    proba = np.empty((len(codes), schema.cardinality[target]))
    log_p = np.empty(len(codes))
    for i, row in enumerate(codes):
        joint, p_e = query(cpts, schema, target,
                           {v: int(c) for v, c in enumerate(row) if c >= 0 and v != target})
        proba[i], log_p[i] = joint / p_e, math.log(p_e)
    return proba, log_p


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_target_equals_elimination_row_by_row(seed):
    rng, schema, cpts, codes = _network(seed)
    codes[rng.random(codes.shape) < 0.15] = -1  # a mix of barren and other empty cells
    codes[:100] = np.abs(codes[:100])  # some complete rows (-1 -> 1 is a valid code)
    for target in range(len(schema.nodes)):
        got, got_log = predict_target(cpts, schema, target, codes)
        want, want_log = _by_elimination(cpts, schema, target, codes)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got_log, want_log, rtol=1e-12, atol=1e-12)


def test_complete_and_barren_rows_run_no_elimination(monkeypatch):
    _, schema, cpts, codes = _network(3)
    leaves = [v for v in range(len(schema.nodes))
              if not any(v in pa for pa in schema.parents)]
    calls = []
    monkeypatch.setattr(engine, "query", lambda *a: calls.append(a) or query(*a))
    codes[::2, leaves[-1]] = -1  # a leaf's empty cell is barren
    target = next(v for v in range(len(schema.nodes)) if v != leaves[-1])
    got, _ = predict_target(cpts, schema, target, codes)
    assert calls == []
    monkeypatch.undo()
    np.testing.assert_allclose(got, _by_elimination(cpts, schema, target, codes)[0],
                               rtol=0, atol=1e-12)


def test_a_changed_child_cpt_changes_the_answer():
    """The children's entries are used: perturbing one moves the vectorised answer away
    from elimination on the original CPTs (the comparison above can fail)."""
    _, schema, cpts, codes = _network(4)
    target = next(v for v, pa in enumerate(schema.parents)
                  if any(v in q for q in schema.parents))
    child = next(c for c, pa in enumerate(schema.parents) if target in pa)
    wrong = list(cpts)
    wrong[child] = np.roll(cpts[child], 1, axis=1)
    got, _ = predict_target(wrong, schema, target, codes)
    want, _ = _by_elimination(cpts, schema, target, codes)
    assert np.abs(got - want).max() > 1e-3


def test_a_row_of_probability_zero_is_nan_and_minus_infinity():
    schema = NetworkSchema(("a", "b"), (("0", "1"), ("0", "1")), ((), (0,)))
    cpts = [np.array([[0.5, 0.5]]), np.array([[1.0, 0.0], [1.0, 0.0]])]
    proba, log_p = predict_target(cpts, schema, 0, np.array([[0, 1], [0, 0]]))
    assert np.isnan(proba[0]).all() and log_p[0] == -np.inf
    np.testing.assert_allclose(proba[1], [0.5, 0.5])
    assert log_p[1] == 0.0


def _enumerate(cpts, schema, target, evidence):
    """P(target = t, evidence) by summing the full joint (the exact reference)."""
    card = schema.cardinality
    args = []
    for v, pa in enumerate(schema.parents):
        args += [np.asarray(cpts[v]).reshape([card[x] for x in (*pa, v)]), [*pa, v]]
    joint = np.einsum(*args, list(range(len(card))))  # axes in node order
    sliced = joint[tuple(evidence.get(x, slice(None)) for x in range(len(card)))]
    kept = [x for x in range(len(card)) if x not in evidence]
    return sliced.sum(axis=tuple(i for i, x in enumerate(kept) if x != target))


@pytest.mark.parametrize("seed", [5, 6])
def test_query_equals_the_summed_joint_when_its_steps_are_reused(seed):
    """Queries with the same target and evidence nodes reuse one elimination plan: each
    must still answer for its own evidence values."""
    rng, schema, cpts, _ = _network(seed, n=7)
    engine.clear_query_plans()
    for _ in range(3):
        for target in range(7):
            others = [v for v in range(7) if v != target]
            ev_nodes = rng.choice(others, size=2, replace=False)
            for _ in range(3):  # the same nodes, other values
                evidence = {int(v): int(rng.integers(schema.cardinality[v])) for v in ev_nodes}
                joint, p_e = query(cpts, schema, target, evidence)
                want = _enumerate(cpts, schema, target, evidence)
                np.testing.assert_allclose(joint, want, rtol=1e-12, atol=0)
                assert p_e == pytest.approx(want.sum(), rel=1e-12)


def test_query_on_a_chain_of_more_than_52_nodes():
    """Past 52 nodes einsum's letters are given per product (the chain's answer is the
    matrix product of its CPTs)."""
    rng = np.random.default_rng(7)
    n = 60
    schema = NetworkSchema(tuple(f"n{v}" for v in range(n)), (("a", "b"),) * n,
                           ((),) + tuple((v - 1,) for v in range(1, n)))
    cpts = [rng.dirichlet(np.ones(2), size=1 if v == 0 else 2) for v in range(n)]
    want = cpts[0][0]
    for v in range(1, n):
        want = want @ cpts[v]
    joint, p_e = query(cpts, schema, n - 1)
    np.testing.assert_allclose(joint, want, rtol=1e-12)
    assert p_e == pytest.approx(1.0)


def test_kept_tables_follow_a_cpt_changed_in_place():
    """The reshaped CPTs are kept between queries: a CPT changed in place, or replaced, must
    still change the next answer."""
    _, schema, cpts, _ = _network(8, n=5)
    cpts = [np.array(t, dtype=np.float64) for t in cpts]
    target = 4
    first, _ = query(cpts, schema, target)
    cpts[target][:] = np.roll(cpts[target], 1, axis=1)
    np.testing.assert_allclose(query(cpts, schema, target)[0],
                               _enumerate(cpts, schema, target, {}), rtol=1e-12)
    assert np.abs(query(cpts, schema, target)[0] - first).max() > 1e-6
    cpts[target] = np.roll(cpts[target], 1, axis=1)  # a new array in the same list
    np.testing.assert_allclose(query(cpts, schema, target)[0],
                               _enumerate(cpts, schema, target, {}), rtol=1e-12)
