"""Run every benchmark in one go and gather their tables in bench-output/RESULTS.md.

    .venv/bin/python benchmarks/run.py [--quick]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = ["bench_linear_regression.py", "bench_ard.py", "bench_mixture.py", "bench_estimators.py",
           "bench_naive_bayes.py", "bench_calibration.py"]


def main() -> int:
    extra = sys.argv[1:]
    sections, failed = [], []
    for name in BENCHES:
        script = HERE / name
        if not script.exists():
            continue
        print(f"== {name}", flush=True)
        proc = subprocess.run([sys.executable, str(script), *extra], stdout=subprocess.PIPE,
                              text=True)
        print(proc.stdout, flush=True)
        if proc.returncode:
            failed.append(name)
        sections.append(f"## {name}\n\n{proc.stdout}")
    out = HERE.parent / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "RESULTS.md").write_text("# Benchmark results\n\n" + "\n".join(sections))
    print(f"wrote {out / 'RESULTS.md'}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
