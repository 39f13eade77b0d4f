"""The cross-check of bayesian_network: the declaration's query sums equal the engine's at any
theta (no sampling), NUTS agrees with every exact CPT marginal and query mean on the Asia
example, and wrong oracles fail: a CPT entry off by a factor, the query ratio compared as if
it were exact, plug-in maximum-likelihood sums.
"""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.checking.compare import compare_idata
from bayescheck.inference.engines.networks import query
from bayescheck.inference.families import fit
from bayescheck.inference.families.bayesian_network import network_schema
from bayescheck.models import load_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bayesian_network" / "asia.toml"


@pytest.mark.slow  # compiles the PyMC declaration's functions: 5-19 s
def test_declared_query_sums_equal_variable_elimination_at_random_cpts():
    """The PyMC deterministics (enumeration) and the engine (elimination) at the same theta."""

    spec = load_spec(EXAMPLE)
    model = spec.model
    result = fit(spec)
    states = {n: tuple(c["states"]) for n, c in result.posterior.parameters["cpts"].items()}
    schema = network_schema(model, states)
    pm_model = model.declare(spec.data)
    rng = np.random.default_rng(0)
    cpts = [rng.dirichlet(np.ones(r), size=schema.n_configs(v))
            for v, r in enumerate(schema.cardinality)]
    names = [f"joint_{q.name}" for q in model.queries]
    names += [f"evidence_{q.name}" for q in model.queries if q.evidence]
    values = pm_model.compile_fn([pm_model[n] for n in names], inputs=[
        pm_model[f"cpt_{n}"] for n in model.nodes], on_unused_input="ignore",
        point_fn=False)(*cpts)
    got = dict(zip(names, values, strict=True))
    index = {n: i for i, n in enumerate(model.nodes)}
    for q in model.queries:
        ev = {index[n]: states[n].index(s) for n, s in q.evidence}
        joint, p_e = query(cpts, schema, index[q.target], ev)
        np.testing.assert_allclose(got[f"joint_{q.name}"], joint, rtol=1e-12)
        if q.evidence:
            assert float(got[f"evidence_{q.name}"]) == pytest.approx(p_e, rel=1e-12)
    # and at other CPTs the sums move (the comparison is not vacuous)
    cpts[model.nodes.index("lung")] = cpts[model.nodes.index("lung")][:, ::-1].copy()
    moved = pm_model.compile_fn([pm_model[names[0]]], inputs=[
        pm_model[f"cpt_{n}"] for n in model.nodes], on_unused_input="ignore",
        point_fn=False)(*cpts)[0]
    assert not np.allclose(moved, got[names[0]], rtol=1e-3)


@pytest.fixture(scope="module")
def asia(tmp_path_factory):
    from bayescheck.reports.check import run_check

    out = tmp_path_factory.mktemp("asia")
    return run_check(load_spec(EXAMPLE), out, report=False)


@pytest.mark.nuts
def test_asia_passes_every_cpt_entry_and_query_sum(asia):
    assert asia.verdict == "pass", asia.comparison.summary()
    names = [p.name for p in asia.comparison.parameters]
    assert "cpt_dysp[bronc=yes, either=no, yes]" in names
    assert "joint_lung_given_smoker_xray[yes]" in names
    assert "evidence_tub_given_asia_dysp" in names
    # 36 CPT entries with a full marginal (5 statistics each) + 3 + 3 + 2 query sums with an
    # exact mean only
    n_cpt = sum(1 for p in asia.comparison.parameters if p.name.startswith("cpt_"))
    assert n_cpt == 36
    assert asia.comparison.n_comparisons == 36 * 5 + 8


@pytest.mark.nuts
def test_a_cpt_entry_off_by_a_factor_fails(asia):
    """P(lung = yes | smoke = yes) with its Beta's first parameter doubled (mean ~1.9x)."""
    from bayescheck.inference.engines.dist import Dist

    name = "cpt_lung[smoke=yes, yes]"
    wrong = []
    for m in asia.fit.posterior.marginals:
        if m.name == name:
            a, b = m.dist.args
            m = replace(m, dist=Dist("beta", 2 * a, b))
        wrong.append(m)
    comparison = compare_idata(wrong, asia.sample.idata)
    assert comparison.verdict == "fail"
    assert [p.name for p in comparison.parameters if p.verdict == "fail"] == [name]


@pytest.mark.nuts
def test_the_conditional_ratio_is_not_the_joint_mean(asia):
    """P(lung | smoke, xray) (the ratio) in place of the joint sum fails: only the sums have
    exact posterior means."""
    q = asia.fit.posterior.parameters["query"][0]
    wrong = [replace(m, exact_mean=q["probabilities"][m.coords[f"{q['name']}__target"]])
             if m.var == f"joint_{q['name']}" else m for m in asia.fit.posterior.marginals]
    assert compare_idata(wrong, asia.sample.idata).verdict == "fail"


@pytest.mark.nuts
def test_query_sum_moved_by_five_mcse_fails(asia):
    row = next(p for p in asia.comparison.parameters if p.name == "evidence_tub_given_asia_dysp")
    direction = math.copysign(1.0, row.sampled["mean"] - row.analytic["mean"])
    moved = row.sampled["mean"] - direction * 5 * row.mcse["mean"]
    wrong = [replace(m, exact_mean=moved) if m.name == row.name else m
             for m in asia.fit.posterior.marginals]
    comparison = compare_idata(wrong, asia.sample.idata)
    assert [p.name for p in comparison.parameters if p.verdict == "fail"] == [row.name]
