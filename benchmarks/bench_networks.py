"""bayesian_network against pgmpy in the same run: CPTs from many rows of the Alarm network
(37 nodes, 46 edges) and exact queries.

    .venv/bin/python benchmarks/bench_networks.py [--rows N] [--queries Q] [--quick]

The rows are forward-sampled here (numpy) from pgmpy's Alarm CPTs, held in memory as strings
(both sides get the same frame; no file I/O is timed). Timed: our fit through the spec path
(labels pass, counting, posteriors, BDeu score) and pgmpy's ``BayesianEstimator`` (BDeu, the
same prior) for every node; our variable elimination on the posterior-mean CPTs and pgmpy's
``VariableElimination`` for the same random queries. Equality is reported, not assumed.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inference.dispatch import fit  # noqa: E402
from inference.engines.networks import query  # noqa: E402
from inference.families.bayesian_network import network_schema  # noqa: E402
from models.bayesian_network import BayesianNetwork  # noqa: E402
from models.data import DataSource  # noqa: E402
from models.spec import Spec  # noqa: E402


def alarm():
    import pgmpy
    from pgmpy.readwrite import BIFReader

    path = os.path.join(os.path.dirname(pgmpy.__file__), "utils", "example_models",
                        "alarm.bif.gz")
    with gzip.open(path) as fh:
        return BIFReader(string=fh.read().decode()).get_model()


def forward_sample(network, n: int, seed: int) -> pd.DataFrame:
    import networkx as nx

    rng = np.random.default_rng(seed)
    codes: dict[str, np.ndarray] = {}
    names: dict[str, list] = {}
    for node in nx.topological_sort(network):
        cpd = network.get_cpds(node)
        parents = cpd.variables[1:]
        values = cpd.get_values()  # (r, q), columns row-major over parents as listed
        names[node] = list(cpd.state_names[node])
        idx = np.zeros(n, dtype=np.int64)
        for p in parents:
            idx = idx * len(cpd.state_names[p]) + codes[p]
        cum = np.cumsum(values.T, axis=1)  # (q, r)
        u = rng.random(n)
        codes[node] = np.minimum((u[:, None] > cum[idx]).sum(axis=1), values.shape[0] - 1)
    return pd.DataFrame({k: np.asarray(names[k], dtype=object)[v] for k, v in codes.items()})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.queries = 50_000, 100
    warnings.simplefilter("ignore")
    net = alarm()
    frame = forward_sample(net, args.rows, 0)
    nodes = tuple(frame.columns)
    edges = tuple((a, b) for a, b in net.edges())
    model = BayesianNetwork(nodes=nodes, edges=edges, concentration=None,
                            equivalent_sample_size=10.0)
    spec = Spec(model=model, data=DataSource.from_frame(frame), raw={"bench": "alarm"})

    t0 = time.perf_counter()
    ours = fit(spec)
    t_ours = time.perf_counter() - t0

    from pgmpy.estimators import BayesianEstimator
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork

    t0 = time.perf_counter()
    ref = DiscreteBayesianNetwork(list(edges))
    ref.add_nodes_from(nodes)
    est = BayesianEstimator(ref, frame)
    ref.add_cpds(*(est.estimate_cpd(v, prior_type="BDeu", equivalent_sample_size=10)
                   for v in nodes))
    t_pgmpy = time.perf_counter() - t0

    worst = 0.0
    for node, entry in ours.parameters["cpts"].items():
        cpd = ref.get_cpds(node)
        for j, row in enumerate(entry["rows"]):
            parents = {} if row == "(root)" else dict(p.split("=", 1) for p in row.split(", "))
            for k, s in enumerate(entry["states"]):
                worst = max(worst, abs(entry["mean"][j][k] - cpd.get_value(**{node: s,
                                                                                **parents})))

    rng = np.random.default_rng(1)
    states = {n: tuple(ours.parameters["cpts"][n]["states"]) for n in nodes}
    schema = network_schema(model, states)
    cpts = ours.state.mean
    jobs = []
    for _ in range(args.queries):
        target, *ev = rng.choice(len(nodes), size=int(rng.integers(1, 5)), replace=False)
        jobs.append((int(target), {int(v): int(rng.integers(len(states[nodes[v]])))
                                   for v in ev}))
    t0 = time.perf_counter()
    answers = [query(cpts, schema, t, e) for t, e in jobs]
    t_q_ours = time.perf_counter() - t0
    ve = VariableElimination(ref)
    t0 = time.perf_counter()
    theirs = [ve.query([nodes[t]],
                       evidence={nodes[v]: states[nodes[v]][k] for v, k in e.items()} or None,
                       show_progress=False) for t, e in jobs]
    t_q_pgmpy = time.perf_counter() - t0
    q_worst = 0.0
    for (t, _), (joint, p_e), factor in zip(jobs, answers, theirs, strict=True):
        for k, s in enumerate(states[nodes[t]]):
            q_worst = max(q_worst, abs(joint[k] / p_e - factor.get_value(**{nodes[t]: s})))

    print(f"Alarm network: {len(nodes)} nodes, {len(edges)} edges, {args.rows} rows, "
          f"{args.queries} queries (1-3 evidence nodes)\n")
    print("| step | bayescheck | pgmpy | ratio | max abs difference |")
    print("|---|---|---|---|---|")
    print(f"| CPTs (BDeu 10) | {t_ours:.2f} s | {t_pgmpy:.2f} s | {t_pgmpy / t_ours:.1f}x | "
          f"{worst:.1e} |")
    print(f"| queries | {t_q_ours:.2f} s | {t_q_pgmpy:.2f} s | {t_q_pgmpy / t_q_ours:.1f}x | "
          f"{q_worst:.1e} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
