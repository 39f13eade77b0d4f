"""`check` on iris, K = 3, full covariance, MAP prior, default settings, over several seeds.

The data nobody tuned for (issue 13): scikit-learn's bundled iris (150 rows, 4 features, no
labels used), written to CSV with the spec below, then ``bayescheck check SPEC --seed S`` for
each seed, one after another. Reports per seed the verdict, exit code, sampler health (over
the chains that judged the estimate), how the chains sat in modes and the time.

    .venv/bin/python benchmarks/bench_mixture_iris.py [--seeds 0 1 2 3 4] [--out DIR]

Writes a markdown table to stdout and DIR/iris.md (default bench-output/iris); each run's
folder (report.html, summary.json, ...) is DIR/seed-S.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SPEC = """\
# iris (scikit-learn's load_iris, the four measurements, labels unused), K = 3, full
# covariances, MAP-EM with weak conjugate priors; [sampling] left at its defaults
# (4 chains x 1000 draws after 1000 tuning steps).
model = "gaussian_mixture"
n_components = 3
covariance = "full"

[data]
path = "iris.csv"

[prior]
concentration = 2.0                  # Dirichlet(2, 2, 2) on the weights
mean = [5.84, 3.06, 3.76, 1.20]      # m0: about the data's mean
kappa = 0.01                         # means | Sigma ~ N(m0, Sigma / 0.01)
iw_dof = 6.0                         # Sigma ~ InvWishart(6, 0.1 I): D + 2 degrees of freedom
iw_scale = 0.1
"""


def write_inputs(out: Path) -> Path:
    """iris.csv and iris.toml in ``out``; return the spec's path."""
    from sklearn.datasets import load_iris

    frame = load_iris(as_frame=True).frame.drop(columns="target")
    frame.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "iris.csv", index=False)
    (out / "iris.toml").write_text(SPEC)
    return out / "iris.toml"


def run(spec: Path, out: Path, seed: int) -> dict:
    """One ``check``; its summary's numbers for the table."""
    folder = out / f"seed-{seed}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    started = time.perf_counter()
    code = subprocess.run([sys.executable, "-m", "reports", "check", str(spec), "--out",
                           str(folder), "--seed", str(seed), "--quiet"], env=env,
                          cwd=ROOT).returncode
    seconds = time.perf_counter() - started
    summary = json.loads((folder / "summary.json").read_text())
    est = summary["estimates"]
    d, modes = est["diagnostics"], est.get("modes") or {}
    groups = modes.get("groups", [])
    return {"seed": seed, "code": code, "verdict": summary["verdict"], "seconds": seconds,
            "r_hat": d["max_r_hat"], "ess_bulk": d["min_ess_bulk"], "ess_tail": d["min_ess_tail"],
            "divergences": d["divergences"], "chains": d["chains"],
            "modes": " | ".join(",".join(map(str, g["chains"])) for g in groups),
            "split": modes.get("split"),
            "log_density": " | ".join(f"{g['log_density_median']:+.1f} / "
                                      f"{g['log_density_max']:+.1f}" for g in groups),
            "failed": [r["name"] for r in est["parameters"] if r["verdict"] == "fail"]}


def table(rows: list[dict]) -> str:
    """The markdown table."""
    head = ("| seed | verdict (exit) | chains judging | max r_hat | min bulk / tail ESS | "
            "divergences | chains per mode (EM's first) | log density − EM mode, median / "
            "highest, per mode | failed rows | time (s) |\n" + "|---" * 10 + "|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['verdict']} ({r['code']}) | {r['chains']} | "
                     f"{r['r_hat']:.3f} | {r['ess_bulk']:.0f} / {r['ess_tail']:.0f} | "
                     f"{r['divergences']} | {r['modes']} | {r['log_density']} | "
                     f"{', '.join(r['failed']) or '–'} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the seeds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output" / "iris")
    args = parser.parse_args(argv)
    spec = write_inputs(args.out)
    rows = []
    for seed in args.seeds:
        rows.append(run(spec, args.out, seed))
        print(f"seed {seed}: {rows[-1]['verdict']} in {rows[-1]['seconds']:.0f} s",
              file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    (args.out / "iris.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
