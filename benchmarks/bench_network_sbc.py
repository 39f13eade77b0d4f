"""SBC of the bayesian_network declaration with missing cells summed out, and its negative controls.

    PYTHONPATH=. nice -n 5 .venv/bin/python benchmarks/bench_network_sbc.py [--simulations 100]
    PYTHONPATH=. .venv/bin/python benchmarks/bench_network_sbc.py --quick    # 10 simulations
    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_network_sbc.py --cases asia \
        --seed 12 --block 20

For each case: CPTs drawn from the Dirichlet prior, complete rows forward-sampled from them
(the declaration's prior predictive), cells emptied by a missingness mechanism, NUTS on a
declaration (one compiled model for every simulation, or per ``--block`` simulations, the
rows' multiplicities swapped in ``pm.Data``), the truth ranked among 99 thinned draws of
each CPT entry, and the ranks' uniformity tested (chi-square on 5 bins of whole ranks,
Bonferroni over the entries at a family-wise 0.01: :mod:`bayescheck.inference.calibration`). ``--seed``
is the base seed (default 11, the runs in benchmarks/NETWORKS.md), ``--cases`` runs only the
named cases (``--help`` lists them), ``--progress`` prints calibrate's progress lines. Cases:

- a 4-node network (a -> b, a -> c, b -> d, c -> d, binary, 50 rows, 18 CPT entries) with
  the right declaration (summed out) under: the data's own fixed pattern of 20 % empty cells
  (what ``bayescheck calibrate --engine nuts`` does); 20 % of cells emptied at random in each
  simulation (MCAR); column b empty in 60 % of rows and the others in 10 % (MCAR); and a
  missing-at-random pattern, a empty in 80 % of the rows where d = 1 and 10 % where d = 0
  (d always seen), which the summed-out likelihood handles (ignorable), complete-case
  analysis does not;
- negative controls on the same network: every empty cell read as its node's first state
  (MCAR 20 %); complete-case analysis (incomplete rows dropped) under the MAR pattern; and,
  as a control of the control, complete-case under MCAR, which is a valid (less informed)
  posterior and should pass;
- pgmpy's Asia structure (8 binary nodes, 36 CPT entries), 100 rows forward-sampled from
  pgmpy's Asia CPTs for the spec (only its states and row count are used), 15 % of cells
  emptied at random in each simulation.

``--em-check``: instead, the EM estimate on data we did not make: 2000 rows forward-sampled
from pgmpy's Asia network, 20 % of the cells emptied at random, ``bayescheck fit`` and
``bayescheck check`` (each in a fresh process); prints their output and the check's verdicts.

NUTS runs on nutpie's Numba path (``BAYESCHECK_NUTS_BACKEND=numba`` unless set): the path
``calibrate`` takes for these graphs, whose compiled model holds a copy of the ``pm.Data``
values that :func:`bayescheck.inference.nutpie_compile.compile_for_nutpie` refreshes. Writes
bench-output/network_sbc.md.
"""

from __future__ import annotations

import argparse
import gzip
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BAYESCHECK_NUTS_BACKEND", "numba")

from bayescheck.inference.dispatch import fit  # noqa: E402
from bayescheck.models import load_spec  # noqa: E402
from bayescheck.models.bayesian_network import BayesianNetwork  # noqa: E402
from bayescheck.models.data import DataSource  # noqa: E402
from bayescheck.reports.calibrate import run_calibration  # noqa: E402

SMALL = ('model = "bayesian_network"\n[data]\npath = "{csv}"\n[structure]\n'
         'edges = [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]\n')


CASES = ("small-fixed", "small-mcar", "small-column", "small-mar", "wrong-filled",
         "wrong-cc-mar", "cc-mcar", "asia")


@dataclass(frozen=True, eq=False)
class FilledIn(BayesianNetwork):
    """Wrong: every empty cell read as its node's first state."""

    def declare_simulations(self, sources):
        frames = []
        for src in sources:
            frame = src.read_all()
            for n in self.nodes:
                frame[n] = frame[n].fillna(self.held_states[n][0])
            frames.append(DataSource.from_frame(frame))
        return super().declare_simulations(frames)


@dataclass(frozen=True, eq=False)
class CompleteCase(BayesianNetwork):
    """Complete-case analysis: the rows with an empty cell dropped."""

    def declare_simulations(self, sources):
        return super().declare_simulations(
            [DataSource.from_frame(src.read_all().dropna().reset_index(drop=True))
             for src in sources])


def as_model(cls, held):
    return cls(**{f.name: getattr(held, f.name) for f in fields(held)})


def mcar(rate: float, columns: dict | None = None):
    """Each cell empty with probability ``rate`` (or ``columns[node]``), anew per simulation."""
    def blank(frame, rng):
        rates = np.array([(columns or {}).get(c, rate) for c in frame.columns])
        return frame.mask(rng.random(frame.shape) < rates[None, :])
    return blank


def mar(frame, rng):
    """a empty in 80 % of the rows where d = 1, 10 % where d = 0 (d, b, c always seen)."""
    p = np.where(frame["d"].to_numpy() == "1", 0.8, 0.1)
    out = frame.copy()
    out.loc[rng.random(len(frame)) < p, "a"] = None
    return out


def small_spec(folder: Path, rows: int, holes: float):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, rows)
    b = np.where(rng.random(rows) < 0.8, a, 1 - a)
    c = np.where(rng.random(rows) < 0.7, a, 1 - a)
    d = (b & c) | (rng.random(rows) < 0.2)
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str)
    frame.to_csv(folder / "small.csv", index=False)
    (folder / "small.toml").write_text(SMALL.format(csv="small.csv"))
    holed = frame.mask(rng.random(frame.shape) < holes)
    holed.iloc[:2] = [["0"] * 4, ["1"] * 4]  # every state seen
    holed.to_csv(folder / "small_holed.csv", index=False)
    (folder / "small_holed.toml").write_text(SMALL.format(csv="small_holed.csv"))
    return load_spec(folder / "small.toml"), load_spec(folder / "small_holed.toml")


def asia_spec(folder: Path, rows: int):
    import pgmpy
    from pgmpy.readwrite import BIFReader

    path = Path(pgmpy.__file__).parent / "utils" / "example_models" / "asia.bif.gz"
    with gzip.open(path) as fh:
        network = BIFReader(string=fh.read().decode()).get_model()
    data = network.simulate(rows, seed=1, show_progress=False).astype(str)
    nodes = ["asia", "smoke", "tub", "lung", "bronc", "either", "xray", "dysp"]
    data = data[nodes]
    if any(data[n].nunique() < 2 for n in nodes):
        # the spec needs both states of every node among its rows (asia = yes is rare):
        # for the SBC's design only, whose values are simulated anyway
        data.iloc[0] = "yes"
        data.iloc[1] = "no"
    data.to_csv(folder / "asia.csv", index=False)
    text = (ROOT / "examples" / "bayesian_network" / "asia.toml").read_text()
    (folder / "asia.toml").write_text(text[:text.index("[[query]]")])
    return load_spec(folder / "asia.toml")


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def em_check(rows: int = 2000, holes: float = 0.2) -> None:
    """``fit`` and ``check`` of pgmpy's Asia, forward-sampled, cells emptied at random."""
    import json

    folder = Path(tempfile.mkdtemp())
    spec = asia_spec(folder, rows)
    frame = pd.read_csv(folder / "asia.csv", dtype=str)
    frame.mask(np.random.default_rng(2026).random(frame.shape) < holes).to_csv(
        folder / "asia.csv", index=False)
    print(f"{rows} rows, {holes:.0%} of cells emptied; {load()}")
    for command in (["fit", str(spec.path), "--out", str(folder / "fit")],
                    ["check", str(spec.path), "--out", str(folder / "check")]):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "reports", *command], capture_output=True,
                              text=True, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(f"$ bayescheck {command[0]}: exit {done.returncode}, {cpu:.1f} s CPU, "
              f"{time.perf_counter() - t0:.1f} s wall")
        print(done.stdout[-3000:])
    summary = json.loads((folder / "check" / "summary.json").read_text())
    print(json.dumps({k: summary[k] for k in summary if k in ("verdict", "diagnostics",
                                                                "declaration")}, indent=1))
    print(f"load: {load()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="10 simulations per case")
    ap.add_argument("--em-check", action="store_true", help="fit and check of Asia instead")
    ap.add_argument("--seed", type=int, default=11,
                    help="base seed of the simulations and of NUTS (default: 11)")
    ap.add_argument("--cases", nargs="+", choices=CASES, metavar="NAME",
                    help=f"run only these cases, of: {', '.join(CASES)} (default: all)")
    ap.add_argument("--progress", action="store_true",
                    help="print the simulations done and the time spent to stderr")
    ap.add_argument("--block", type=int,
                    help="simulations per compiled declaration (default: one for all)")
    args = ap.parse_args(argv)
    if args.em_check:
        em_check()
        return
    sims = 10 if args.quick else args.simulations
    logging.getLogger("pymc").setLevel(logging.ERROR)
    folder = Path(tempfile.mkdtemp())
    complete, holed = small_spec(folder, 50, 0.2)
    held = complete.model.calibration_model(fit(complete))
    asia = asia_spec(folder, 100)
    cases = [
        ("small-fixed", "small: the data's own 20 % empty cells (fixed), summed out", holed,
         None, None, "pass"),
        ("small-mcar", "small: MCAR 20 % per simulation, summed out", complete, None,
         mcar(0.2), "pass"),
        ("small-column", "small: b empty in 60 % of rows, others 10 %, summed out", complete,
         None, mcar(0.1, {"b": 0.6}), "pass"),
        ("small-mar",
         "small: MAR (a empty in 80 % of rows with d = 1, 10 % with d = 0), summed out",
         complete, None, mar, "pass"),
        ("wrong-filled", "small, WRONG: MCAR 20 %, empty cells read as the first state",
         complete, as_model(FilledIn, held), mcar(0.2), "fail"),
        ("wrong-cc-mar", "small, WRONG: MAR as above, complete-case analysis", complete,
         as_model(CompleteCase, held), mar, "fail"),
        ("cc-mcar", "small: MCAR 20 %, complete-case analysis (valid under MCAR)", complete,
         as_model(CompleteCase, held), mcar(0.2), "pass"),
        ("asia", "Asia (pgmpy): MCAR 15 % per simulation, summed out", asia, None, mcar(0.15),
         "pass"),
    ]
    cases = [c for c in cases if not args.cases or c[0] in args.cases]
    rows = []
    started_load = load()
    print(started_load, flush=True)
    for _, label, spec, wrong, blank, expected in cases:
        c0, t0 = cpu_seconds(), time.perf_counter()
        try:
            result = run_calibration(spec, folder / "out", simulations=sims, seed=args.seed,
                                     engine="nuts", draws=99, fit_model=wrong, blank=blank,
                                     block=args.block, progress=args.progress)
        except Exception as exc:  # noqa: BLE001 - recorded in the table, the next case runs
            rows.append((label, 0, repr(exc), float("nan"), float("nan"), "error", expected,
                         cpu_seconds() - c0, time.perf_counter() - t0))
            print(rows[-1], flush=True)
            continue
        cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
        worst = min(result.parameters, key=lambda p: p.p_value)
        rows.append((label, len(result.parameters), worst.name, worst.p_value,
                     worst.p_adjusted, result.verdict, expected, cpu, wall))
        print(f"rank counts of {worst.name}: {worst.counts}", flush=True)
        print(rows[-1], flush=True)
    lines = [
        f"SBC of the summed-out declaration: {sims} simulations per case, 99 thinned NUTS "
        f"draws (2 chains x 198, tune 500), 5 bins, family-wise alpha 0.01, seed {args.seed}, "
        f"{f'{args.block} simulations per declaration' if args.block else 'one declaration'}; "
        f"NUTS backend {os.environ['BAYESCHECK_NUTS_BACKEND']}", "",
        f"load at start: {started_load}", f"load at end: {load()}", "",
        "| case | CPT entries | smallest chi-square p (entry) | Bonferroni-adjusted | verdict "
        "| expected | CPU s | wall s |",
        "|---|---:|---|---:|---|---|---:|---:|",
        *[f"| {a} | {k} | {p:.3g} ({n}) | {q:.3g} | {v} | {e} | {c:.0f} | {w:.0f} |"
          for a, k, n, p, q, v, e, c, w in rows],
    ]
    text = "\n".join(lines)
    print(text)
    (ROOT / "bench-output").mkdir(exist_ok=True)
    (ROOT / "bench-output" / "network_sbc.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
