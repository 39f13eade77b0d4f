"""What the cluster checkpoint costs: ``fit --scheduler`` with and without it, one run.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_dask_checkpoint.py [--rows 200000]
        [--features 50] [--files 100] [--workers 2] [--repeat 3] [--model gaussian_mixture]

Writes ``rows x features`` Gaussian regression data (known noise) in ``files`` Parquet files,
starts one LocalCluster of ``workers`` worker processes (one thread each), then times,
alternately, best of ``repeat``:

* ``tree``: ``fit(spec, scheduler=ADDRESS)`` without an output folder: the statistics merged
  by a tree of tasks on the workers, no checkpoint (the path before checkpoints existed);
* ``checkpointed``: ``fit(spec, out=DIR, scheduler=ADDRESS)``: each partition's statistic
  gathered to the client as it finishes and merged there, a checkpoint every 10 s (the
  default) and at the end;
* ``every partition``: the same with ``BAYESCHECK_CHECKPOINT_SECONDS=0``, a checkpoint after
  every partition (the most it can cost);
* ``resume, all covered``: ``--resume`` on the finished checkpoint: the workers read every
  file's bytes again to verify its fingerprint, nothing is computed (the floor of a resume).

For each: wall seconds and CPU seconds of the client and of the workers (``client.run`` of
``time.process_time`` before and after). Checks that the posteriors agree.

``--model gaussian_mixture`` (EM, 3 diagonal components, one start of at most 30 iterations;
suggested ``--rows 100000 --features 5 --files 20``) times EM without a checkpoint, with
its journal every 10 s, and with it after every M step; the EM fits are equal to the bit.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_dask import write_data  # the same data and specs as the cluster benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", default="linear_regression",
                        choices=["linear_regression", "gaussian_mixture"])
    args = parser.parse_args()
    em = args.model == "gaussian_mixture"

    import distributed
    from bayescheck.inference.dispatch import fit
    from bayescheck.models.spec import load_spec

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        spec = load_spec(write_data(tmp, args.rows, args.features, args.files, args.model))
        started = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        client.run(lambda: __import__("bayescheck.inference.families.linear_regression"))
        print(f"LocalCluster start-up ({args.workers} worker processes): "
              f"{time.perf_counter() - started:.1f} s")
        address = cluster.scheduler_address

        def workers_cpu() -> float:
            return sum(client.run(time.process_time).values())

        def timed(run):
            w0, c0, t0 = workers_cpu(), time.process_time(), time.perf_counter()
            result = run()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            return result, (wall, cpu, workers_cpu() - w0)

        def checkpointed(seconds: str, resume=False):
            def run():
                os.environ["BAYESCHECK_CHECKPOINT_SECONDS"] = seconds
                try:
                    return fit(spec, out=tmp / "out", resume=resume, scheduler=address)
                finally:
                    del os.environ["BAYESCHECK_CHECKPOINT_SECONDS"]
            return run

        base = "no checkpoint" if em else "tree"
        sides = {
            base: lambda: fit(spec, scheduler=address),
            "checkpointed": checkpointed("10"),
            "every iteration" if em else "every partition": checkpointed("0"),
        }
        if not em:
            sides["resume, all covered"] = checkpointed("10", resume=True)
        best: dict[str, tuple] = {}
        means = {}
        for _ in range(args.repeat):
            for name, run in sides.items():
                result, t = timed(run)
                means[name] = np.asarray(result.parameters["means"]["estimate"] if em else
                                         result.parameters["theta"]["mean"])
                if name not in best or t[0] < best[name][0]:
                    best[name] = t
        client.close()
        cluster.close(timeout=30)

    base = next(iter(best))
    ref = means[base]
    print(f"data: {args.rows} x {args.features} in {args.files} Parquet files; "
          f"best of {args.repeat}, sides alternated")
    print(f"{'side':>20} {'wall s':>8} {'client CPU s':>13} {'workers CPU s':>14} "
          f"{'wall / ' + base:>12} {'max rel diff':>13}")
    for name, (wall, cpu, wcpu) in best.items():
        diff = np.max(np.abs(means[name] - ref) / np.abs(ref))
        print(f"{name:>20} {wall:8.2f} {cpu:13.2f} {wcpu:14.2f} "
              f"{wall / best[base][0]:12.2f} {diff:13.1e}")


if __name__ == "__main__":
    main()
