"""Simulation-based calibration of a bayesian_network whose data have missing cells.

Complete rows are drawn from the complete declaration, the data's own missing cells emptied
again, and NUTS on the declaration with the missing cells summed out ranks the truth; one
declaration serves every simulation (the rows' multiplicities in ``pm.Data``), so the
swapping of data is checked here against a declaration of each data set alone. The negative
control reads every missing cell as the node's first state, and must fail.
"""

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.models.bayesian_network import BayesianNetwork, summed_rows
from bayescheck.models.errors import BayescheckError
from bayescheck.reports.calibrate import run_calibration

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SPEC = ('model = "bayesian_network"\n[data]\npath = "d.csv"\n'
        '[structure]\nedges = [["a", "b"]]\n')


@dataclass(frozen=True, eq=False)
class FilledIn(BayesianNetwork):
    """A wrong declaration: every missing cell read as its node's first state."""

    def declare_simulations(self, sources):
        filled = []
        for src in sources:
            frame = src.read_all()
            for n in self.nodes:
                frame[n] = frame[n].fillna(self.held_states[n][0])
            filled.append(DataSource.from_frame(frame))
        return super().declare_simulations(filled)


def holed_spec(folder, rows: int, fraction: float, seed: int = 0):
    """a -> b, both binary, ``fraction`` of the cells emptied at random (a fixed pattern)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, rows)
    b = np.where(rng.random(rows) < 0.8, a, 1 - a)
    frame = pd.DataFrame({"a": a, "b": b}).astype(str).mask(rng.random((rows, 2)) < fraction)
    frame.iloc[0] = ["0", "0"]  # every state seen
    frame.iloc[1] = ["1", "1"]
    frame.to_csv(folder / "d.csv", index=False)
    (folder / "s.toml").write_text(SPEC)
    return load_spec(folder / "s.toml")


def test_recount_gives_each_data_set_its_own_log_likelihood():
    rng = np.random.default_rng(3)
    card, parents = [2, 3, 2], ((), (0,), (0, 1))
    sets = []
    for _ in range(4):
        codes = np.column_stack([rng.integers(0, c, 25) for c in card])
        codes[rng.random(codes.shape) < 0.3] = -1
        sets.append(codes)
    union = summed_rows(np.concatenate(sets), card, parents)
    sizes = [2, 2 * 3, 2 * 3 * 2]
    for codes in sets:
        alone = summed_rows(codes, card, parents)
        complete, groups = union.recount(codes)
        swapped = type(union)(union.complete, complete,
                              [(c, w) for (c, _), w in zip(union.groups, groups, strict=True)],
                              union.summed, union.complete_rows, union.complete_index,
                              union.group_rows)
        for _ in range(3):
            logs = np.concatenate([np.log(rng.dirichlet(np.ones(card[v]), size=sizes[v] //
                                                        card[v]).ravel()) for v in range(3)])
            assert swapped.log_likelihood(logs) == pytest.approx(alone.log_likelihood(logs),
                                                                 rel=1e-12)
    # the multiplicities do depend on the data set, and a row never declared is refused
    assert not np.array_equal(union.recount(sets[0])[0], union.recount(sets[1])[0])
    with pytest.raises(ValueError, match="not among the rows declared"):
        union.recount(np.full((1, 3), 7))


def test_simulated_rows_keep_the_data_missing_cells(tmp_path):
    spec = holed_spec(tmp_path, 30, 0.3)
    held = spec.model.calibration_model(fit(spec))
    frame = spec.data.read_all()
    sim = held.simulated_frame(frame, {"x_a": np.ones(30, int), "x_b": np.zeros(30, int)})
    assert (sim.isna().to_numpy() == frame.isna().to_numpy()).all()
    assert set(sim["a"].dropna()) == {"1"} and set(sim["b"].dropna()) == {"0"}
    prior = held.prior_declaration(spec.data)
    assert {v.name for v in prior.observed_RVs} == {"x_a", "x_b"} and not prior.potentials


@pytest.mark.slow  # compiles log densities with PyTensor (FAST_COMPILE)
@pytest.mark.parametrize("holes", [0.4, 0.0])
def test_one_declaration_with_swapped_data_is_each_data_set_s_declaration(tmp_path, holes):
    """With missing cells the summed-out union (multiplicities swapped); with complete data
    the counts of the CPT entries (``cell_counts``)."""
    import pymc as pm

    spec = holed_spec(tmp_path, 30, 0.3)
    held = spec.model.calibration_model(fit(spec))
    rng = np.random.default_rng(5)
    frames = []
    for _ in range(3):
        f = spec.data.read_all().copy()
        f["a"] = rng.choice(["0", "1"], 30)
        f["b"] = rng.choice(["0", "1"], 30)
        frames.append(f.mask(rng.random(f.shape) < holes))
    sources = [DataSource.from_frame(f) for f in frames]
    model, updates = held.declare_simulations(sources)
    assert [p.name for p in model.potentials] == (["log_p_observed_cells"] if holes > 0
                                                  else ["log_p_counts"])
    assert not model.observed_RVs
    shared = model.compile_logp(mode="FAST_COMPILE")
    point = model.initial_point()
    fixed = {k: rng.normal(size=np.shape(v)) for k, v in point.items()}  # not uniform CPTs
    values = []
    for src, up in zip(sources, updates, strict=True):
        pm.set_data(up, model=model)
        alone = held.declare(src).compile_logp(mode="FAST_COMPILE")
        for _ in range(3):
            at = {k: rng.normal(size=np.shape(v)) for k, v in point.items()}
            assert float(shared(at)) == pytest.approx(float(alone(at)), rel=1e-10)
        values.append(float(shared(fixed)))
    assert len(set(values)) == 3  # the data sets differ, and so do their densities


@pytest.mark.nuts
def test_nuts_calibration_with_missing_cells_passes_and_filled_in_cells_fail(tmp_path):
    """Ten simulations of 40 rows with half the cells empty: the summed-out declaration
    passes; reading every empty cell as the first state puts the truth at the edge of the
    posterior nearly every time and fails. Each declaration is compiled once by nutpie and
    given each simulation's ``pm.Data`` with ``with_data``."""
    spec = holed_spec(tmp_path, 40, 0.5)
    right = run_calibration(spec, tmp_path / "right", simulations=10, seed=3, engine="nuts",
                            draws=99, tune=200)
    assert right.verdict == "pass"
    assert len(right.parameters) == 2 + 2 * 2 and sum(right.parameters[0].counts) == 10
    held = spec.model.calibration_model(fit(spec))
    wrong = FilledIn(**{f.name: getattr(held, f.name) for f in fields(held)})
    result = run_calibration(spec, tmp_path / "wrong", simulations=10, seed=3, engine="nuts",
                             draws=99, tune=200, fit_model=wrong)
    assert result.verdict == "fail"


@pytest.mark.parametrize("block", [None, 4])
def test_blocks_declare_the_same_simulations_in_slices(tmp_path, monkeypatch, block):
    """``block``: one declaration per slice of simulations, each of its own rows, with the
    data sets and NUTS seeds of the single declaration (sampling replaced by a recorder)."""
    import bayescheck.inference.checking.sampling
    import bayescheck.inference.checking.sbc
    from bayescheck.inference.checking.sbc import run_sbc

    declared, sampled = [], []
    original = BayesianNetwork.declare_simulations

    def spy(self, sources):
        declared.append([s.read_all() for s in sources])
        return original(self, sources)

    class Sample:
        idata = None

    def record(model, *, seed, **kwargs):
        sampled.append((seed, model))
        return Sample()

    monkeypatch.setattr(BayesianNetwork, "declare_simulations", spy)
    monkeypatch.setattr(bayescheck.inference.checking.sampling, "sample_nuts", record)
    monkeypatch.setattr(
        bayescheck.inference.checking.sbc,
        "_ranks",
        lambda idata, quantities, truth, draws: {m.name: 0 for m in quantities},
    )
    spec = holed_spec(tmp_path, 20, 0.3)
    run_sbc(spec, simulations=10, seed=2, engine="nuts", draws=9, block=block)
    assert [len(d) for d in declared] == ([10] if block is None else [4, 4, 2])
    assert [seed for seed, _ in sampled] == list(range(2, 12))
    frames = [f for d in declared for f in d]
    reference = holed_spec(tmp_path, 20, 0.3)  # the frames of an unblocked run, for equality
    declared.clear()
    run_sbc(reference, simulations=10, seed=2, engine="nuts", draws=9)
    for f, g in zip(frames, declared[0], strict=True):
        pd.testing.assert_frame_equal(f, g)
    models = [m for _, m in sampled[:10]]  # each block's simulations sample its declaration
    blocks = [0] * 10 if block is None else [0] * 4 + [1] * 4 + [2] * 2
    order = list(dict.fromkeys(map(id, models)))
    assert [order.index(id(m)) for m in models] == blocks
    with pytest.raises(BayescheckError, match="block must be at least 1"):
        run_sbc(spec, simulations=10, engine="nuts", block=0)


def test_block_is_refused_where_it_would_do_nothing(tmp_path, examples_dir):
    """Not silently ignored: the analytic engine, and a model whose NUTS simulations are
    declared one at a time."""
    from bayescheck.inference.checking.sbc import run_sbc

    spec = holed_spec(tmp_path, 20, 0.3)
    with pytest.raises(BayescheckError, match="not to bayesian_network with the analytic"):
        run_sbc(spec, simulations=10, engine="analytic", block=4)
    coin = load_spec(f"{examples_dir}/beta_bernoulli/coin.toml")
    with pytest.raises(BayescheckError, match="not to beta_bernoulli with the nuts engine"):
        run_sbc(coin, simulations=10, engine="nuts", block=4)


def test_calibrate_cli_passes_block_on_and_refuses_zero(tmp_path, monkeypatch, capsys):
    import bayescheck.reports.calibrate
    from bayescheck.reports.cli import main

    holed_spec(tmp_path, 20, 0.3)
    seen = {}

    def record(spec, out, **kwargs):
        seen.update(kwargs)
        raise BayescheckError("recorded")

    monkeypatch.setattr(bayescheck.reports.calibrate, "run_calibration", record)
    spec = str(tmp_path / "s.toml")
    assert main(["calibrate", spec, "--engine", "nuts", "--block", "0", "--quiet"]) == 2
    assert "--block must be >= 1, got 0" in capsys.readouterr().err and not seen
    main(["calibrate", spec, "--engine", "nuts", "--block", "5", "--quiet",
          "--out", str(tmp_path / "o")])
    assert seen["block"] == 5
    main(["calibrate", spec, "--engine", "nuts", "--quiet", "--out", str(tmp_path / "o")])
    assert seen["block"] is None
