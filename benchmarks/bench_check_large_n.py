"""``bayescheck check`` of a linear regression at n = 1e6: the sufficient-statistic declaration.

    .venv/bin/python benchmarks/bench_check_large_n.py [--rows 1000000] [--features 50]
                                                       [--files 100] [--gradients 20]
                                                       [--check-only]

Writes ``rows x features`` Gaussian regression data (unknown noise, proper prior) in ``files``
Parquet files and runs the whole ``check`` (analytic fit, the PyMC declaration, NUTS with the
spec's defaults: 4 chains, 1000 tuning and 1000 kept draws, comparison, report), printing
its verdict, its timings from ``summary.json`` and the declaration it used.

Side by side, on the same data in the same run: the cost of one log-density gradient of
the row-wise declaration (``y ~ Normal(X theta, sigma)``, n rows) and of the sufficient one
(``z ~ Normal(R theta, sigma)``, ``rss ~ Gamma``), the median of ``gradients`` evaluations
of each compiled ``logp_dlogp`` function, and the ratio; and, apart, the time of the
declaration (a second pass over the files) and of the analytic fit. The row-wise check is
not run: its NUTS time is estimated as (gradients the sufficient run took) x (row-wise cost
per gradient). ``--check-only`` stops after the check (its timings and the machine's load
before and after), skipping these side measurements (they hold the 1e6 x 50 matrix and
compile the row-wise model).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SPEC = """model = "linear_regression"
[data]
path = "parts/*.parquet"
target = "y"
[prior]
mean = 0.0
cov = 100.0
noise_shape = 2.0
noise_scale = 1.0
[sampling]
seed = 1
"""


def _gradient_seconds(pymc_model, repeat: int) -> float:
    f = pymc_model.logp_dlogp_function(ravel_inputs=True)
    f.set_extra_values({})
    x = np.concatenate([np.ravel(v) for v in pymc_model.initial_point().values()])
    f(x)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f(x)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--gradients", type=int, default=20)
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args()

    from bayescheck.inference.dispatch import fit
    from bayescheck.models.spec import load_spec
    from bayescheck.reports.check import run_check

    rng = np.random.default_rng(0)
    n, d = args.rows, args.features
    theta = rng.normal(size=d)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "parts").mkdir()
        per = n // args.files
        for i in range(args.files):
            X = rng.normal(size=(per, d))
            frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
            frame["y"] = X @ theta + rng.normal(size=per)
            frame.to_parquet(folder / "parts" / f"{i}.parquet", index=False)
        (folder / "spec.toml").write_text(SPEC)
        spec = load_spec(folder / "spec.toml")

        load_before = os.getloadavg()
        started = time.perf_counter()
        cpu = time.process_time()
        result = run_check(spec, folder / "out")
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        load_after = os.getloadavg()
        summary = json.loads((folder / "out" / "summary.json").read_text())
        print(f"check of {n} x {d} (unknown noise): verdict {summary['verdict']}, "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU of this process; declaration observed "
              f"{summary['observed']}; load average (1, 5, 15 min) before "
              f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
              f"{', '.join(f'{x:.1f}' for x in load_after)}")
        for k, v in summary["timings"].items():
            print(f"  {k:<40} {v:8.2f} s")
        if args.check_only:
            return
        steps = int(np.asarray(result.sample.idata.sample_stats["n_steps"]).sum()) \
            if "n_steps" in result.sample.idata.sample_stats else None

        model = spec.model
        t = time.perf_counter()
        sufficient = model.declare(spec.data)
        declare = time.perf_counter() - t
        t = time.perf_counter()
        fit_again = fit(spec)
        refit = time.perf_counter() - t
        suff_grad = _gradient_seconds(sufficient, args.gradients)
        parts = [model.design(b) for b in spec.data.batches()]
        X, y = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        del parts
        t = time.perf_counter()
        rowwise = model.pymc_model(X, y)
        row_grad = _gradient_seconds(rowwise, args.gradients)
        row_compile = time.perf_counter() - t

    print(f"apart, one after the other: the declaration (reads every file, QR per batch) "
          f"{declare:.1f} s; the analytic fit again {refit:.1f} s ({fit_again.n_rows} rows)")
    print(f"one gradient: row-wise {row_grad * 1e3:.2f} ms, sufficient {suff_grad * 1e6:.1f} us "
          f"(ratio {row_grad / suff_grad:,.0f}); row-wise compile + first call {row_compile:.1f} s")
    if steps:
        print(f"the sufficient NUTS run took {steps} gradients (tuning excluded); row-wise they "
              f"would cost about {steps * row_grad:.0f} s")


if __name__ == "__main__":
    main()
