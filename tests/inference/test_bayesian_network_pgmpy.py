"""bayesian_network against pgmpy, the reference library (a peer in tests only).

Data are forward-sampled from pgmpy's example networks (Asia, and Child: 20 nodes, up to 6
states, up to 2 parents). CPTs must equal pgmpy's ``BayesianEstimator`` with the same
Dirichlet / BDeu prior, queries its ``VariableElimination`` on those CPTs, the log evidence
its K2 / BDeu structure scores. The comparison helpers are shown to flag a CPT entry off by a
factor and a wrong query answer.
"""

import gzip
import itertools
import os

import numpy as np
import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec

pgmpy = pytest.importorskip("pgmpy")

# Only pgmpy's current API is used here: a deprecation warning fails the test, except the
# one pgmpy's own imports raise (pgmpy.inference imports its deprecated StructureScore).
# slow: pgmpy's estimators and inference take seconds per network (the engine's own tests,
# tests/inference/engines/test_networks.py, stay in the fast subset)
pytestmark = [pytest.mark.filterwarnings("error::FutureWarning"),
              pytest.mark.filterwarnings("error::DeprecationWarning"),
              pytest.mark.filterwarnings(
                  "ignore:`pgmpy.estimators.StructureScore` is deprecated:FutureWarning"),
              pytest.mark.slow]


def example_network(name):
    from pgmpy.readwrite import BIFReader

    path = os.path.join(os.path.dirname(pgmpy.__file__), "utils", "example_models",
                        f"{name}.bif.gz")
    with gzip.open(path) as fh:
        return BIFReader(string=fh.read().decode()).get_model()


def sampled_spec(tmp_path, network, n, seed, prior, queries=()):
    data = network.simulate(n, seed=seed, show_progress=False).astype(str)
    # states spelt "None" (Child's DuctFlow, ...) stay states: the data are read as text
    data.to_csv(tmp_path / "data.csv", index=False)
    edges = ", ".join(f'["{a}", "{b}"]' for a, b in network.edges())
    body = ['model = "bayesian_network"', '[data]', 'path = "data.csv"', '[structure]',
            f"edges = [{edges}]", "[prior]", prior]
    for i, (target, evidence) in enumerate(queries):
        ev = ", ".join(f'"{k}" = "{v}"' for k, v in evidence.items())
        body += ["[[query]]", f'name = "q{i}"', f'target = "{target}"', f"evidence = {{ {ev} }}"]
    (tmp_path / "spec.toml").write_text("\n".join(body) + "\n")
    return load_spec(tmp_path / "spec.toml"), data


def pgmpy_fit(network, data, state_names=None, **estimator):
    """pgmpy's Bayesian estimate of ``network``'s CPTs on ``data`` (its current API:
    ``DiscreteBayesianNetwork.fit`` with a ``DiscreteBayesianEstimator``); ``state_names``
    declares states, as our ``[states]`` does (default: the states of the data)."""
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    model = DiscreteBayesianNetwork(list(network.edges()))
    model.add_nodes_from(network.nodes())
    return model.fit(data, estimator=DiscreteBayesianEstimator(state_names=state_names,
                                                               **estimator))


def cpt_mismatches(ours: dict, model, rtol=1e-10) -> list[str]:
    """Entries of our posterior-mean CPTs that differ from pgmpy's fitted CPTs."""
    bad = []
    for node, entry in ours.items():
        cpd = model.get_cpds(node)
        for j, row in enumerate(entry["rows"]):
            parents = {} if row == "(root)" else dict(p.split("=", 1) for p in row.split(", "))
            for k, state in enumerate(entry["states"]):
                theirs = cpd.get_value(**{node: state, **parents})
                if not np.isclose(entry["mean"][j][k], theirs, rtol=rtol, atol=0):
                    bad.append(f"{node}[{row}, {state}]: {entry['mean'][j][k]} != {theirs}")
    return bad


def query_mismatches(queries: list[dict], model, rtol=1e-9) -> list[str]:
    from pgmpy.inference import VariableElimination

    ve = VariableElimination(model)
    bad = []
    for q in queries:
        factor = ve.query([q["target"]], evidence=q["evidence"] or None, show_progress=False)
        for state, p in q["probabilities"].items():
            theirs = factor.get_value(**{q["target"]: state})
            if not np.isclose(p, theirs, rtol=rtol, atol=1e-15):
                bad.append(f"{q['name']}[{state}]: {p} != {theirs}")
        if q["evidence"]:
            ev = ve.query(list(q["evidence"]), joint=True, show_progress=False)
            theirs = ev.get_value(**q["evidence"])
            if not np.isclose(q["p_evidence"], theirs, rtol=rtol, atol=1e-15):
                bad.append(f"{q['name']} P(evidence): {q['p_evidence']} != {theirs}")
    return bad


@pytest.fixture(scope="module")
def asia():
    return example_network("asia")


@pytest.fixture(scope="module")
def child():
    return example_network("child")


ASIA_QUERIES = [("lung", {"smoke": "yes", "xray": "yes"}), ("tub", {"asia": "yes"}),
                ("either", {}), ("bronc", {"dysp": "yes", "either": "no"}),
                ("asia", {"xray": "yes", "dysp": "no"})]


@pytest.mark.parametrize("prior, estimator", [
    ("concentration = 1.0", {"prior_type": "dirichlet", "pseudo_counts": 1}),
    ("concentration = 0.5", {"prior_type": "dirichlet", "pseudo_counts": 0.5}),
    ("equivalent_sample_size = 5.0", {"prior_type": "BDeu", "equivalent_sample_size": 5}),
])
def test_asia_cpts_and_queries_equal_pgmpy(tmp_path, asia, prior, estimator):
    spec, data = sampled_spec(tmp_path, asia, 3000, 1, prior, ASIA_QUERIES)
    result = fit(spec)
    reference = pgmpy_fit(asia, data, **estimator)
    assert cpt_mismatches(result.posterior.parameters["cpts"], reference) == []
    assert query_mismatches(result.posterior.parameters["query"], reference) == []


def test_the_comparisons_flag_a_wrong_cpt_and_a_wrong_query(tmp_path, asia):
    spec, data = sampled_spec(tmp_path, asia, 2000, 2, "concentration = 1.0", ASIA_QUERIES)
    result = fit(spec)
    reference = pgmpy_fit(asia, data, prior_type="dirichlet", pseudo_counts=1)
    cpts = {k: dict(v) for k, v in result.posterior.parameters["cpts"].items()}
    mean = [list(r) for r in cpts["lung"]["mean"]]
    mean[0][1] *= 1.5
    cpts["lung"] = {**cpts["lung"], "mean": mean}
    assert len(cpt_mismatches(cpts, reference)) == 1
    # the ratio of posterior-mean sums computed with the maximum-likelihood CPTs instead
    ml = pgmpy_fit(asia, data, prior_type="dirichlet", pseudo_counts=1e-9)
    assert query_mismatches(result.posterior.parameters["query"], ml)
    # and with a prior off by a factor 2 every CPT of a sparse node moves
    off = pgmpy_fit(asia, data, prior_type="dirichlet", pseudo_counts=2)
    assert len(cpt_mismatches(result.posterior.parameters["cpts"], off)) > 10


def test_child_network_equals_pgmpy_with_bdeu(tmp_path, child):
    rng = np.random.default_rng(4)
    nodes = sorted(child.nodes())
    states = {c.variable: c.state_names[c.variable] for c in child.get_cpds()}
    queries = []
    for _ in range(8):
        target, *ev = rng.choice(nodes, size=int(rng.integers(1, 4)), replace=False)
        queries.append((str(target), {str(v): str(rng.choice(states[v][:2])) for v in ev}))
    spec, data = sampled_spec(tmp_path, child, 5000, 3, "equivalent_sample_size = 10.0",
                              queries)
    result = fit(spec)
    assert "None" in result.posterior.parameters["cpts"]["DuctFlow"]["states"]
    reference = pgmpy_fit(child, data, prior_type="BDeu", equivalent_sample_size=10)
    assert cpt_mismatches(result.posterior.parameters["cpts"], reference) == []
    assert query_mismatches(result.posterior.parameters["query"], reference) == []


def test_child_streamed_with_states_first_seen_late_equals_pgmpy(tmp_path, child):
    """The one-pass counting (states appended as first seen, tables grown, sorted at the end)
    on Child's rows in four CSV batches and as four in-memory frames, ordered so that many
    states (and parent configurations) first appear in a later batch, equals pgmpy's BDeu
    CPTs on all the rows; pgmpy is given the states of the data, as ours are read."""
    from bayescheck.data.sources import DataSource
    from bayescheck.models.spec import Spec

    spec, data = sampled_spec(tmp_path, child, 4000, 11, "equivalent_sample_size = 10.0")
    # rows holding a rare state last: the first batches lack those states entirely
    rare = {n: data[n].value_counts().index[-1] for n in data.columns}
    rank = sum((data[n] == s).to_numpy().astype(int) for n, s in rare.items())
    ordered = data.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)
    (tmp_path / "b").mkdir()
    cuts = [0, *np.searchsorted(np.sort(rank), [1, 3, 5]), len(data)]
    parts = [ordered.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    for i, part in enumerate(parts):
        part.to_csv(tmp_path / "b" / f"{i}.csv", index=False)
    late = [n for n in data.columns if set(parts[0][n]) != set(data[n])]
    assert len(late) >= 10, late
    (tmp_path / "stream.toml").write_text((tmp_path / "spec.toml").read_text().replace(
        'path = "data.csv"', 'path = "b/*.csv"'))
    streamed = fit(load_spec(tmp_path / "stream.toml"))
    frames = fit(Spec(model=spec.model, data=DataSource.from_frame(*parts), raw=spec.raw))
    reference = pgmpy_fit(child, data, prior_type="BDeu", equivalent_sample_size=10)
    assert cpt_mismatches(streamed.posterior.parameters["cpts"], reference) == []
    assert frames.posterior.parameters["cpts"] == streamed.posterior.parameters["cpts"]
    assert frames.posterior.log_evidence == streamed.posterior.log_evidence


@pytest.mark.parametrize("prior, score", [("concentration = 1.0", "K2"),
                                          ("equivalent_sample_size = 10.0", "BDeu")])
def test_log_evidence_equals_pgmpy_structure_score(tmp_path, asia, prior, score):
    from pgmpy import structure_score

    spec, data = sampled_spec(tmp_path, asia, 1000, 5, prior)
    result = fit(spec)
    scorer = (structure_score.K2(data) if score == "K2"
              else structure_score.BDeu(data, equivalent_sample_size=10))
    theirs = scorer.score(asia)
    # pgmpy adds a log structure prior (0 by default), so the scores are equal
    assert result.posterior.log_evidence == pytest.approx(theirs, rel=1e-10)
    # and a structure missing an edge scores differently under both
    from pgmpy.models import DiscreteBayesianNetwork

    smaller = DiscreteBayesianNetwork([e for e in asia.edges() if e != ("smoke", "lung")])
    smaller.add_nodes_from(asia.nodes())
    assert scorer.score(smaller) != pytest.approx(result.posterior.log_evidence, rel=1e-6)


def _pgmpy_network(network, cpts: dict):
    """A pgmpy network holding our CPTs (rows in our order, the last parent fastest)."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(list(network.edges()))
    model.add_nodes_from(network.nodes())
    for node, entry in cpts.items():
        parents = entry["parents"]
        names = {node: entry["states"], **{p: cpts[p]["states"] for p in parents}}
        model.add_cpds(TabularCPD(node, len(entry["states"]),
                                  np.asarray(entry["estimate"]).T.tolist(),
                                  evidence=parents or None,
                                  evidence_card=[len(cpts[p]["states"]) for p in parents] or None,
                                  state_names=names))
    return model


def test_em_with_cells_missing_at_random_is_a_fixed_point_of_pgmpy_inference(tmp_path, asia):
    """pgmpy's own EM drops every row with a missing cell (it handles latent columns only:
    ``DiscreteEM.fit`` calls ``data.dropna()``), so the reference here is pgmpy's exact
    inference: its joint distribution at our EM CPTs gives, row pattern by row pattern, the
    log likelihood of the observed cells and the expected counts, and one M step from those
    counts must return our CPTs (the EM fixed point)."""
    from pgmpy.inference import VariableElimination

    spec, data = sampled_spec(tmp_path, asia, 1500, 7, "concentration = 1.0")
    rng = np.random.default_rng(7)
    holed = data.mask(rng.random(data.shape) < 0.12)
    holed.to_csv(tmp_path / "data.csv", index=False)
    text = (tmp_path / "spec.toml").read_text() + "[fit]\ntol = 1e-13\nmax_iter = 5000\n"
    (tmp_path / "spec.toml").write_text(text)
    result = fit(load_spec(tmp_path / "spec.toml"))
    em, cpts = result.posterior.parameters["em"], result.posterior.parameters["cpts"]
    assert result.posterior.parameters["fit"]["converged"] and em["incomplete_rows"] > 500
    assert result.posterior.log_evidence is None and result.posterior.marginals == []
    assert (np.diff(em["objective"]) >= -1e-12 * np.abs(em["objective"][1:])).all()

    joint = VariableElimination(_pgmpy_network(asia, cpts)).query(
        list(asia.nodes()), joint=True, show_progress=False)
    names = joint.variables
    table = joint.values
    index_of = {v: {s: k for k, s in enumerate(joint.state_names[v])} for v in names}
    expected = {n: np.zeros((len(cpts[n]["rows"]), len(cpts[n]["states"]))) for n in cpts}
    loglik = 0.0
    for row, count in holed.fillna("").value_counts(dropna=False).items():
        values = dict(zip(holed.columns, row, strict=True))
        index = tuple(index_of[v][values[v]] if values[v] else slice(None) for v in names)
        part = table[index]
        loglik += count * np.log(part.sum())
        post = np.zeros_like(table)
        post[index] = part / part.sum() * count
        for node in cpts:
            family = [*cpts[node]["parents"], node]
            axes = tuple(i for i, v in enumerate(names) if v not in family)
            marg = post.sum(axis=axes)  # axes in `names` order
            kept = [v for v in names if v in family]
            marg = np.transpose(marg, [kept.index(v) for v in family])
            for j, combo in enumerate(itertools.product(*(cpts[p]["states"]
                                                          for p in cpts[node]["parents"]))):
                sel = tuple(index_of[p][s] for p, s in zip(cpts[node]["parents"], combo,
                                                           strict=True))
                expected[node][j] += sorted_states_to_ours(joint, node, cpts, marg[sel])
    assert em["log_likelihood"] == pytest.approx(loglik, rel=1e-10)
    for node, entry in cpts.items():
        np.testing.assert_allclose(entry["expected_counts"], expected[node], rtol=1e-7,
                                   atol=1e-7)
        again = (expected[node] + 1.0) / (expected[node] + 1.0).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(entry["estimate"], again, atol=1e-9)
    # the comparison can fail: an M step with another prior, or the complete-case estimate
    other = (expected["lung"] + 2.0) / (expected["lung"] + 2.0).sum(axis=1, keepdims=True)
    assert not np.allclose(cpts["lung"]["estimate"], other, atol=1e-6)
    kept = holed.dropna()
    case = [(((kept.smoke == s) & (kept.lung == v)).sum() + 1.0) / ((kept.smoke == s).sum() + 2)
            for s in ("no", "yes") for v in ("no", "yes")]
    assert not np.allclose(np.ravel(cpts["lung"]["estimate"]), case, atol=1e-4)


def sorted_states_to_ours(joint, node, cpts, values):
    """A node's probabilities in pgmpy's state order -> our (sorted) state order."""
    theirs = list(joint.state_names[node])
    return [values[theirs.index(s)] for s in cpts[node]["states"]]


@pytest.fixture(scope="module")
def insurance():
    return example_network("insurance")


def declared_states(network) -> dict:
    """Every node's states as the network declares them, in its order."""
    return {n: list(network.get_cpds(n).state_names[n]) for n in network.nodes()}


def states_table(states: dict) -> str:
    return "[states]\n" + "".join(
        f'{n} = [{", ".join(f"{s!r}".replace(chr(39), chr(34)) for s in v)}]\n'
        for n, v in states.items())


def test_declared_states_equal_pgmpy_state_names_where_a_rare_state_is_absent(tmp_path,
                                                                              insurance):
    """Insurance at 2,000 rows lacks the state "Million" of ThisCarCost and OtherCarCost. With
    every node's states declared, each CPT (in the declared order, one Dirichlet entry per
    declared state) equals pgmpy's DiscreteBayesianEstimator given those state_names, to
    ~1e-12; without [states] the absent state is dropped and those CPTs differ."""
    spec, data = sampled_spec(tmp_path, insurance, 2000, 1, "equivalent_sample_size = 10.0")
    states = declared_states(insurance)
    absent = {n: [s for s in v if s not in set(data[n])] for n, v in states.items()}
    absent = {n: v for n, v in absent.items() if v}
    assert {"ThisCarCost", "OtherCarCost"} <= set(absent), absent
    (tmp_path / "spec.toml").write_text((tmp_path / "spec.toml").read_text()
                                        + states_table(states))
    declared = fit(load_spec(tmp_path / "spec.toml")).posterior.parameters["cpts"]
    assert {n: declared[n]["states"] for n in states} == states  # the declared order
    reference = pgmpy_fit(insurance, data, state_names=states, prior_type="BDeu",
                          equivalent_sample_size=10)
    assert cpt_mismatches(declared, reference, rtol=1e-12) == []
    # the unseen state has its prior mass: BDeu's alpha over (alpha + the row's count)
    row = declared["OtherCarCost"]
    k = row["states"].index("Million")
    assert all(c[k] == 0 for c in row["counts"]) and min(m[k] for m in row["mean"]) > 0
    # negative: the states read from the data (Million dropped) are not pgmpy's declared fit
    spec, _ = sampled_spec(tmp_path, insurance, 2000, 1, "equivalent_sample_size = 10.0")
    read = fit(spec).posterior.parameters["cpts"]
    assert "Million" not in read["OtherCarCost"]["states"]
    wrong = cpt_mismatches(read, reference, rtol=1e-12)
    assert any(w.startswith("OtherCarCost[") for w in wrong)
    assert any(w.startswith("ThisCarCost[") for w in wrong)


def test_declared_states_hold_when_streamed_in_batches_lacking_them(tmp_path, insurance):
    """The stream of batches (a glob), some batches lacking many states and every one lacking
    Million: the declared fit equals pgmpy's on all the rows (Dirichlet 1)."""
    spec, data = sampled_spec(tmp_path, insurance, 2000, 1, "concentration = 1.0")
    states = declared_states(insurance)
    (tmp_path / "b").mkdir()
    order = np.argsort(data["Age"].to_numpy(), kind="stable")  # batches by age group first
    parts = np.array_split(order, 5)
    for i, part in enumerate(parts):
        data.iloc[part].to_csv(tmp_path / "b" / f"{i}.csv", index=False)
    assert sum(set(data.iloc[parts[0]][n]) != set(data[n]) for n in states) >= 3
    (tmp_path / "stream.toml").write_text(
        (tmp_path / "spec.toml").read_text().replace('path = "data.csv"', 'path = "b/*.csv"')
        + states_table(states))
    streamed = fit(load_spec(tmp_path / "stream.toml")).posterior.parameters["cpts"]
    reference = pgmpy_fit(insurance, data, state_names=states, prior_type="dirichlet",
                          pseudo_counts=1)
    assert cpt_mismatches(streamed, reference, rtol=1e-12) == []
    # the comparison fails on another prior over the same declared states
    assert cpt_mismatches(streamed, pgmpy_fit(insurance, data, state_names=states,
                                              prior_type="dirichlet", pseudo_counts=1.001),
                          rtol=1e-12)
