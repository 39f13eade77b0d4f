"""The count declarations equal the row-by-row ones up to a constant.

With complete data a network, categorical naive Bayes and a one-dependence model declare their
likelihood through the counts of their tables' cells (one potential). Here both declarations
are compiled with PyMC's ``model.compile_logp()`` and evaluated at random points of the
sampler's (unconstrained) space: the difference must be the same at every point (to ~1e-9 of
the log density), so the posteriors are the same. The row-by-row declarations are
``prior_declaration`` (network, naive Bayes) and, for AODE, one written here. Negative
controls: a count off by one (one cell of one row changed) and a CPT row permuted (two states
of a node swapped where its parents take one configuration) break the constancy.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.models.bayesian_network import BayesianNetwork
from bayescheck.models.counts import dirichlet_tables
from bayescheck.models.naive_bayes import NaiveBayes

pytestmark = [pytest.mark.slow,  # compiles log densities with PyTensor
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RTOL = 1e-9


def differences(a, b, points: int = 6, seed: int = 0) -> tuple[np.ndarray, float]:
    """``logp_a - logp_b`` at random unconstrained points, and the size of the log density."""
    assert sorted(a.initial_point()) == sorted(b.initial_point())
    fa, fb = a.compile_logp(mode="FAST_COMPILE"), b.compile_logp(mode="FAST_COMPILE")
    rng = np.random.default_rng(seed)
    shapes = {k: np.shape(v) for k, v in a.initial_point().items()}
    out, scale = [], 0.0
    for _ in range(points):
        at = {k: rng.normal(scale=1.5, size=s) for k, s in shapes.items()}
        la, lb = float(fa(at)), float(fb(at))
        out.append(la - lb)
        scale = max(scale, abs(lb))
    return np.array(out), scale


def is_constant(d: np.ndarray, scale: float) -> bool:
    return float(np.ptp(d)) <= RTOL * scale


def test_stick_breaking_tables_have_the_dirichlet_density():
    """Change of variables: the Betas' density over |d theta / d v| is Dirichlet(alpha)'s,
    row by row, at random points, for every table of one declaration (a row of one state is
    the constant 1); ``log_cells`` is the log of the tables; with the concentrations reversed
    the density is not the Dirichlet's."""
    import pymc as pm
    from scipy import stats

    alpha = np.array([[0.7, 2.0, 1.3, 3.1], [1.0, 1.0, 1.0, 1.0]])
    weights = np.array([0.5, 4.0])
    with pm.Model() as model:
        declared = dirichlet_tables([("t", alpha, None), ("one", np.ones((3, 1)), None),
                                     ("w", weights, None)])
    stick = model["stick_fractions"]
    assert [v.name for v in model.free_RVs] == ["stick_fractions"]
    values = model.compile_fn([model["t"], model["one"], model["w"], declared.log_cells],
                              inputs=[stick], point_fn=False)
    rng = np.random.default_rng(4)
    for _ in range(5):
        v = rng.uniform(0.02, 0.98, size=2 * 3 + 1)
        beta_logp = pm.logp(stick, v).eval()
        t, one, w, log_cells = values(v)
        np.testing.assert_array_equal(one, np.ones((3, 1)))
        np.testing.assert_allclose(log_cells, np.log(np.concatenate(
            [t.ravel(), one.ravel(), w])), rtol=1e-13, atol=1e-14)
        for j, row in enumerate(v[:6].reshape(2, 3)):
            # d theta_{<r-1} / d v is triangular, diagonal prod_{j<k} (1 - v_j)
            log_jacobian = np.log(np.cumprod(1 - row)[:-1]).sum()
            expected = stats.dirichlet.logpdf(t[j], alpha[j])
            got = beta_logp[3 * j:3 * j + 3].sum() - log_jacobian
            assert got == pytest.approx(expected, rel=1e-12)
        assert beta_logp[6] == pytest.approx(stats.dirichlet.logpdf(w, weights), rel=1e-12)
        assert t.sum(axis=1) == pytest.approx([1.0, 1.0], rel=1e-14)
        wrong = stats.dirichlet.logpdf(t[0], alpha[0, ::-1])
        assert abs(beta_logp[:3].sum() - np.log(np.cumprod(1 - v[:3])[:-1]).sum() - wrong) > 1e-3


def network_frame(rows: int, seed: int = 1) -> tuple[BayesianNetwork, pd.DataFrame]:
    """a -> c <- b, c -> d; d has one state only (a point-mass CPT)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, rows)
    b = rng.integers(0, 2, rows)
    c = (a + b + (rng.random(rows) < 0.3)) % 3
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "d": np.zeros(rows, int)}).astype(str)
    net = BayesianNetwork(nodes=("a", "b", "c", "d"),
                          edges=(("a", "c"), ("b", "c"), ("c", "d")))
    return net, frame


def test_network_counts_equal_the_rows_and_a_wrong_count_breaks_it():
    net, frame = network_frame(300)
    source = DataSource.from_frame(frame)
    counted, rows = net.declare(source), net.prior_declaration(source)
    assert [p.name for p in counted.potentials] == ["log_p_counts"]
    assert not counted.observed_RVs and len(rows.observed_RVs) == 4
    d, scale = differences(counted, rows)
    assert is_constant(d, scale), (d, scale)
    assert abs(d[0]) <= RTOL * scale  # the Categorical rows drop no constant either

    # a count off by one: one cell of one row changed
    off = frame.copy()
    off.loc[0, "c"] = str((int(off.loc[0, "c"]) + 1) % 3)
    d, scale = differences(net.declare(DataSource.from_frame(off)), rows)
    assert not is_constant(d, scale)
    # a CPT row permuted: c's states 0 and 1 swapped where (a, b) = (1, 0)
    swapped = frame.copy()
    where = (swapped["a"] == "1") & (swapped["b"] == "0")
    swapped.loc[where, "c"] = swapped.loc[where, "c"].map({"0": "1", "1": "0", "2": "2"})
    assert not swapped.equals(frame)
    d, scale = differences(net.declare(DataSource.from_frame(swapped)), rows)
    assert not is_constant(d, scale)


def test_network_cell_counts_are_the_counts_of_each_cpt_row():
    net, frame = network_frame(200)
    source = DataSource.from_frame(frame)
    states = net.states(source)
    codes = np.concatenate([net.codes(b, states) for b in source.batches()])
    counts = net.cell_counts(codes, states)
    # c's table: rows (a, b) mixed radix with a first, columns c's states; counted by pandas
    c = counts[3 + 2:3 + 2 + 6 * 3].reshape(6, 3)
    expected = pd.crosstab([frame["a"], frame["b"]], frame["c"]).reindex(
        pd.MultiIndex.from_product([states["a"], states["b"]]), fill_value=0)
    np.testing.assert_array_equal(c, expected.to_numpy())
    assert counts.sum() == 4 * len(frame)


def test_network_simulations_share_one_declaration_of_counts():
    """Calibration's one declaration: each data set's counts swapped in ``cell_counts``
    equals that data set's own declaration; data sets of different lengths are fine."""
    import pymc as pm

    net, frame = network_frame(60)
    states = net.states(DataSource.from_frame(frame))
    held = BayesianNetwork(nodes=net.nodes, edges=net.edges, held_states=states)
    sources = [DataSource.from_frame(network_frame(n, seed)[1])
               for n, seed in ((60, 2), (45, 3), (80, 4))]
    model, updates = held.declare_simulations(sources)
    assert [p.name for p in model.potentials] == ["log_p_counts"]
    values = []
    for src, up in zip(sources, updates, strict=True):
        pm.set_data(up, model=model)
        d, scale = differences(model, held.declare(src), points=3)
        assert np.abs(d).max() <= RTOL * scale
        values.append(float(model.compile_logp(mode="FAST_COMPILE")(model.initial_point())))
    assert len(set(values)) == 3


def naive_frame(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.choice(["u", "v", "w"], rows)
    return pd.DataFrame({"f": rng.choice(["p", "q"], rows),
                         "g": np.where(y == "u", rng.choice(["r", "s", "t"], rows), "r"),
                         "h": rng.normal(size=rows) + (y == "v"),
                         "y": y})


@pytest.mark.parametrize("kinds", [("categorical", "categorical"),
                                   ("categorical", "categorical", "gaussian")])
def test_naive_bayes_counts_equal_the_rows_and_a_wrong_count_breaks_it(kinds):
    frame = naive_frame(250)
    features = ("f", "g", "h")[:len(kinds)]
    model = NaiveBayes(features=features, kinds=kinds, target="y",
                       queries=({"f": "p", "g": "s", "h": 0.5},), query_names=("q",))
    source = DataSource.from_frame(frame)
    counted, rows = model.declare(source), model.prior_declaration(source)
    assert [p.name for p in counted.potentials] == ["log_p_counts"]
    assert [v.name for v in counted.observed_RVs] == (["x_gaussian"] if "gaussian" in kinds
                                                       else [])
    d, scale = differences(counted, rows)
    assert is_constant(d, scale), (d, scale)
    off = frame.copy()
    off.loc[3, "y"] = {"u": "v", "v": "w", "w": "u"}[off.loc[3, "y"]]  # one class count
    d, scale = differences(model.declare(DataSource.from_frame(off)), rows)
    assert not is_constant(d, scale)
    swapped = frame.copy()  # feature f's row of class "w" permuted
    where = swapped["y"] == "w"
    swapped.loc[where, "f"] = swapped.loc[where, "f"].map({"p": "q", "q": "p"})
    d, scale = differences(model.declare(DataSource.from_frame(swapped)), rows)
    assert not is_constant(d, scale)


def test_naive_bayes_simulations_share_one_declaration():
    import pymc as pm

    frame = naive_frame(40)
    base = NaiveBayes(features=("f", "g", "h"), kinds=("categorical",) * 2 + ("gaussian",),
                      target="y")
    held = base.calibration_model(fit_of(base, frame))
    sources = [DataSource.from_frame(naive_frame(40, seed)) for seed in (1, 2, 3)]
    model, updates = held.declare_simulations(sources)
    values = []
    for src, up in zip(sources, updates, strict=True):
        pm.set_data(up, model=model)
        d, scale = differences(model, held.declare(src), points=3)
        assert np.abs(d).max() <= RTOL * scale
        values.append(float(model.compile_logp(mode="FAST_COMPILE")(model.initial_point())))
    assert len(set(values)) == 3


def fit_of(model, frame):
    from bayescheck.models.spec import Spec

    return fit(Spec(model=model, data=DataSource.from_frame(frame)))


def aode_rows(model, source, fit_result):
    """AODE declared row by row, written here: per super-parent the observed cell (class,
    x_s) ~ Categorical(joint_s) and every other feature ~ Categorical(cond_{s,f}[cell]).
    The tables in the declaration's coordinates (stick-breaking, tested above)."""
    import pymc as pm

    classes = tuple(fit_result.posterior.parameters["classes"])
    categories = {f: tuple(v) for f, v in fit_result.posterior.parameters["categories"].items()}
    frame = source.read_all()
    y = np.searchsorted(classes, frame[model.target].astype(str).to_numpy())
    X = np.column_stack([np.searchsorted(categories[f], frame[f].astype(str).to_numpy())
                         for f in model.features])
    K = len(classes)
    tables, observed = [], []
    with pm.Model() as rows:
        for s in model.aode_super_parents(fit_result):
            i = model.features.index(s)
            Ni = len(categories[s])
            cell = y * Ni + X[:, i]
            tables.append((f"joint_{s}", np.full(K * Ni, model.concentration), None))
            observed.append((cell, None))
            for j, f in enumerate(model.features):
                if j != i:
                    tables.append((f"cond_{s}_{f}", np.full(
                        (K * Ni, len(categories[f])), model.concentration), None))
                    observed.append((X[:, j], cell))
        for (name, _, _), table, (values, given) in zip(
                tables, dirichlet_tables(tables).tables, observed, strict=True):
            pm.Categorical(f"obs_{name}", p=table if given is None else table[given],
                           observed=values)
    return rows


def test_aode_counts_equal_the_rows_and_a_wrong_count_breaks_it():
    spec = load_spec(EXAMPLES / "semi_naive_bayes" / "play_tennis_aode.toml")
    result = fit(spec)
    counted = spec.model.declare(spec.data, fit=result)
    assert [p.name for p in counted.potentials] == ["log_p_counts"]
    assert not counted.observed_RVs
    rows = aode_rows(spec.model, spec.data, result)
    d, scale = differences(counted, rows)
    assert is_constant(d, scale), (d, scale)
    frame = spec.data.read_all()
    off = frame.iloc[1:]  # every count of the first row's cells off by one
    d, scale = differences(counted, aode_rows(spec.model, DataSource.from_frame(off), result))
    assert not is_constant(d, scale)
    f = spec.model.features[-1]
    labels = sorted(frame[f].astype(str).unique())
    swapped = frame.copy()
    where = frame[spec.model.target].astype(str) == sorted(
        frame[spec.model.target].astype(str).unique())[0]
    swapped.loc[where, f] = frame.loc[where, f].astype(str).map(
        {labels[0]: labels[1], labels[1]: labels[0]}).fillna(frame.loc[where, f].astype(str))
    d, scale = differences(counted, aode_rows(spec.model, DataSource.from_frame(swapped),
                                              result))
    assert not is_constant(d, scale)
