"""Discrete Bayesian network CPTs against pgmpy on its Alarm network (37 nodes, 46 edges).

Rows are forward-sampled here (numpy) from the CPTs of pgmpy's Alarm example
(``pgmpy.utils.get_example_model``, shipped with pgmpy). Both sides fit every CPT's
posterior mean under the BDeu prior with equivalent sample size 10; pgmpy through its current
estimator, ``pgmpy.parameter_estimator.DiscreteBayesianEstimator`` (``BayesianEstimator`` is
deprecated from pgmpy 1.1).

- in memory: the same frame of pandas categoricals to both (pgmpy's fastest input), ours
  through ``bayescheck.fit`` of a spec whose data is that frame;
- the command: the rows as a CSV file; ``bayescheck fit SPEC`` against a script that reads
  the file with the same kind of reader (pyarrow's CSV reader, every column dictionary
  encoded, so pgmpy gets categoricals) and fits pgmpy's CPTs, each a fresh process.

Equality is measured, not assumed: the largest difference between the two sides' CPTs.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
from harness import Context, Row, bayescheck_exe, command, interleave, python, shape

ESS = 10.0

PGMPY_CSV = """
import json, sys, warnings
warnings.simplefilter("ignore")
import pyarrow as pa
import pyarrow.csv as pcsv
from pgmpy.models import DiscreteBayesianNetwork
from pgmpy.parameter_estimator import DiscreteBayesianEstimator
edges = json.loads(open(sys.argv[2]).read())
names = pcsv.read_csv(sys.argv[1], read_options=pcsv.ReadOptions(block_size=1 << 16)).column_names
table = pcsv.read_csv(sys.argv[1], convert_options=pcsv.ConvertOptions(
    column_types={{n: pa.string() for n in names}}, auto_dict_encode=True,
    auto_dict_max_cardinality=1 << 20, strings_can_be_null=False))
frame = table.to_pandas()
model = DiscreteBayesianNetwork(edges)
model.add_nodes_from(frame.columns)
cpds = DiscreteBayesianEstimator(prior_type="BDeu", equivalent_sample_size={ess}).fit(
    model, frame).parameters_
out = {{c.variable: {{"states": c.state_names, "values": c.get_values().tolist(),
                     "evidence": c.variables[1:]}} for c in cpds}}
open(sys.argv[3], "w").write(json.dumps(out))
"""


def alarm():
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # get_example_model's deprecation; it reads offline
        return get_example_model("alarm")


def forward_sample(network, n: int, seed: int = 0):
    """``n`` rows of the network as a frame of strings (numpy, in topological order)."""
    import networkx as nx
    import pandas as pd

    rng = np.random.default_rng(seed)
    codes, names = {}, {}
    for node in nx.topological_sort(network):
        cpd = network.get_cpds(node)
        values = cpd.get_values()  # (states, parent configurations), parents row-major
        names[node] = list(cpd.state_names[node])
        config = np.zeros(n, dtype=np.int64)
        for parent in cpd.variables[1:]:
            config = config * len(cpd.state_names[parent]) + codes[parent]
        cumulative = np.cumsum(values.T, axis=1)
        u = rng.random(n)
        codes[node] = np.minimum((u[:, None] > cumulative[config]).sum(axis=1),
                                 values.shape[0] - 1)
    return pd.DataFrame({k: np.asarray(names[k], dtype=object)[v] for k, v in codes.items()})


def _value(cpd: dict, node: str, state: str, parents: dict) -> float:
    """P(node = state | parents) from pgmpy's CPT given as states, values and evidence."""
    states = cpd["states"]
    column = 0
    for parent in cpd["evidence"]:
        column = column * len(states[parent]) + states[parent].index(parents[parent])
    return cpd["values"][states[node].index(state)][column]


def worst_difference(cpts: dict, theirs: dict) -> float:
    """Largest |ours - pgmpy| over every CPT entry (ours as posterior.json holds them)."""
    worst = 0.0
    for node, entry in cpts.items():
        for j, row in enumerate(entry["rows"]):
            parents = {} if row == "(root)" else dict(p.split("=", 1) for p in row.split(", "))
            for k, state in enumerate(entry["states"]):
                worst = max(worst, abs(entry["mean"][j][k]
                                       - _value(theirs[node], node, state, parents)))
    return worst


def _as_dicts(cpds) -> dict:
    return {c.variable: {"states": {k: list(v) for k, v in c.state_names.items()},
                         "values": c.get_values().tolist(), "evidence": c.variables[1:]}
            for c in cpds}


def _spec_file(ctx: Context, frame, edges, name: str):
    """A CSV of the frame (written once) and a bayesian_network spec reading it."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    folder = ctx.work / "networks"
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / f"{name}.csv"
    if not csv.exists():
        pcsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), csv)
    spec = folder / f"{name}.toml"
    spec.write_text(f'model = "bayesian_network"\n[data]\npath = "{csv.name}"\n[structure]\n'
                    f"edges = {json.dumps([list(e) for e in edges])}\n"
                    f"[prior]\nequivalent_sample_size = {ESS}\n")
    (folder / "edges.json").write_text(json.dumps([list(e) for e in edges]))
    return csv, spec


def in_memory(ctx: Context) -> list[Row]:
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    import bayescheck

    n = ctx.size(1_000_000, 50_000)
    net = alarm()
    edges = [tuple(e) for e in net.edges()]
    frame = forward_sample(net, n)
    categorical = frame.astype("category")
    _, spec_path = _spec_file(ctx, frame.iloc[:200], edges, f"alarm-head-{n}")
    model = bayescheck.load_spec(spec_path).model

    def ours():
        return bayescheck.fit(bayescheck.Spec(
            model=model, data=bayescheck.DataSource.from_frame(categorical)))

    def pgmpy():
        dag = DiscreteBayesianNetwork(edges)
        dag.add_nodes_from(categorical.columns)
        return DiscreteBayesianEstimator(prior_type="BDeu", equivalent_sample_size=ESS).fit(
            dag, categorical).parameters_

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bayescheck.fit(bayescheck.Spec(model=model, data=bayescheck.DataSource.from_frame(
            categorical.iloc[:1000].copy())))  # warm: first-call imports on both sides
        timed = interleave({"ours": ours, "peer": pgmpy}, ctx.repeat)
    worst = worst_difference(timed["ours"][1].parameters["cpts"], _as_dicts(timed["peer"][1]))
    return [Row("Bayesian network CPTs (BDeu 10) from an in-memory frame of categoricals, "
                "Alarm", shape(n, len(frame.columns)), timed["ours"][0],
                "pgmpy DiscreteBayesianEstimator", timed["peer"][0], target=">= 10x",
                met=timed["peer"][0] / timed["ours"][0] >= 10,
                note=f"CPTs equal to {worst:.0e}")]


def csv_command(ctx: Context) -> list[Row]:
    n = ctx.size(1_000_000, 50_000)
    net = alarm()
    edges = [tuple(e) for e in net.edges()]
    csv, spec = _spec_file(ctx, forward_sample(net, n, seed=1), edges, f"alarm-{n}")
    folder = csv.parent
    script = python(PGMPY_CSV.format(ess=ESS)) + [csv, folder / "edges.json",
                                                   folder / "pgmpy-cpts.json"]
    runs = {"ours": lambda: command([bayescheck_exe(ctx), "fit", spec, "--out",
                                     folder / "out-ours", "--quiet"], ctx),
            "peer": lambda: command(script, ctx)}
    if ctx.baseline is not None:
        runs["baseline"] = lambda: command([bayescheck_exe(ctx, baseline=True), "fit", spec,
                                            "--out", folder / "out-baseline", "--quiet"], ctx)
    for run in runs.values():  # untimed: modules compiled, caches filled
        run()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(ctx.repeat):
        for side, run in runs.items():
            best[side] = min(best[side], run())
    ours = json.loads((folder / "out-ours" / "posterior.json").read_text())["parameters"]
    worst = worst_difference(ours["cpts"], json.loads((folder / "pgmpy-cpts.json").read_text()))
    return [Row("`bayescheck fit` of the Alarm network from a CSV file vs pgmpy given the same "
                "reader (pyarrow CSV, dictionary-encoded columns), whole processes",
                shape(n, len(net.nodes())), best["ours"],
                "pyarrow.csv + pgmpy DiscreteBayesianEstimator", best["peer"],
                target=">= 3x", met=best["peer"] / best["ours"] >= 3,
                baseline=best.get("baseline"), note=f"CPTs equal to {worst:.0e}")]


BENCHMARKS = {"pgmpy-memory": in_memory, "pgmpy-csv": csv_command}
