"""The command targets: ``bayescheck fit`` / ``check`` / ``report`` / ``calibrate`` /
``predict`` of the small examples, each a fresh process, and ``check`` against PyMC alone.

Every command is timed from the start of its process to its exit (what a user waits for),
the best of ``ctx.repeat``. With a baseline, its ``bayescheck`` runs the same command,
alternating with ours. ``check`` is timed warm: one untimed run of each side first (PyTensor
and nutpie caches filled, as on a developer's machine).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import ROOT, Context, Row, bayescheck_exe, command, python, wait_for_background


def example(name: str) -> Path:
    """An example spec of this tree (``examples/`` at the top, or inside the package)."""
    for folder in (ROOT / "examples", ROOT / "bayescheck" / "examples"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"example {name} not found under {ROOT}")


def _sides(ctx: Context) -> list[tuple[str, Path]]:
    sides = [("ours", bayescheck_exe(ctx))]
    if ctx.baseline is not None:
        sides.append(("baseline", bayescheck_exe(ctx, baseline=True)))
    return sides


def _alternate(ctx: Context, argv_of, warm: bool = False, after=None) -> dict:
    """Best seconds per side of ``argv_of(side, exe, i)``, the sides alternating."""
    best = {}
    sides = _sides(ctx)
    if warm:
        for side, exe in sides:
            command(argv_of(side, exe, "warm"), ctx)
            if after:
                after()
    for i in range(ctx.repeat):
        for side, exe in sides:
            seconds = command(argv_of(side, exe, i), ctx)
            best[side] = min(best.get(side, float("inf")), seconds)
            if after:
                after()
    return best


def _row(name: str, size: str, best: dict, target: str, limit: float | None,
         note: str = "") -> Row:
    return Row(name, size, best["ours"], "", None, target=target,
               met=None if limit is None else best["ours"] <= limit,
               baseline=best.get("baseline"), note=note)


def n_rows(folder: Path) -> str:
    """The rows a fit read, from its posterior.json."""
    import json

    try:
        return f"{json.loads((folder / 'posterior.json').read_text())['n_rows']:,}"
    except (OSError, KeyError, ValueError):
        return "?"


def fit_small(ctx: Context) -> list[Row]:
    rows = []
    for name, spec in (("coin", "beta_bernoulli/coin.toml"),
                       ("regression stream", "linear_regression/stream.toml")):
        path = example(spec)
        best = _alternate(ctx, lambda side, exe, i, path=path, name=name: [
            exe, "fit", path, "--out", ctx.work / "fit" / side / name, "--quiet"])
        rows.append(_row(f"`bayescheck fit` of the {name} example, whole command",
                         n_rows(ctx.work / "fit" / "ours" / name), best, "<= 1.0 s", 1.0))
    return rows


def check_small(ctx: Context) -> list[Row]:
    """``check`` of the coin warm, ``report`` of its folder, and PyMC alone on the same model."""
    spec = example("beta_bernoulli/coin.toml")
    out = ctx.work / "check"
    best = _alternate(ctx, lambda side, exe, i: [exe, "check", spec, "--out", out / side,
                                                 "--quiet"],
                      warm=True, after=wait_for_background)
    # PyMC alone: the coin's declaration sampled by pm.sample with nutpie, as the spec asks
    script = PYMC_COIN.format(csv=str(spec.with_name("coin.csv")))
    command(python(script), ctx)  # warm: its compile cached as the check's is
    pymc = min(command(python(script), ctx) for _ in range(ctx.repeat))
    verdict = _verdict(out / "ours")
    size = n_rows(out / "ours")
    rows = [_row("`bayescheck check` of the coin example, warm, whole command", size,
                 best, "<= 10 s", 10.0, note=f"verdict {verdict}"),
            Row("`bayescheck check` of the coin (fit, NUTS, compare, report) vs the same "
                "model sampled alone", size, best["ours"],
                "PyMC `pm.sample(nuts_sampler='nutpie')`, fresh process", pymc,
                note=f"the check costs {best['ours'] / pymc:.2f}x sampling alone "
                     f"(4 chains x 2000 draws + 1000 tune both)")]
    report = _alternate(ctx, lambda side, exe, i: [exe, "report", out / side])
    rows.append(_row("`bayescheck report DIR` (the coin's check), whole command", size,
                     report, "<= 2 s", 2.0))
    return rows


PYMC_COIN = """
import pandas as pd
import pymc as pm
heads = pd.read_csv({csv!r})["heads"].to_numpy()
with pm.Model():
    p = pm.Beta("p", 10.0, 10.0)
    pm.Bernoulli("y", p=p, observed=heads)
    pm.sample(draws=2000, tune=1000, chains=4, random_seed=3, nuts_sampler="nutpie",
              progressbar=False)
"""


def _verdict(folder: Path) -> str:
    import json

    summary = folder / "summary.json"
    if not summary.exists():
        return "?"
    return str(json.loads(summary.read_text()).get("verdict", "?"))


def calibrate_and_predict(ctx: Context) -> list[Row]:
    sims = ctx.size(1000, 100)
    spec = example("linear_regression/stream.toml")
    calibrate = _alternate(ctx, lambda side, exe, i: [
        exe, "calibrate", spec, "--simulations", sims, "--out",
        ctx.work / "calibrate" / side, "--quiet"])
    for side, exe in _sides(ctx):  # each side predicts from its own fit
        folder = ctx.work / "predict-fit" / side
        shutil.rmtree(folder, ignore_errors=True)
        command([exe, "fit", spec, "--out", folder, "--quiet"], ctx)
    rows = spec.parent / "batches" / "0.csv"
    predict = _alternate(ctx, lambda side, exe, i: [
        exe, "predict", spec, "--model-from", ctx.work / "predict-fit" / side, "--data", rows,
        "--out", ctx.work / "predict" / f"{side}.csv"])
    new_rows = len(rows.read_text().splitlines()) - 1  # the header
    return [_row(f"`bayescheck calibrate` of the regression stream example, {sims} "
                 f"simulations, whole command", n_rows(ctx.work / "predict-fit" / "ours"),
                 calibrate, "", None),
            _row("`bayescheck predict` of the regression stream example's first batch, "
                 "whole command", f"{new_rows:,}", predict, "", None)]


BENCHMARKS = {"fit": fit_small, "check": check_small, "calibrate-predict": calibrate_and_predict}
