"""``make bench``: every peer comparison in one run, written as one table to RESULTS.md.

    .venv/bin/python benchmarks/run.py [--quick] [--baseline EXE] [--only NAME ...]
        [--repeat K] [--out FILE] [--work DIR]

Each benchmark runs ours and its peer in the same run (alternating, best of ``--repeat``),
through public entry points only: the ``bayescheck`` command in a fresh process, the
``bayescheck`` facade, and ``bayescheck.estimators``. ``/proc/loadavg`` is read before and
after each benchmark and printed on its rows.

``--baseline EXE`` is another installation's ``bayescheck`` executable (for example a venv
of the commit before a change): the command rows run it too, alternating with ours, and the
table gets its time and the ratio. A baseline of commit REV, in a venv of its own (an
editable install of an old tree must not reach this one's venv)::

    git worktree add --detach ../baseline REV
    python3.12 -m venv ../baseline/.venv
    ../baseline/.venv/bin/pip install -e ../baseline      # or --no-deps over a shared site
    .venv/bin/python benchmarks/run.py --baseline ../baseline/.venv/bin/bayescheck

``--quick`` runs every benchmark at small sizes (about 4 minutes with a baseline at load 5 on
2 cores) and writes ``bench-output/RESULTS-quick.md`` unless ``--out`` says otherwise; the
full run (1e6-row data sets, ARDRegression's 15-180 s fits, pgmpy on a 1e6-row CSV) takes
of the order of 15-25 minutes on an idle 2-core machine (an estimate from the quick run and
the peers' known times) and writes ``benchmarks/RESULTS.md``. The section of RESULTS.md
from :data:`NOTES_MARKER` on (proposals to upstream projects, measured anchors) is written
by hand and kept by every run. Data sets are written once into ``--work`` and reused.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import platform
import subprocess
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_exact_pymc  # noqa: E402
import commands  # noqa: E402
import peer_conjugate  # noqa: E402
import peer_nist  # noqa: E402
import peer_pgmpy  # noqa: E402
import peer_sklearn  # noqa: E402
import peer_stream  # noqa: E402
from harness import HERE, ROOT, Context, Row, loadavg  # noqa: E402

#: Every benchmark, in the order it runs (the command rows first, while the machine's caches
#: are warm and the data sets not yet in memory).
BENCHMARKS = {**commands.BENCHMARKS, **peer_sklearn.BENCHMARKS, **peer_stream.BENCHMARKS,
              **peer_pgmpy.BENCHMARKS, **peer_nist.BENCHMARKS, **peer_conjugate.BENCHMARKS,
              **bench_exact_pymc.BENCHMARKS}

NOTES_MARKER = "<!-- notes: written by hand, kept by run.py -->"
PACKAGES = ("numpy", "scipy", "pandas", "pyarrow", "scikit-learn", "pgmpy", "statsmodels",
            "conjugate-models", "pymc", "pytensor", "nutpie", "arviz")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few minutes")
    parser.add_argument("--baseline", type=Path,
                        help="another installation's bayescheck executable (or its venv)")
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), metavar="NAME",
                        help=f"run these benchmarks only: {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeat", type=int, help="alternations per side (default 3, quick 2)")
    parser.add_argument("--out", type=Path, help="the table's file")
    parser.add_argument("--work", type=Path, default=ROOT / "bench-output" / "suite",
                        help="scratch folder: data written once, outputs")
    args = parser.parse_args(argv)
    out = args.out or (ROOT / "bench-output" / "RESULTS-quick.md" if args.quick
                       else HERE / "RESULTS.md")
    ctx = Context(quick=args.quick, repeat=args.repeat or (2 if args.quick else 3),
                  work=args.work.resolve(), baseline=_executable(args.baseline))
    ctx.work.mkdir(parents=True, exist_ok=True)
    started = datetime.now(UTC)
    rows, failed = [], []
    for name in args.only or BENCHMARKS:
        before, clock = loadavg(), time.perf_counter()
        print(f"== {name} (load {before:.2f})", flush=True)
        try:
            produced = BENCHMARKS[name](ctx)
        except Exception:  # a failing benchmark is reported, the others still run
            failed.append(name)
            traceback.print_exc()
            produced = [Row(f"{name}: FAILED (see the run's output)", "", math.nan, "", None)]
        after = loadavg()
        for row in produced:
            row.load = (before, after)
            print("   " + _line(row, ctx), flush=True)
        print(f"   ({time.perf_counter() - clock:.0f} s)", flush=True)
        rows.extend(produced)
    text = "\n".join([*_header(ctx, started), "", *_table(rows, ctx), "", _notes(), ""])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def _executable(path: Path | None) -> Path | None:
    """The bayescheck executable given, or the one of the venv / tree given."""
    if path is None:
        return None
    path = path.resolve()
    for candidate in (path, path / "bin" / "bayescheck", path / ".venv" / "bin" / "bayescheck"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit(f"--baseline: no bayescheck executable at or under {path}")


def _revision(tree: Path) -> str:
    proc = subprocess.run(["git", "-C", str(tree), "describe", "--always", "--dirty"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or "?"


def _baseline_label(ctx: Context) -> str:
    tree = ctx.baseline.parent.parent.parent  # TREE/.venv/bin/bayescheck
    return f"`{ctx.baseline}` ({_revision(tree)})"


def _machine() -> str:
    model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text()
                   .splitlines() if line.startswith("MemTotal")), 0)
    return (f"{model}, {os.cpu_count()} cores, {memory / 2**20:.0f} GiB, "
            f"{platform.system()} {platform.release()}")


def _versions() -> str:
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} (absent)")
    return ", ".join(found)


def _header(ctx: Context, started: datetime) -> list[str]:
    which = ("" if ctx.quick
             else "; ARD one fit each: ARDRegression takes 15-180 s a fit")
    lines = [
        "# Benchmark results",
        "",
        ("Written by `benchmarks/run.py --quick`: the QUICK sizes (small data sets; the "
         "rows column says which), not the full ones of `make bench`." if ctx.quick
         else "Written by `make bench` (`benchmarks/run.py`)."),
        "",
        f"- machine: {_machine()}",
        f"- date: {started:%Y-%m-%d %H:%M} to {datetime.now(UTC):%H:%M} UTC",
        f"- bayescheck {_revision(ROOT)}, Python {platform.python_version()}; {_versions()}",
        f"- each row: ours and the peer alternate, best of {ctx.repeat}{which} (calls in "
        "one process alternate until at least 1 s has passed); "
        "commands are timed from the start of their process to its exit; the load is "
        "`/proc/loadavg`'s 1-minute figure before / after the row's benchmark (2 cores: above "
        "2, other jobs shared the machine and wall times are inflated; the ratios of one "
        "row are measured side by side).",
        "- ratio: how many times faster (or more rows/s) ours is than the peer; for digits, "
        "ours minus the peer's.",
    ]
    if ctx.baseline is not None:
        lines.append(f"- before: the same command with {_baseline_label(ctx)}, alternating "
                     f"with ours; before / ours > 1 means this tree is faster.")
    return lines


def _value(x: float | None, unit: str) -> str:
    if x is None or not math.isfinite(x):
        return ""
    if unit == "s":
        return f"{x:.3g} s" if x >= 0.001 else f"{x * 1e6:.3g} us"
    if unit == "rows/s":
        return f"{x / 1e6:.3g} M rows/s"
    return f"{x:.1f}"


def _ratio(x: float | None, unit: str) -> str:
    if x is None:
        return ""
    return f"{x:+.1f}" if unit == "digits" else f"{x:.3g}x"


def _line(row: Row, ctx: Context) -> str:
    cells = [row.benchmark, row.rows, _value(row.ours, row.unit), row.peer_name,
             _value(row.peer, row.unit), _ratio(row.ratio, row.unit),
             row.target + ("" if row.met is None else (" met" if row.met else " **NOT met**"))]
    if ctx.baseline is not None:
        cells += [_value(row.baseline, row.unit), _ratio(row.baseline_ratio, row.unit)]
    cells += [f"{row.load[0]:.1f} / {row.load[1]:.1f}", row.note]
    return "| " + " | ".join(cells) + " |"


def _table(rows: list[Row], ctx: Context) -> list[str]:
    head = ["benchmark", "rows (n x d)", "ours", "peer", "peer's", "ratio", "target"]
    if ctx.baseline is not None:
        head += ["before", "before / ours"]
    head += ["load", "notes"]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *(_line(row, ctx) for row in rows)]


def _notes() -> str:
    """The hand-written section of benchmarks/RESULTS.md, from the marker on."""
    results = HERE / "RESULTS.md"
    text = results.read_text() if results.exists() else ""
    at = text.find(NOTES_MARKER)
    return text[at:].rstrip() if at >= 0 else NOTES_MARKER


if __name__ == "__main__":
    sys.exit(main())
