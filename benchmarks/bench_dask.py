"""``bayescheck fit`` on a Dask LocalCluster (2 workers) against one process, same data, one run.

    .venv/bin/python benchmarks/bench_dask.py [--rows 1000000] [--features 50] [--files 100]
                                              [--workers 2] [--repeat 3]

Writes ``rows x features`` Gaussian regression data in ``files`` Parquet files to a temporary
folder, then times, alternately (so both see the same machine):

* ``stream``: ``inference.dispatch.fit(spec)``, the single-process stream;
* ``cluster``: ``fit(spec, scheduler=ADDRESS)`` on a LocalCluster of ``workers`` worker
  processes (one thread each) started once beforehand; its start-up is reported apart;
* ``map only``: the per-file statistics on the workers, gathered without merging;
* ``merge``: the tree reduction alone, on the gathered per-file roots, in this process (what
  the reduction costs in arithmetic; on the cluster it also costs one round trip per level).

It checks that the two posteriors agree (largest relative difference of the means) and prints
medians and ratios. ``--model`` picks the linear regression (default) or the Gaussian mixture
(EM: ``--features`` columns, 3 components, rows held on the workers).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from functools import reduce
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
[likelihood]
noise_sd = 1.0
"""

MIXTURE = """model = "gaussian_mixture"
n_components = 3
covariance = "diag"
[data]
path = "parts/*.parquet"
[fit]
n_init = 1
seed = 0
max_iter = 30
"""


def write_data(folder: Path, rows: int, d: int, files: int, model: str) -> Path:
    rng = np.random.default_rng(0)
    (folder / "parts").mkdir(parents=True)
    theta = rng.normal(size=d)
    centres = rng.normal(scale=4.0, size=(3, d))
    per = rows // files
    for i in range(files):
        if model == "linear_regression":
            X = rng.normal(size=(per, d))
            frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
            frame["y"] = X @ theta + rng.normal(size=per)
        else:
            X = centres[rng.integers(0, 3, size=per)] + rng.normal(size=(per, d))
            frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
        frame.to_parquet(folder / "parts" / f"{i}.parquet", index=False)
    spec = folder / "spec.toml"
    spec.write_text(SPEC if model == "linear_regression" else MIXTURE)
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", default="linear_regression",
                        choices=["linear_regression", "gaussian_mixture"])
    args = parser.parse_args()

    import distributed
    from bayescheck.inference import distributed as dist
    from bayescheck.inference.dispatch import fit
    from bayescheck.inference.families.linear_regression import batch_statistic
    from bayescheck.models.spec import load_spec

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        spec_path = write_data(Path(tmp), args.rows, args.features, args.files, args.model)
        print(f"data: {args.rows} x {args.features} in {args.files} Parquet files "
              f"({time.perf_counter() - started:.1f} s to write)")
        spec = load_spec(spec_path)
        started = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        client.run(lambda: __import__("bayescheck.inference.families.linear_regression"))
        startup = time.perf_counter() - started
        times = {"stream": [], "cluster": [], "map only": [], "merge": []}
        local = remote = None
        for _ in range(args.repeat):
            t = time.perf_counter()
            local = fit(spec)
            times["stream"].append(time.perf_counter() - t)
            t = time.perf_counter()
            remote = fit(spec, scheduler=cluster.scheduler_address)
            times["cluster"].append(time.perf_counter() - t)
            if args.model == "linear_regression":
                with dist.cluster(cluster.scheduler_address):
                    t = time.perf_counter()
                    futures = client.map(dist._partition, dist.partition_files(spec.data),
                                         statistic=lambda b, m=spec.model: batch_statistic(m, b),
                                         pure=False)
                    parts = [p[0] for p in client.gather(futures)]
                    times["map only"].append(time.perf_counter() - t)
                t = time.perf_counter()
                reduce(lambda a, b: a + b, parts)
                times["merge"].append(time.perf_counter() - t)
        client.close()
        cluster.close(timeout=30)

    if args.model == "linear_regression":
        a = np.asarray(local.parameters["theta"]["mean"])
        b = np.asarray(remote.parameters["theta"]["mean"])
    else:
        a = np.asarray(local.parameters["means"]["estimate"])
        b = np.asarray(remote.parameters["means"]["estimate"])
    print(f"largest relative difference of the posterior means: "
          f"{np.max(np.abs(a - b) / np.abs(a)):.2e}")
    print(f"LocalCluster start-up ({args.workers} worker processes): {startup:.2f} s")
    med = {k: statistics.median(v) for k, v in times.items() if v}
    for k, v in med.items():
        print(f"{k:>10}: median {v:.3f} s over {len(times[k])} runs "
              f"({args.rows / v:,.0f} rows/s)" if k != "merge" else
              f"{k:>10}: median {v * 1e3:.2f} ms ({args.files - 1} merges of "
              f"{args.features + 1}x{args.features + 1} roots)")
    print(f"cluster / stream: {med['cluster'] / med['stream']:.2f}")


if __name__ == "__main__":
    main()
