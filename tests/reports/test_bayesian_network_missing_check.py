"""`check` of a bayesian_network whose data have missing cells.

The declaration sums every row's missing cells out; its log density must equal a brute-force
enumeration of the full joint (numpy, independent of the grouping, the barren-node pruning
and PyTensor) at several CPT values, and, in the sampler's coordinates, differ from EM's
objective by a constant. NUTS on rows forward-sampled from pgmpy's Asia network with 20 % of
the cells removed must place the EM estimate at the posterior mode (pass), and a perturbed
estimate, or EM run on other data, must fail. A pattern too large to sum out is refused.
"""

import gzip
import itertools
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.engines.network_em import log_objective
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.models.bayesian_network import MAX_SUMMED, SUMMED_DECLARATION, summed_rows

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bayesian_network"

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def holed_asia(folder: Path, rows: int, fraction: float, seed: int) -> Path:
    """Rows forward-sampled from pgmpy's Asia network, cells removed at random; the spec."""
    pgmpy = pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader

    path = os.path.join(os.path.dirname(pgmpy.__file__), "utils", "example_models",
                        "asia.bif.gz")
    with gzip.open(path) as fh:
        network = BIFReader(string=fh.read().decode()).get_model()
    data = network.simulate(rows, seed=seed, show_progress=False).astype(str)
    data = data[["asia", "smoke", "tub", "lung", "bronc", "either", "xray", "dysp"]]
    holed = data.mask(np.random.default_rng(seed).random(data.shape) < fraction)
    folder.mkdir(parents=True, exist_ok=True)
    holed.to_csv(folder / "asia.csv", index=False)
    # the example's structure and prior, without its queries (a small sample may never see
    # asia = yes, an evidence value of one of them)
    text = (EXAMPLE / "asia.toml").read_text()
    (folder / "asia.toml").write_text(text[:text.index("[[query]]")])
    return folder / "asia.toml"


def brute_force_log_likelihood(frame: pd.DataFrame, model, states, cpts) -> float:
    """sum over rows of log sum over the full joint's configurations matching the row."""
    nodes, parents = model.nodes, model.parents
    grids = np.array(list(itertools.product(*(range(len(states[n])) for n in nodes))))
    log_joint = np.zeros(len(grids))
    for v in range(len(nodes)):
        row = np.zeros(len(grids), np.int64)
        for p in parents[v]:
            row = row * len(states[nodes[p]]) + grids[:, p]
        log_joint += np.log(cpts[v][row, grids[:, v]])
    total = 0.0
    for _, r in frame.iterrows():
        match = np.ones(len(grids), bool)
        for v, n in enumerate(nodes):
            if isinstance(r[n], str):
                match &= grids[:, v] == states[n].index(r[n])
        total += np.log(np.exp(log_joint[match]).sum())
    return total


@pytest.mark.slow  # compiles the declaration's log density with PyTensor
def test_summed_out_log_density_equals_brute_force_enumeration(tmp_path):
    spec_path = holed_asia(tmp_path, 150, 0.3, seed=3)
    spec = load_spec(spec_path)
    model = spec.model
    frame = pd.read_csv(tmp_path / "asia.csv", dtype=str, keep_default_na=False).replace(
        "", np.nan)
    states = model.states(spec.data)
    pm_model = model.declare(spec.data)
    assert [p.name for p in pm_model.potentials] == ["log_p_observed_cells"]
    assert not pm_model.observed_RVs
    inputs = [pm_model[f"cpt_{n}"] for n in model.nodes]
    potential = pm_model.compile_fn(pm_model["log_p_observed_cells"], inputs=inputs,
                                    point_fn=False, mode="FAST_COMPILE", on_unused_input="ignore")
    rng = np.random.default_rng(0)
    for _ in range(4):
        cpts = [rng.dirichlet(np.ones(len(states[n])), size=len(model.config_labels(v, states)))
                for v, n in enumerate(model.nodes)]
        brute = brute_force_log_likelihood(frame, model, states, cpts)
        assert float(potential(*cpts)) == pytest.approx(brute, rel=1e-10)
    # and the comparison can fail: the rows' hidden cells not summed out (complete rows only)
    wrong = brute_force_log_likelihood(frame.dropna(), model, states, cpts)
    assert abs(float(potential(*cpts)) - wrong) > 1.0


def test_barren_missing_nodes_are_dropped_and_the_limit_is_per_pattern():
    # a -> b -> c: a row missing b and c (both barren) sums over nothing; one missing a and b
    # with c observed sums over both
    parents = ((), (0,), (1,))
    codes = np.array([[0, -1, -1], [-1, -1, 1], [1, 0, 1], [1, 0, 1]])
    rows = summed_rows(codes, [2, 3, 2], parents)
    assert sorted(rows.summed) == [(), (0, 1)]
    assert rows.complete_counts.sum() == 2 * 3  # the complete row twice, three factors
    with pytest.raises(ValueError, match="pattern: 6 configurations") as info:
        summed_rows(codes, [2, 3, 2], parents, max_summed=5)
    assert info.value.nodes == (0, 1) and info.value.row == 1


@pytest.mark.slow  # compiles the declaration's log density with PyTensor
def test_em_objective_is_the_declared_density_in_the_sampler_coordinates(tmp_path):
    """Up to a constant, and its gradient vanishes at the EM estimate: the estimate is the
    mode of the declared posterior where NUTS samples (log-ratio coordinates)."""
    import pytensor.tensor as pt

    spec = load_spec(holed_asia(tmp_path, 150, 0.2, seed=4))
    result = fit(spec)
    assert result.record.info["declaration"] == SUMMED_DECLARATION
    kw = result.record.posterior_checks.keywords
    pm_model = spec.model.declare(spec.data)
    logp = pm_model.compile_logp(jacobian=True, mode="FAST_COMPILE")
    dlogp = pm_model.compile_dlogp(jacobian=True, mode="FAST_COMPILE")

    def point(cpts):
        out = {}
        for n, c in zip(spec.model.nodes, cpts, strict=True):
            rv = pm_model[f"cpt_{n}"]
            value = pm_model.rvs_to_values[rv]
            y = pm_model.rvs_to_transforms[rv].forward(pt.as_tensor(c), *rv.owner.inputs[2:])
            out[value.name] = y.eval(mode="FAST_COMPILE")
        return out

    at = point(result.posterior.state.cpts)
    assert np.max(np.abs(dlogp(at))) < 1e-5
    rng = np.random.default_rng(1)
    diffs = []
    for cpts in [result.posterior.state.cpts] + [
        [rng.dirichlet(3 * np.ones(c.shape[1]), size=len(c)) for c in result.posterior.state.cpts]
        for _ in range(3)
    ]:
        diffs.append(float(logp(point(cpts))) - float(
            log_objective(list(cpts), kw["complete"], kw["missing"], kw["prior"])))
    np.testing.assert_allclose(diffs, diffs[0], atol=1e-8)
    # away from the estimate the gradient does not vanish
    assert (
        np.max(np.abs(dlogp(point([np.roll(c, 1, axis=1) for c in result.posterior.state.cpts]))))
        > 1
    )


def test_a_pattern_too_large_to_sum_out_is_refused_naming_it(tmp_path, capsys):
    from bayescheck.reports.cli import main

    rng = np.random.default_rng(0)
    # root a (70 states) -> b (70 states) -> c: a row missing a and b with c seen has 4900
    a = rng.integers(0, 70, 400)
    frame = pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, 400)) % 70,
                          "c": rng.integers(0, 2, 400)}).astype(str)
    frame.loc[7, ["a", "b"]] = ""
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "bayesian_network"\n[data]\npath = "d.csv"\n'
                                     '[structure]\nedges = [["a", "b"], ["b", "c"]]\n')
    code = main(["check", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "row 8: the row misses the nodes a, b together" in err
    assert f"4900 joint configurations to sum out in the declaration, more than {MAX_SUMMED}" \
        in err


# ---- NUTS -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def asia_missing(tmp_path_factory):
    from bayescheck.reports.check import run_check

    folder = tmp_path_factory.mktemp("asia_missing")
    spec = load_spec(holed_asia(folder, 300, 0.2, seed=11))
    return spec, run_check(spec, folder / "out", draws=500, tune=500, chains=2, report=False)


def _judge(spec, check, estimates_cpts):
    from bayescheck.inference.checking.compare import compare_estimates_idata
    from bayescheck.inference.families.bayesian_network import em_estimates

    states = {n: tuple(c["states"]) for n, c in check.fit.posterior.parameters["cpts"].items()}
    fit_ = check.fit
    wrong = replace(fit_, posterior=replace(
        fit_.posterior, estimates=em_estimates(spec.model, states, estimates_cpts),
        state=replace(fit_.posterior.state, cpts=tuple(estimates_cpts))))
    judged = compare_estimates_idata(wrong.posterior.estimates, check.estimates_sample.idata)
    return fit_.record.posterior_checks(wrong, judged, check.estimates_sample.idata, spec)


@pytest.mark.nuts
def test_em_estimate_of_asia_with_missing_cells_sits_at_the_posterior_mode(asia_missing):
    import json

    spec, check = asia_missing
    assert check.estimates.verdict == "pass", check.estimates.summary()
    assert check.verdict == "pass" and check.comparison is None
    rows = {r.name: r for r in check.estimates.parameters}
    mode = rows["log posterior density (mode)"]
    assert mode.verdict == "pass" and mode.sampled["best_draw_minus_estimate"] < 0
    assert "cpt_lung[smoke=yes, yes]" in rows
    summary = json.loads((check.out / "summary.json").read_text())
    assert summary["declaration"] == SUMMED_DECLARATION
    assert summary["observed"] == []


@pytest.mark.nuts
def test_a_perturbed_em_cpt_fails(asia_missing):
    """P(lung | smoke = yes) moved by 3 posterior sds: outside the 99 % interval, and draws
    of higher density than it."""
    spec, check = asia_missing
    cpts = [c.copy() for c in check.fit.posterior.state.cpts]
    v = spec.model.nodes.index("lung")
    row = next(r for r in check.estimates.parameters if r.name == "cpt_lung[smoke=yes, yes]")
    j = check.fit.posterior.parameters["cpts"]["lung"]["rows"].index("smoke=yes")
    k = check.fit.posterior.parameters["cpts"]["lung"]["states"].index("yes")
    cpts[v][j, k] += 3 * row.sampled["sd"]
    cpts[v][j, 1 - k] = 1 - cpts[v][j, k]
    judged = _judge(spec, check, cpts)
    assert judged.verdict == "fail"
    failed = {r.name for r in judged.parameters if r.verdict == "fail"}
    assert "log posterior density (mode)" in failed
    assert failed <= {"log posterior density (mode)", "cpt_lung[smoke=yes, yes]",
                      "cpt_lung[smoke=yes, no]"}


@pytest.mark.nuts
def test_em_run_on_other_data_fails(asia_missing, tmp_path):
    """EM on another sample of Asia (the same size and holes), with the node states held at
    the checked fit's (a cell of a state the fit never saw is left empty)."""
    spec, check = asia_missing
    states = {n: tuple(c["states"]) for n, c in check.fit.posterior.parameters["cpts"].items()}
    path = holed_asia(tmp_path, 300, 0.2, seed=12)
    frame = pd.read_csv(tmp_path / "asia.csv", dtype=str)
    for n in frame.columns:
        frame[n] = frame[n].where(frame[n].isin(states[n]))
    frame.to_csv(tmp_path / "asia.csv", index=False)
    other_spec = load_spec(path)
    other = fit(replace(other_spec, model=replace(other_spec.model, held_states=states)))
    judged = _judge(spec, check, list(other.posterior.state.cpts))
    assert judged.verdict == "fail"
    assert next(r for r in judged.parameters
                if r.name == "log posterior density (mode)").verdict == "fail"
