"""A user's PyMC model solved exactly (``bayescheck.exact``) against sampling it (``pm.sample``).

    .venv/bin/python benchmarks/bench_exact_pymc.py [--quick] [--rows N] [--coefs D]
                                                   [--variables K] [--repeat R]

Rows of the table:

- ``exact()`` of a Gaussian regression with D coefficients on N rows (``beta ~ Normal``,
  ``y ~ Normal(X @ beta, 1)``; default 1,000 x 5,000 as in the issue), recognition included,
  with the BLAS thread count as found and limited to one thread (OpenBLAS's threads spin when
  the other core is busy: on a shared machine one thread can be several times faster);
- ``ExactPosterior.sample(draws=1000, chains=4)`` (4,000 draws) against ``pm.sample`` of the
  same model (nutpie, 4 chains x 1,000 draws after 1,000 tuning steps; compile + sample, and
  the sampling alone as nutpie reports it), with the ratio;
- ``exact()`` of a model of K scalar Normal variables (default 200), a chain of parents with
  affine means, one observation: recognition of many variables.

Times are the best of R repeats (default 3). The machine's load average is printed with the
table: a timing taken while other work runs is noisy, the ratios of rows measured side by side
less so. Prints a markdown table.

``make bench`` runs the same models as the rows of ``pymc-exact`` (:func:`exact_pymc`;
``benchmarks/run.py --only pymc-exact``): ``exact()`` against its 2 s target, ``exact()`` and
4,000 draws against ``pm.sample`` with nutpie (one run of it: minutes), and the recognition of
200 variables against its 0.5 s target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best(fn, repeat: int) -> tuple[float, object]:
    """The shortest wall time of ``repeat`` calls of ``fn`` and its last result."""
    times, out = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return min(times), out


def pymc_sample(model):
    """``pm.sample`` with nutpie, 4 x (1000 tune + 1000 draws): (idata, wall s, sampling s)."""
    import pymc as pm

    started = time.perf_counter()
    with model:
        idata = pm.sample(draws=1000, tune=1000, chains=4, cores=2, random_seed=1,
                          nuts_sampler="nutpie", progressbar=False,
                          compute_convergence_checks=False)
    seconds = time.perf_counter() - started
    return idata, seconds, float(idata.posterior.attrs.get("sampling_time", float("nan")))


def regression(rows: int, coefs: int):
    import pymc as pm

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, coefs))
    y = x @ rng.normal(size=coefs) + rng.normal(size=rows)
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 1, shape=coefs)
        pm.Normal("y", pm.math.dot(x, beta), 1.0, observed=y)
    return model


def chain(variables: int):
    import pymc as pm

    with pm.Model() as model:
        prev = pm.Normal("x0", 0, 1)
        for i in range(1, variables):
            prev = pm.Normal(f"x{i}", 0.5 * prev + 0.1, 1.0)
        pm.Normal("y", prev, 1.0, observed=1.0)
    return model


def exact_pymc(ctx) -> list:
    """The rows of RESULTS.md: ``exact()`` and its draws against ``pm.sample`` (nutpie)."""
    from harness import Row, interleave, shape
    from threadpoolctl import threadpool_limits

    import bayescheck

    rows_n, coefs = ctx.size((5000, 1000), (1000, 200))
    variables = ctx.size(200, 50)
    model = regression(rows_n, coefs)
    bayescheck.exact(chain(5))  # first-use imports (scipy.linalg, pytensor ops) not timed
    timed = interleave({"exact": lambda: bayescheck.exact(model)}, ctx.repeat)
    t_exact, ex = timed["exact"]
    with threadpool_limits(1):
        t_one = interleave({"exact": lambda: bayescheck.exact(model)}, ctx.repeat)["exact"][0]
    timed = interleave({
        "exact + sample": lambda: bayescheck.exact(model).sample(draws=1000, chains=4,
                                                                 random_seed=1),
        "sample": lambda: ex.sample(draws=1000, chains=4, random_seed=1),
        "sample 16000": lambda: ex.sample(draws=4000, chains=4, random_seed=1)}, ctx.repeat)
    t_both, tree = timed["exact + sample"]
    idata, t_pymc, sampling = pymc_sample(model)
    # the two answers are one posterior: the draws' means agree within Monte Carlo error
    ours_mean = tree.posterior["beta"].mean(("chain", "draw")).values
    nuts_mean = idata.posterior["beta"].mean(("chain", "draw")).values
    sd = np.asarray(ex.variables["beta"].dist().std())
    worst = float(np.max(np.abs(ours_mean - nuts_mean) / sd))
    t_chain = interleave({"exact": lambda: bayescheck.exact(chain(variables))},
                         ctx.repeat)["exact"][0]
    big = chain(variables)
    t_recognise = interleave({"exact": lambda: bayescheck.exact(big)}, ctx.repeat)["exact"][0]
    size = shape(rows_n, coefs)
    return [
        Row("`bayescheck.exact()` of a PyMC Gaussian regression (recognition included)", size,
            t_exact, "", None, target="< 2 s", met=t_exact < 2.0,
            note=f"BLAS on one thread {t_one:.3g} s"),
        Row("`exact()` + `sample(draws=1000, chains=4)` (4,000 independent draws) vs "
            "`pm.sample` of the same model", size, t_both,
            "PyMC `pm.sample(nuts_sampler='nutpie')`, 4 x (1000 tune + 1000 draws), in process",
            t_pymc, target="well under pm.sample", met=t_both < 0.1 * t_pymc,
            note=f"sample() alone {timed['sample'][0]:.3g} s, 16,000 draws "
                 f"{timed['sample 16000'][0]:.3g} s; nutpie's sampling alone {sampling:.3g} s; "
                 f"draws' means agree to {worst:.2g} posterior sds"),
        Row(f"`exact()` of a model of {variables} scalar Normal variables (recognition)",
            f"{variables} variables", t_recognise, "", None, target="< 0.5 s",
            met=t_recognise < 0.5,
            note=f"building the model and exact(): {t_chain:.3g} s"),
    ]


BENCHMARKS = {"pymc-exact": exact_pymc}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 x 1,000 and 50 variables")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--coefs", type=int, default=1000)
    parser.add_argument("--variables", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pymc", action="store_true", help="skip pm.sample")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.coefs, args.variables = 1000, 200, 50
    from threadpoolctl import threadpool_limits

    import bayescheck

    model = regression(args.rows, args.coefs)
    bayescheck.exact(chain(5))  # first-use imports (scipy.linalg, pytensor ops) not timed
    rows = []
    t_exact, ex = best(lambda: bayescheck.exact(model), args.repeat)
    rows.append((f"exact(), {args.coefs} coefficients x {args.rows} rows", t_exact, None))
    with threadpool_limits(1):
        t_one, _ = best(lambda: bayescheck.exact(model), args.repeat)
    rows.append(("  the same, BLAS on one thread", t_one, None))
    t_summary, _ = best(lambda: bayescheck.exact(model).summary(), args.repeat)
    rows.append(("  exact() + summary()", t_summary, None))
    t_draws, _ = best(lambda: ex.sample(draws=1000, chains=4, random_seed=1), args.repeat)
    reference = None
    if not args.no_pymc:
        idata, reference, sampling = pymc_sample(model)
    rows.append(("sample(draws=1000, chains=4)", t_draws, reference))
    if reference is not None:
        rows.append(("  pm.sample sampling only (nutpie's sampling_time)", t_draws, sampling))
    big = chain(args.variables)
    t_chain, _ = best(lambda: bayescheck.exact(big), args.repeat)
    rows.append((f"exact(), {args.variables} scalar variables", t_chain, None))

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs\n")
    print("| what | ours (s) | pm.sample (s) | pm.sample / ours |")
    print("|---|---:|---:|---:|")
    for what, ours, theirs in rows:
        ratio = f"{theirs / ours:.0f}x" if theirs else ""
        theirs_text = f"{theirs:.2f}" if theirs else ""
        print(f"| {what} | {ours:.3f} | {theirs_text} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
