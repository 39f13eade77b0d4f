"""``check`` at large n reads the files once: one pass over the data instead of two.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_check_read_once.py [--spec SPEC] [--repeat 3]

The part of ``bayescheck check`` that reads the data, on a linear regression above
``MAX_ROWWISE`` rows (default spec: ``bench_stream.py``'s 1,000,000 x 50 in 100 Parquet
files, written there first), in one process, the two ways alternating in each round:

- two passes (before): ``fit(spec)``, then the declaration's own pass over the files
  (:meth:`bayescheck.models.LinearRegression.declare`'s loop: each batch read and validated again, its
  numpy QR root), the roots merged;
- one pass (now): ``fit(spec, declaration=True)``, which takes the same roots from the rows
  it has read, then the same merge.

The PyMC model built from the merged root is the same in both (a test holds the statistics
bit-equal) and is not built here; nor is NUTS run. BLAS on one thread, as the stream runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def two_passes(spec):
    from bayescheck.inference.dispatch import fit
    from bayescheck.models.linear_regression import qr_root

    result = fit(spec)
    roots = [spec.model.declaration_root(spec.model.joint_design(b)) for b in spec.data.batches()]
    return result, qr_root(np.vstack(roots))


def one_pass(spec):
    from bayescheck.inference.dispatch import fit
    from bayescheck.models.linear_regression import qr_root

    result = fit(spec, declaration=True)
    return result, qr_root(np.vstack(result.declaration["batch_roots"]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path,
                        default=ROOT / "bench-output" / "stream-data" / "1000000_100_parquet.toml")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.spec.exists():
        import sys
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_stream import make_data
        args.spec = make_data(args.spec.parent, 1_000_000, 100, False)
    from bayescheck.models import load_spec
    from threadpoolctl import threadpool_limits

    spec = load_spec(args.spec)
    ways = {"two passes (fit, then the declaration reads again)": two_passes,
            "one pass (fit(declaration=True))": one_pass}
    wall = {k: [] for k in ways}
    cpu = {k: [] for k in ways}
    roots = {}
    loads = [os.getloadavg()[0]]
    with threadpool_limits(1, user_api="blas"):
        for _ in range(args.repeat):
            for name, way in ways.items():
                c, t = time.process_time(), time.perf_counter()
                _, roots[name] = way(spec)
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
            loads.append(os.getloadavg()[0])
    first, second = roots.values()
    assert np.array_equal(first, second), "the declaration's statistics differ"
    base = statistics.median(wall[next(iter(ways))])
    base_cpu = statistics.median(cpu[next(iter(ways))])
    lines = [f"| reading for check | wall s (median of {args.repeat}) | / two passes | "
             f"CPU s | / two passes |", "|---|---:|---:|---:|---:|"]
    for name in ways:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        lines.append(f"| {name} | {w:.3f} | {w / base:.2f} | {c:.3f} | {c / base_cpu:.2f} |")
    print("\n".join(lines))
    print(f"\nload average (1 min) before and after each round: "
          f"{', '.join(f'{x:.1f}' for x in loads)}; declared root bit-equal: yes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
