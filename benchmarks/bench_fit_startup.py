"""Wall time of ``bayescheck fit`` on every example: a fresh process each time, imports included.

    .venv/bin/python benchmarks/bench_fit_startup.py [--repeat N] [--baseline CHECKOUT]

Each example is fitted N times (default 5) as ``python -m reports fit SPEC --out TMP --quiet``
in a fresh interpreter, with this checkout first on the path; the median and the fastest
wall time and the median CPU time (user + system of the child) are reported. On these small
examples nearly all of it is start-up: the imports.

``--baseline CHECKOUT`` runs the same fits with the code of another checkout (for example
``git archive HEAD~3 | tar -x -C /tmp/base``), alternately with this one, so that both see the
same machine (on a shared machine the speed of a process varies by up to 2x within minutes).
Then the ratios of the medians (wall and CPU) are printed too, and the heaviest top-level
packages by import time (``python -X importtime``, self time summed per package) for one
example in each.

The children run from compiled bytecode, as an installed package does: ``PYTHONDONTWRITEBYTECODE``
(set in some shells and CI images) is dropped for them and their ``.pyc`` files go to a
temporary ``PYTHONPYCACHEPREFIX`` (no checkout is written to), filled by one untimed fit per
checkout before the timed ones. Without this every run compiles the project's own modules
again (about 0.1 s of CPU on the shared machine), which no user pays.
"""

from __future__ import annotations

import argparse
import atexit
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PYCACHE = Path(tempfile.mkdtemp(prefix="bench-fit-pycache-"))
atexit.register(shutil.rmtree, PYCACHE, ignore_errors=True)


def _fit(checkout: Path, spec: Path, out: Path, *flags: str) -> tuple[float, float, str]:
    """One ``fit`` in a fresh interpreter: wall seconds, CPU seconds, stderr."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *flags, "-m", "reports", "fit", str(spec), "--out",
                           str(out), "--quiet"], cwd=checkout, env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"{checkout}: fit {spec} failed:\n{done.stderr}")
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                         - before.children_system)
    return wall, cpu, done.stderr


def import_costs(checkout: Path, spec: Path, top: int = 8) -> list[tuple[str, float]]:
    """Milliseconds of import self time per top-level package, heaviest first."""
    with tempfile.TemporaryDirectory() as tmp:
        _, _, err = _fit(checkout, spec, Path(tmp), "-X", "importtime")
    per_package = collections.Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        per_package[name.strip().split(".")[0]] += int(self_us)
    return [(name, us / 1e3) for name, us in per_package.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    checkouts = {"this": HERE}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    specs = sorted((HERE / "examples").glob("*/*.toml"))
    print(f"Load average at the start: {os.getloadavg()[0]:.1f}\n")
    head = " | ".join(f"{k} median | {k} fastest | {k} CPU" for k in checkouts)
    ratio = " | wall baseline / this | CPU baseline / this" if args.baseline else ""
    print(f"| example | {head}{ratio} |")
    print("|---" * (1 + 3 * len(checkouts) + 2 * bool(args.baseline)) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, checkout in checkouts.items():  # untimed: writes the bytecode cache
            for spec in specs:
                _fit(checkout, spec, Path(tmp) / "warm" / name / spec.stem)
        for spec in specs:
            runs = {k: [] for k in checkouts}
            for i in range(args.repeat):
                for name, checkout in checkouts.items():
                    runs[name].append(_fit(checkout, spec, Path(tmp) / name / str(i))[:2])
            cells, medians, cpus = [], {}, {}
            for name, got in runs.items():
                walls = [w for w, _ in got]
                medians[name] = statistics.median(walls)
                cpus[name] = statistics.median(c for _, c in got)
                cells += [f"{medians[name]:.2f} s", f"{min(walls):.2f} s", f"{cpus[name]:.2f} s"]
            if args.baseline:
                cells += [f"{medians['baseline'] / medians['this']:.2f}",
                          f"{cpus['baseline'] / cpus['this']:.2f}"]
            print(f"| {spec.parent.name}/{spec.name} | " + " | ".join(cells) + " |")
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}\n")
    spec = HERE / "examples" / "linear_regression" / "stream.toml"
    for name, checkout in checkouts.items():
        costs = ", ".join(f"{pkg} {ms:.0f} ms" for pkg, ms in import_costs(checkout, spec))
        print(f"Import self time per package, {name}, {spec.parent.name}/{spec.name}: {costs}")


if __name__ == "__main__":
    main()
