"""Spread of the cross-check's z scores, per statistic, over repeated NUTS runs.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_zscores.py [--seeds K] [--examples a,b]
        [--draws-only iid] [--out bench-output/zscores.json]

For each example with exact marginals (coin, die, play_tennis, stream regression) the model
is fitted and declared once, then sampled with NUTS for seeds 0..K-1 (one compiled model,
reused), and each run is compared with ``inference.compare.compare_idata``. Every z score is
kept with its example, seed, parameter and statistic (mean, sd, q05, q50, q95).

A control with no sampler in it: the same comparison on independent draws from the exact
marginals (``dist.rvs``, the same chains x draws). There the MCSE formulas alone are on
trial: each z should be N(0, 1) up to the noise of the ESS estimate.

The z scores of one run are correlated (the quantiles of one parameter; a two-category
Dirichlet's two weights are one variable), so the spread is summarised per run (the mean of
z^2 over the run's scores of a kind) and its uncertainty taken over runs, which are
independent: the root mean square of z with a 95 % interval from a bootstrap over runs.
Under a correct MCSE the mean of z^2 is 1 (the mean of z is 0, so the RMS is the sd).

Writes the raw scores (JSON) and prints Markdown tables (per example and pooled; a run's
spread; the power against a shifted answer); ``--table`` only re-reads the JSON. ``--ar1``
prints the tables on AR(1) chains of known ESS instead (no sampler).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescheck.inference.compare import compare_draws, compare_idata  # noqa: E402
from bayescheck.inference.dispatch import fit  # noqa: E402
from bayescheck.inference.nuts import sample_nuts  # noqa: E402
from bayescheck.models import load_spec  # noqa: E402

EXAMPLES = {
    "coin": "examples/beta_bernoulli/coin.toml",
    "die": "examples/dirichlet_categorical/die.toml",
    "play_tennis": "examples/naive_bayes/play_tennis.toml",
    "stream": "examples/linear_regression/stream.toml",
}
STATS = ("mean", "sd", "q05", "q50", "q95")


def _rows(comparison, example: str, source: str, seed: int, size: int) -> list[dict]:
    out = []
    for p in comparison.parameters:
        for s in STATS:
            z = p.z[s]
            if np.isfinite(z) and s not in p.not_judged:
                out.append({"example": example, "source": source, "seed": seed,
                            "name": p.name, "stat": s, "z": float(z),
                            "ess_bulk": p.ess_bulk, "size": size})
    return out


def collect(example: str, seeds: range, iid: bool, nuts: bool) -> list[dict]:
    """The z scores of ``example`` over ``seeds``: NUTS runs and / or independent draws."""
    spec = load_spec(ROOT / EXAMPLES[example])
    result = fit(spec, declaration=True)
    s = spec.sampling
    rows = []
    if iid:
        for seed in seeds:
            rng = np.random.default_rng(10_000 + seed)
            marginals = [m for m in result.marginals if m.dist is not None]
            draws = {m.name: np.asarray(m.dist.rvs(size=(s.chains, s.draws), random_state=rng))
                     for m in marginals}
            rows += _rows(compare_draws(marginals, draws), example, "iid", seed,
                          s.chains * s.draws)
    if nuts:
        model = spec.model.declare(spec.data, fit=result)
        for seed in seeds:
            started = time.process_time()
            sampled = sample_nuts(model, draws=s.draws, tune=s.tune, chains=s.chains, seed=seed)
            comparison = compare_idata(result.marginals, sampled.idata)
            print(f"{example} seed {seed}: {comparison.verdict}, "
                  f"{time.process_time() - started:.1f} s CPU", file=sys.stderr)
            if comparison.diagnostics.healthy:
                rows += _rows(comparison, example, "nuts", seed, s.chains * s.draws)
    return rows


def _bootstrap_rms(per_run: np.ndarray, rng, n_boot: int = 4000) -> tuple[float, float]:
    idx = rng.integers(0, per_run.size, size=(n_boot, per_run.size))
    rms = np.sqrt(per_run[idx].mean(axis=1))
    return float(np.quantile(rms, 0.025)), float(np.quantile(rms, 0.975))


def _rms_row(sel: list[dict], rng) -> tuple[int, float, float, float]:
    """Runs, RMS of z and its 95 % bootstrap interval over runs (a run: example and seed)."""
    runs: dict = {}
    for r in sel:
        runs.setdefault((r["example"], r["seed"]), []).append(r["z"] ** 2)
    sums = np.array([sum(v) for v in runs.values()])
    counts = np.array([len(v) for v in runs.values()])
    idx = rng.integers(0, sums.size, size=(4000, sums.size))
    boot = np.sqrt(sums[idx].sum(axis=1) / counts[idx].sum(axis=1))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return sums.size, float(np.sqrt(sums.sum() / counts.sum())), float(lo), float(hi)


def table(rows: list[dict]) -> str:
    """Markdown table: per example (and pooled), source and statistic, the spread of z."""
    rng = np.random.default_rng(0)
    lines = ["| example | draws from | statistic | runs | z's | mean z | RMS z (95 % CI over runs) "
             "| sd z | 5 % / 95 % quantile of z | share |z| > 2 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["example"], r["source"]) for r in rows})
    keys += [("pooled", source) for source in sorted({r["source"] for r in rows})]
    kinds = {**{s: (s,) for s in STATS}, "quantiles": STATS[2:], "all": STATS}
    for example, source in keys:
        for kind, stats_ in kinds.items():
            sel = [r for r in rows if example in ("pooled", r["example"])
                   and r["source"] == source and r["stat"] in stats_]
            if not sel:
                continue
            z = np.array([r["z"] for r in sel])
            runs, rms, lo, hi = _rms_row(sel, rng)
            q05, q95 = np.quantile(z, [0.05, 0.95])
            lines.append(
                f"| {example} | {source} | {kind} | {runs} | {z.size} | {z.mean():+.2f} "
                f"| {rms:.3f} ({lo:.3f}-{hi:.3f}) | {z.std(ddof=1):.2f} "
                f"| {q05:+.2f} / {q95:+.2f} | {np.mean(np.abs(z) > 2):.3f} |")
    return "\n".join(lines)


def ar1_table(runs: int = 400) -> str:
    """Markdown tables on AR(1) chains with N(0, 1) marginals, where the true ESS is known.

    First the RMS of each statistic's z over ``runs`` comparisons per rho (4 x 1000 draws;
    rho < 0 antithetic like NUTS), with the mean estimated bulk ESS next to the true ESS of
    the mean, S (1 - rho) / (1 + rho). Then ArviZ's own quantile MCSE
    (``array_stats.mcse(method="quantile")``) over ours, 300 runs per cell.
    """
    from arviz_stats.base import array_stats
    from bayescheck.inference.compare import _quantile_mcse
    from bayescheck.inference.result import ExactMarginal
    from scipy import stats

    def ar1(rng, rho, chains=4, draws=1000):
        x = np.empty((chains, draws))
        x[:, 0] = rng.normal(size=chains)
        eps = rng.normal(size=(chains, draws)) * np.sqrt(1 - rho ** 2)
        for t in range(1, draws):
            x[:, t] = rho * x[:, t - 1] + eps[:, t]
        return x

    normal = stats.norm(0.0, 1.0)
    marginal = [ExactMarginal("x", "x", {}, normal)]
    lines = ["| rho | true ESS of the mean | mean estimated bulk ESS | "
             + " | ".join(STATS) + " |", "|---|---|---|" + "---|" * len(STATS)]
    for rho in (-0.5, -0.3, 0.0, 0.3, 0.7):
        zs, ess = {s: [] for s in STATS}, []
        for seed in range(runs):
            row = compare_draws(marginal, {"x": ar1(np.random.default_rng(seed), rho)})
            for s in STATS:
                zs[s].append(row.parameters[0].z[s])
            ess.append(row.parameters[0].ess_bulk)
        cells = " | ".join(f"{np.sqrt(np.mean(np.square(zs[s]))):.2f}" for s in STATS)
        lines.append(f"| {rho:+.1f} | {4000 * (1 - rho) / (1 + rho):,.0f} | "
                     f"{np.mean(ess):,.0f} | {cells} |")
    lines += ["", "| rho | ArviZ / ours, q05 | q50 | q95 |", "|---|---|---|---|"]
    for rho in (-0.3, 0.0, 0.3):
        ratios = {p: [] for p in (0.05, 0.5, 0.95)}
        for seed in range(300):
            x = ar1(np.random.default_rng(seed), rho)
            for p in ratios:
                ours = _quantile_mcse(x, p, normal.pdf(normal.ppf(p)))
                ratios[p].append(float(array_stats.mcse(x, method="quantile", prob=p)) / ours)
        lines.append(f"| {rho:+.1f} | " + " | ".join(f"{np.mean(v):.3f}" for v in ratios.values())
                     + " |")
    return "\n".join(lines)


def by_ess(rows: list[dict]) -> str:
    """Markdown table: RMS z of NUTS runs by bulk ESS over the number of draws, per statistic.

    NUTS draws many parameters antithetically (bulk ESS above the draws); this shows whether
    the MCSE keeps its scale there. Pooled over every example in ``rows``.
    """
    rng = np.random.default_rng(0)
    bins = ((0.0, 0.8), (0.8, 1.2), (1.2, 2.0), (2.0, 4.0))
    lines = ["| statistic | " + " | ".join(f"ESS/S {a:g}-{b:g}: z's, RMS (95 % CI)"
                                         for a, b in bins) + " |",
             "|---|" + "---|" * len(bins)]
    nuts = [r for r in rows if r["source"] == "nuts"]
    for stat in STATS:
        cells = []
        for a, b in bins:
            sel = [r for r in nuts if r["stat"] == stat and a <= r["ess_bulk"] / r["size"] < b]
            if len(sel) < 20:
                cells.append("-")
                continue
            _, rms, lo, hi = _rms_row(sel, rng)
            cells.append(f"{len(sel)}, {rms:.3f} ({lo:.3f}-{hi:.3f})")
        lines.append(f"| {stat} | " + " | ".join(cells) + " |")
    lines += ["", "| example | ESS/S > 1.2: mean z's, RMS (95 % CI) | q50 z's, RMS (95 % CI) |",
              "|---|---|---|"]
    for example in sorted({r["example"] for r in nuts}):
        cells = []
        for stat in ("mean", "q50"):
            sel = [r for r in nuts if r["example"] == example and r["stat"] == stat
                   and r["ess_bulk"] / r["size"] > 1.2]
            if len(sel) < 20:
                cells.append("-")
                continue
            _, rms, lo, hi = _rms_row(sel, rng)
            cells.append(f"{len(sel)}, {rms:.3f} ({lo:.3f}-{hi:.3f})")
        lines.append(f"| {example} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def per_run(rows: list[dict], observed: float = 0.88) -> str:
    """Markdown table: how much the RMS of one run's z's varies from run to run.

    ``n_eff`` is the number of independent N(0, 1) scores whose mean square would vary as
    much as a run's does (2 / variance of the runs' mean z^2): fewer than the run's z's
    because they are correlated. ``observed`` is the RMS of the play_tennis report of round 8
    (seed 0, 114 z's); the last column counts the runs at or below it.
    """
    lines = ["| example | draws from | z's per run | runs | RMS per run: min / median / max "
             f"| n_eff | runs with RMS <= {observed:g} |", "|---|---|---|---|---|---|---|"]
    for example, source in sorted({(r["example"], r["source"]) for r in rows}):
        sel = [r for r in rows if r["example"] == example and r["source"] == source]
        seeds = sorted({r["seed"] for r in sel})
        n = sum(r["seed"] == seeds[0] for r in sel)
        ms = np.array([np.mean([r["z"] ** 2 for r in sel if r["seed"] == k]) for k in seeds])
        rms = np.sqrt(ms)
        lines.append(f"| {example} | {source} | {n} | {len(seeds)} | {rms.min():.2f} / "
                     f"{np.median(rms):.2f} / {rms.max():.2f} | {2 / np.var(ms, ddof=1):.0f} "
                     f"| {np.sum(rms <= observed)} |")
    return "\n".join(lines)


def power(rows: list[dict], shifts=(3.0, 4.0, 5.0, 6.0)) -> str:
    """Markdown table: the share of statistics a shift of ``shift`` MCSEs would make fail.

    A NUTS estimate moved by ``shift`` times its MCSE has the z score ``z + shift``; it fails
    beyond the run's Bonferroni threshold (0.001 family-wise over the run's judged scores).
    Measured on the recorded z's, next to the normal theory ``P(|Z + shift| > t)``.
    """
    from scipy import stats

    head = " | ".join(f"{d:g} MCSE measured / N(0,1)" for d in shifts)
    lines = [f"| example | draws from | z's per run | threshold | {head} |",
             "|---|---|---|---|" + "---|" * len(shifts)]
    for example, source in sorted({(r["example"], r["source"]) for r in rows}):
        sel = [r for r in rows if r["example"] == example and r["source"] == source]
        seed0 = sel[0]["seed"]
        n = sum(r["seed"] == seed0 for r in sel)
        t = float(stats.norm.isf(0.001 / (2 * n)))
        z = np.array([r["z"] for r in sel])
        cells = []
        for d in shifts:
            theory = stats.norm.sf(t - d) + stats.norm.cdf(-t - d)
            cells.append(f"{np.mean(np.abs(z + d) > t):.2f} / {theory:.2f}")
        lines.append(f"| {example} | {source} | {n} | {t:.2f} | {' | '.join(cells)} |")
    return "\n".join(lines)


def batch_means_table(spec_path: str, runs: int = 3) -> str:
    """Markdown table: ArviZ's (Geyer) ESS over a batch-means ESS on the same NUTS draws.

    An independent estimate of the same quantity: the variance of means of batches of b
    draws (within each chain), times b, over the draws' variance, is tau. Geometric mean of
    the ratio over parameters, for the draws (the mean's ESS) and the indicator of the
    median (the median's), split at ESS/S = 1.2; seeds 100, 101, ...
    """
    from arviz_stats.base import array_stats
    from bayescheck.inference.compare import draws_from_idata

    spec = load_spec(spec_path)
    result = fit(spec, declaration=True)
    model = spec.model.declare(spec.data, fit=result)
    s = spec.sampling
    marginals = [m for m in result.marginals if m.dist is not None]
    found = []
    for seed in range(100, 100 + runs):
        idata = sample_nuts(model, draws=s.draws, tune=s.tune, chains=s.chains, seed=seed).idata
        for x in draws_from_idata(idata, marginals).values():
            for what, y in (("mean", x), ("q50", (x <= np.quantile(x, 0.5)).astype(float))):
                geyer = float(array_stats.ess(y, method="mean"))
                for b in (25, 50):
                    means = y[:, : y.shape[1] // b * b].reshape(y.shape[0], -1, b).mean(axis=2)
                    tau = b * np.var(means, ddof=1) / np.var(y, ddof=1)
                    found.append((what, b, geyer / y.size, geyer * tau / y.size))
    lines = ["| ESS of | batch size | ESS/S | parameters x runs | Geyer / batch means "
             "(geometric mean, ± 2 naive se) |", "|---|---|---|---|---|"]
    for what in ("mean", "q50"):
        for b in (25, 50):
            r = np.array([(e, g) for w, bb, e, g in found if w == what and bb == b])
            for lo, hi in ((0.0, 1.2), (1.2, np.inf)):
                sel = (r[:, 0] >= lo) & (r[:, 0] < hi)
                if sel.sum() > 5:
                    lr = np.log(r[sel, 1])
                    lines.append(f"| {what} | {b} | {lo:g}-{hi:g} | {sel.sum()} | "
                                 f"{np.exp(lr.mean()):.3f} ± "
                                 f"{2 * lr.std(ddof=1) / np.sqrt(sel.sum()):.3f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--examples", default=",".join(EXAMPLES))
    parser.add_argument("--spec", action="append", default=[], metavar="PATH",
                        help="another spec with exact marginals (named by its file's stem; "
                             "replaces --examples), e.g. a case of bench_real_data.py")
    parser.add_argument("--only", choices=("iid", "nuts", "both"), default="both")
    parser.add_argument("--out", default="bench-output/zscores.json")
    parser.add_argument("--table", action="store_true", help="only print the table of --out")
    parser.add_argument("--ar1", action="store_true",
                        help="only the AR(1) tables (no sampler, about 1 min of CPU)")
    parser.add_argument("--batch-means", metavar="SPEC",
                        help="only the Geyer / batch-means ESS table of SPEC (3 NUTS runs)")
    args = parser.parse_args(argv)
    if args.batch_means:
        logging.getLogger("pymc").setLevel(logging.ERROR)
        print(batch_means_table(args.batch_means))
        return
    if args.ar1:
        print(ar1_table())
        return
    out = Path(args.out)
    if not args.table:
        logging.getLogger("pymc").setLevel(logging.ERROR)
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        rows = []
        for path in args.spec:
            EXAMPLES[Path(path).stem] = str(Path(path).resolve())
        names = [Path(p).stem for p in args.spec] or args.examples.split(",")
        for example in names:
            rows += collect(example, seeds, args.only in ("iid", "both"),
                            args.only in ("nuts", "both"))
        old = json.loads(out.read_text()) if out.exists() else []
        keep = {(r["example"], r["source"], r["seed"]) for r in rows}
        rows = [r for r in old if (r["example"], r["source"], r["seed"]) not in keep] + rows
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows))
    rows = json.loads(out.read_text())
    print(table(rows))
    print()
    print(per_run(rows))
    print()
    if all("size" in r for r in rows):
        print(by_ess(rows))
        print()
    print(power(rows))


if __name__ == "__main__":
    main()
