"""bayesian_network against pgmpy in the same run: CPTs from many rows of the Alarm network
(37 nodes, 46 edges), exact queries, and the whole command on a CSV file.

    .venv/bin/python benchmarks/bench_networks.py [--rows N] [--queries Q] [--repeat K]
        [--predict-rows P] [--target NODE] [--no-cli] [--quick]

``--quick`` (50 000 rows, 300 queries, 300 rows to predict, 2 runs per side) takes about
two minutes on the shared 2-core machine.

The rows are forward-sampled here (numpy) from pgmpy's Alarm CPTs. Timed, side by side:

1. In memory (both sides get the same frame; no file I/O): our fit through the spec path
   (one pass: fingerprint, factorising, counting; posteriors, BDeu score, query and
   marginal bookkeeping) against pgmpy's ``BayesianEstimator`` (BDeu, the same prior) for
   every node; once on a frame of strings (pandas' Arrow-backed ``str``), once on the same
   cells as pandas categoricals (pgmpy's fastest input: its ``groupby`` works on the codes;
   ours counts the codes without hashing a cell).
2. Our variable elimination on the posterior-mean CPTs against pgmpy's
   ``VariableElimination`` for the same random queries.
3. Prediction of one node (``--target``, default ``BP``) from every other node of new
   complete rows (``--predict-rows``, forward-sampled with another seed), starting from the
   same frame of strings: ours through ``predict``'s path (reading the codes, then
   P(target | the row) for all rows at once), pgmpy's ``predict_probability`` (one
   elimination per row) on its fitted model.
4. Unless ``--no-cli``: the rows written to a CSV file (not timed), then, each in a fresh
   Python process, ``bayescheck fit spec.toml`` (reading, fitting, writing posterior.json)
   against a script that reads the CSV with pandas and fits pgmpy's CPTs (process start and
   imports included on both sides; pgmpy's time includes ``pandas.read_csv``, timed twice:
   ``dtype=str`` with pandas' default parser, and ``dtype=str`` with its pyarrow engine
   then ``astype('category')``, pgmpy's fastest here). Ours also with
   ``BAYESCHECK_CSV_READER=pyarrow`` (the reader before the compiled one), and its first run
   on an empty cache (which compiles the reader: models/csv_codes.py). The children run
   from bytecode compiled by untimed warm-up runs (``PYTHONPYCACHEPREFIX``, dropping
   ``PYTHONDONTWRITEBYTECODE``), as an installed package does.

Each step reports wall and CPU seconds (CPU of this process, or of the child processes for
step 4); our in-memory factorising runs on two threads, so its wall can be below its CPU.
The elimination steps our queries keep per (target, evidence nodes) are forgotten before
each timed run of the 1000 queries, so a run pays for working them out (pgmpy keeps
nothing between queries either); a second row times the same queries with them kept.

Equality is reported, not assumed: the largest difference between our CPTs and pgmpy's (for
the command, between posterior.json and pgmpy's CPTs fitted on the file).
"""

from __future__ import annotations

import argparse
import atexit
import gzip
import json
import math
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bayescheck.inference.dispatch import fit  # noqa: E402
from bayescheck.inference.engines.networks import clear_query_plans, query  # noqa: E402
from bayescheck.inference.families.bayesian_network import (  # noqa: E402
    network_schema,
    predict_bayesian_network,
)
from bayescheck.models.bayesian_network import BayesianNetwork  # noqa: E402
from bayescheck.models.data import Batch, DataSource  # noqa: E402
from bayescheck.models.spec import Spec  # noqa: E402


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


ROOT = Path(__file__).resolve().parents[1]

#: How the pgmpy script reads the CSV: pandas' default parser into strings (what a user
#: would write first), or pandas' pyarrow engine into strings made categoricals (pgmpy's
#: fastest here: its groupby then works on codes; ``dtype='category'`` alone would turn
#: TRUE / FALSE into booleans, other states than the text).
PGMPY_READS = {
    "str": "pd.read_csv(sys.argv[1], dtype=str)",
    "category": "pd.read_csv(sys.argv[1], dtype=str, engine='pyarrow').astype('category')",
}

PGMPY_SCRIPT = """
import pickle, sys, warnings
warnings.simplefilter("ignore")
import pandas as pd
from pgmpy.estimators import BayesianEstimator
from pgmpy.models import DiscreteBayesianNetwork
edges = pickle.load(open(sys.argv[2], "rb"))
frame = {read}
ref = DiscreteBayesianNetwork(edges)
ref.add_nodes_from(frame.columns)
est = BayesianEstimator(ref, frame)
cpds = [est.estimate_cpd(v, prior_type="BDeu", equivalent_sample_size=10) for v in frame.columns]
pickle.dump(cpds, open(sys.argv[3], "wb"))
"""


def worst_difference(cpts: dict, cpd_of) -> float:
    """Largest |ours - pgmpy| over every CPT entry (ours as in posterior.json)."""
    worst = 0.0
    for node, entry in cpts.items():
        cpd = cpd_of(node)
        for j, row in enumerate(entry["rows"]):
            parents = {} if row == "(root)" else dict(p.split("=", 1) for p in row.split(", "))
            for k, s in enumerate(entry["states"]):
                worst = max(worst, abs(entry["mean"][j][k] - cpd.get_value(**{node: s,
                                                                                **parents})))
    return worst


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


#: Compiled modules of the child processes (both sides), as an installed package has them:
#: without it, on a machine that sets PYTHONDONTWRITEBYTECODE, every child compiled our
#: modules from source (0.07-0.1 s, which no user pays). Filled by untimed warm-up runs.
PYCACHE = Path(tempfile.mkdtemp(prefix="bench-networks-pycache-"))
#: The compiled CSV reader's cache of our children (models/csv_codes.py): private, so the
#: first (cold) run compiles it and is timed apart.
READER_CACHE = Path(tempfile.mkdtemp(prefix="bench-networks-reader-"))
for _folder in (PYCACHE, READER_CACHE):
    atexit.register(shutil.rmtree, _folder, ignore_errors=True)


def timed_run(argv: list[str], extra_env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of a fresh Python process (its output discarded; a failure
    raises)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(PYCACHE),
           "XDG_CACHE_HOME": str(READER_CACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("BAYESCHECK_CSV_READER", None)
    env.update(extra_env or {})
    cpu = _children_cpu()
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0, _children_cpu() - cpu


def timed(f):
    """``((wall seconds, CPU seconds), f())``."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = f()
    return (time.perf_counter() - t0, time.process_time() - c0), out


def best(a, b):
    """The element-wise minimum of two (wall, CPU) pairs."""
    return tuple(min(x, y) for x, y in zip(a, b, strict=True))


INF = (math.inf, math.inf)


def command_line(frame: pd.DataFrame, edges, repeat: int) -> tuple:
    """``bayescheck fit`` on a CSV of ``frame`` against pandas + pgmpy on the same file
    (the best of ``repeat`` alternating runs of each; pgmpy once per way of reading,
    :data:`PGMPY_READS`).

    Returns ours, ``{read: pgmpy's}`` and the largest CPT difference over every read."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        frame.to_csv(tmp / "alarm.csv", index=False)
        (tmp / "spec.toml").write_text(
            'model = "bayesian_network"\n[data]\npath = "alarm.csv"\n[structure]\n'
            f"edges = {json.dumps([list(e) for e in edges])}\n"
            "[prior]\nequivalent_sample_size = 10.0\n")
        with open(tmp / "edges.pkl", "wb") as fh:
            pickle.dump(list(edges), fh)
        t_ours, t_pgmpy = INF, dict.fromkeys(PGMPY_READS, INF)
        t_arrow = INF

        def ours(out, reader="auto"):
            return timed_run([sys.executable, "-m", "bayescheck.reports.cli", "fit",
                              str(tmp / "spec.toml"), "--out", str(tmp / out), "--quiet"],
                             {"BAYESCHECK_CSV_READER": reader})

        # untimed: every child's modules compiled to bytecode once
        subprocess.run([sys.executable, "-c", "import pandas, pgmpy.estimators, "
                        "pgmpy.models, pyarrow.csv"], check=True,
                       env={**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)})
        ours("warm", "pyarrow")
        # the first run with the compiled reader compiles it (an empty cache)
        t_cold = ours("cold")
        for i in range(repeat):
            t_ours = best(t_ours, ours(f"out{i}"))
            t_arrow = best(t_arrow, ours(f"arrow{i}", "pyarrow"))
            for read, code in PGMPY_READS.items():
                t_pgmpy[read] = best(t_pgmpy[read], timed_run(
                    [sys.executable, "-c", PGMPY_SCRIPT.format(read=code),
                     str(tmp / "alarm.csv"), str(tmp / "edges.pkl"),
                     str(tmp / f"cpds-{read}.pkl")]))
        cpts = json.loads((tmp / "out0" / "posterior.json").read_text())["parameters"]["cpts"]
        for other in ("cold", "arrow0"):  # the same numbers from every run and reader
            theirs = json.loads((tmp / other / "posterior.json").read_text())
            if theirs["parameters"]["cpts"] != cpts:
                raise AssertionError(f"posterior.json of {other} differs from out0's")
        worst = 0.0
        for read in PGMPY_READS:
            with open(tmp / f"cpds-{read}.pkl", "rb") as fh:
                cpds = {c.variable: c for c in pickle.load(fh)}
            worst = max(worst, worst_difference(cpts, cpds.__getitem__))
    return t_ours, t_pgmpy, worst, t_cold, t_arrow


def prediction(net, ours, model, nodes, args) -> tuple:
    """Our P(target | every other node) for new complete rows against pgmpy's
    ``predict_probability``: (ours, pgmpy, worst difference, ours on 10x the rows)."""
    new = forward_sample(net, args.predict_rows, 2)
    given = new.drop(columns=[args.target])
    spec = Spec(model=model, data=DataSource.from_frame(given), raw={"bench": "predict"})
    posterior = {"parameters": ours.parameters}

    def ours_predict(frame):
        batch = Batch("new rows", "-", frame)
        return predict_bayesian_network(spec, posterior, batch, target=args.target,
                                        warn=lambda _: None)

    ours_predict(given.iloc[:10].copy())  # warm-up (lazy imports)
    big = pd.concat([given] * 10, ignore_index=True)
    t_ours = t_pgmpy = t_big = INF
    for _ in range(args.repeat):
        t, answer = timed(lambda: ours_predict(given))
        t_ours = best(t_ours, t)
        t, theirs = timed(lambda: ours.pgmpy_model.predict_probability(given))
        t_pgmpy = best(t_pgmpy, t)
        t, _ = timed(lambda: ours_predict(big))
        t_big = best(t_big, t)
    worst = max(float(np.abs(np.asarray(answer[f"p_{args.target}_{s}"])
                             - theirs[f"{args.target}_{s}"].to_numpy()).max())
                for s in ours.parameters["cpts"][args.target]["states"])
    return t_ours, t_pgmpy, worst, t_big


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--predict-rows", type=int, default=2000)
    parser.add_argument("--target", default="BP")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate each side's runs this many times, keep the best")
    args = parser.parse_args()
    load_before = os.getloadavg()
    if args.quick:
        args.rows, args.queries, args.predict_rows, args.repeat = 50_000, 300, 300, 2
    warnings.simplefilter("ignore")
    net = alarm()
    frame = forward_sample(net, args.rows, 0)
    nodes = tuple(frame.columns)
    edges = tuple((a, b) for a, b in net.edges())
    model = BayesianNetwork(nodes=nodes, edges=edges, concentration=None,
                            equivalent_sample_size=10.0)
    spec = Spec(model=model, data=DataSource.from_frame(frame), raw={"bench": "alarm"})

    from pgmpy.estimators import BayesianEstimator
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork

    # warm-up, not timed: both sides' lazy imports and first calls on 1000 rows (the command
    # line comparison below is the cold start)
    fit(Spec(model=model, data=DataSource.from_frame(frame.iloc[:1000].copy()),
             raw={"bench": "warm-up"}))
    warm = DiscreteBayesianNetwork(list(edges))
    warm.add_nodes_from(nodes)
    BayesianEstimator(warm, frame.iloc[:1000].copy()).estimate_cpd(
        nodes[0], prior_type="BDeu", equivalent_sample_size=10)

    def pgmpy_fit(data=frame):
        ref = DiscreteBayesianNetwork(list(edges))
        ref.add_nodes_from(nodes)
        est = BayesianEstimator(ref, data)
        ref.add_cpds(*(est.estimate_cpd(v, prior_type="BDeu", equivalent_sample_size=10)
                       for v in nodes))
        return ref

    rows: list[tuple] = []
    t_ours = t_pgmpy = INF
    for _ in range(args.repeat):
        t, ours = timed(lambda: fit(spec))
        t_ours = best(t_ours, t)
        t, ref = timed(pgmpy_fit)
        t_pgmpy = best(t_pgmpy, t)
    rows.append(("CPTs (BDeu 10), in memory, a frame of strings", t_ours, t_pgmpy,
                 worst_difference(ours.parameters["cpts"], ref.get_cpds)))

    # the same cells as pandas categoricals (not timed: both sides get this frame), pgmpy's
    # fastest input: its groupby works on the codes, and ours counts them without hashing
    categorical = frame.astype("category")
    cat_spec = Spec(model=model, data=DataSource.from_frame(categorical), raw={"bench": "cat"})
    fit(Spec(model=model, data=DataSource.from_frame(categorical.iloc[:1000].copy()),
             raw={"bench": "warm-up"}))
    pgmpy_fit(categorical.iloc[:1000].copy())
    t_cat_ours = t_cat_pgmpy = INF
    for _ in range(args.repeat):
        t, cat_ours = timed(lambda: fit(cat_spec))
        t_cat_ours = best(t_cat_ours, t)
        t, cat_ref = timed(lambda: pgmpy_fit(categorical))
        t_cat_pgmpy = best(t_cat_pgmpy, t)
    rows.append(("CPTs (BDeu 10), in memory, a frame of categoricals", t_cat_ours, t_cat_pgmpy,
                 max(worst_difference(cat_ours.parameters["cpts"], cat_ref.get_cpds),
                     worst_difference(cat_ours.parameters["cpts"], ref.get_cpds))))

    rng = np.random.default_rng(1)
    states = {n: tuple(ours.parameters["cpts"][n]["states"]) for n in nodes}
    schema = network_schema(model, states)
    cpts = ours.state.mean
    jobs = []
    for _ in range(args.queries):
        target, *ev = rng.choice(len(nodes), size=int(rng.integers(1, 5)), replace=False)
        jobs.append((int(target), {int(v): int(rng.integers(len(states[nodes[v]])))
                                   for v in ev}))
    ve = VariableElimination(ref)

    def ours_queries():
        return [query(cpts, schema, t, e) for t, e in jobs]

    def cold_queries():
        clear_query_plans()
        return ours_queries()

    t_q_ours = t_q_pgmpy = t_q_kept = INF
    for _ in range(args.repeat):
        t, answers = timed(cold_queries)
        t_q_ours = best(t_q_ours, t)
        t, theirs = timed(lambda: [
            ve.query([nodes[t]], evidence={nodes[v]: states[nodes[v]][k]
                                           for v, k in e.items()} or None,
                     show_progress=False) for t, e in jobs])
        t_q_pgmpy = best(t_q_pgmpy, t)
        t, _ = timed(ours_queries)  # the steps of every query kept from the run above
        t_q_kept = best(t_q_kept, t)
    q_worst = 0.0
    for (t, _), (joint, p_e), factor in zip(jobs, answers, theirs, strict=True):
        for k, s in enumerate(states[nodes[t]]):
            q_worst = max(q_worst, abs(joint[k] / p_e - factor.get_value(**{nodes[t]: s})))
    rows.append((f"{args.queries} queries", t_q_ours, t_q_pgmpy, q_worst))
    rows.append((f"the same {args.queries} queries, elimination steps kept", t_q_kept,
                 t_q_pgmpy, q_worst))

    ours.pgmpy_model = ref
    t_p_ours, t_p_pgmpy, p_worst, t_big = prediction(net, ours, model, nodes, args)
    rows.append((f"predict {args.target} from the 36 other nodes, {args.predict_rows} "
                 f"complete rows", t_p_ours, t_p_pgmpy, p_worst))

    if not args.no_cli:
        t_c_ours, t_c_pgmpy, c_worst, t_cold, t_arrow = command_line(frame, edges, args.repeat)
        for read, words in (("str", "pandas.read_csv(dtype=str)"),
                            ("category", "pandas.read_csv(dtype=str, engine='pyarrow')"
                                         ".astype('category')")):
            rows.append((f"command on a CSV (fresh process: read + CPTs); pgmpy after {words}",
                         t_c_ours, t_c_pgmpy[read], c_worst))
        rows.append(("the same, ours with BAYESCHECK_CSV_READER=pyarrow (the reader before); "
                     "pgmpy's fastest", t_arrow, t_c_pgmpy["category"], c_worst))
        rows.append(("the same, ours on its first run (compiling the reader); pgmpy's fastest",
                     t_cold, t_c_pgmpy["category"], c_worst))

    import pgmpy
    print(f"Alarm network: {len(nodes)} nodes, {len(edges)} edges, {args.rows} rows, "
          f"{args.queries} queries (0-3 evidence nodes), {args.predict_rows} rows to "
          f"predict; pgmpy {pgmpy.__version__}; load average {load_before[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores); best of {args.repeat} "
          f"alternating run(s) per side\n")
    print("| step | bayescheck wall | pgmpy wall | ratio | bayescheck CPU | pgmpy CPU | "
          "CPU ratio | max abs difference |")
    print("|---|---|---|---|---|---|---|---|")
    for name, a, b, worst in rows:
        print(f"| {name} | {a[0]:.2f} s | {b[0]:.2f} s | **{b[0] / a[0]:.1f}x** | "
              f"{a[1]:.2f} s | {b[1]:.2f} s | {b[1] / a[1]:.1f}x | {worst:.1e} |")
    print(f"\n(ours alone, predicting {10 * args.predict_rows} rows: {t_big[0]:.2f} s wall, "
          f"{t_big[1]:.2f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
