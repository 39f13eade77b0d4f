"""Fit every example with two installations of bayescheck and compare their posterior.json.

    .venv/bin/python benchmarks/compare_examples.py --baseline OTHER/.venv/bin/bayescheck
        [--ours EXE] [--examples GLOB ...] [--work DIR] [--rtol 1e-12] [--json FILE]

Each spec under ``examples/`` is fitted by ``bayescheck fit SPEC --out DIR`` with each
executable (a fresh process, this tree's spec given to both). The two ``posterior.json``
files are flattened to ``path -> value`` leaves and compared: numbers by their relative
difference ``|a - b| / max(|a|, |b|)``, everything else for equality; keys present on one
side only and text that differs (a note's words) are listed. Wall-clock fields (any key
holding ``seconds``) are left out. A line per example says the largest difference and where
it is; the exit status is 1 when a number differs beyond ``--rtol`` or a fit fails, so the
script can guard a refactoring.

``--check`` also runs ``bayescheck check SPEC --out DIR --quiet`` with each executable, one
process at a time (the spec's own seed, draws, tune and chains for both), and prints a second
table: the verdict before and after, each side's attempts (a retry's verdict), the sampling
diagnostics, which parameters' verdicts differ, and the wall time. A check takes seconds to
minutes; ``--only`` picks examples by a part of their path.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Leaves that measure the machine, not the posterior.
VOLATILE = ("seconds",)


def flatten(value, prefix: str = "") -> dict:
    """``{"a.b[0].c": leaf}`` for a JSON document."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _volatile(path: str) -> bool:
    return any(word in path.rsplit(".", 1)[-1] for word in VOLATILE)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def relative(a: float, b: float) -> float:
    """``|a - b| / max(|a|, |b|)``; 0 for equal values (NaN = NaN, inf = inf included)."""
    if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                  and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def compare(ours: dict, before: dict) -> dict:
    """The differences between two posterior.json documents.

    Returns
    -------
    dict
        ``max_abs``, ``max_rel`` (over the numbers both hold) and ``where`` (the path of the
        largest relative difference), ``differing`` (paths beyond 0 relative, largest first,
        with both values; text as relative inf), ``text`` (paths of other leaves that differ:
        strings, booleans, null), ``only_ours`` / ``only_before`` (paths one side lacks),
        ``compared`` (numbers compared).
    """
    a = {k: v for k, v in flatten(ours).items() if not _volatile(k)}
    b = {k: v for k, v in flatten(before).items() if not _volatile(k)}
    differing, text, max_abs, max_rel, where, compared = [], [], 0.0, 0.0, "", 0
    for key in sorted(a.keys() & b.keys()):
        x, y = a[key], b[key]
        if _number(x) and _number(y):
            compared += 1
            rel = relative(float(x), float(y))
            if rel > 0:
                differing.append((rel, key, x, y))
                max_abs = max(max_abs, abs(float(x) - float(y)))
                if rel > max_rel:
                    max_rel, where = rel, key
        elif x != y:
            text.append(key)
            differing.append((math.inf, key, x, y))
    differing.sort(key=lambda t: (-t[0], t[1]))
    return {"max_abs": max_abs, "max_rel": max_rel, "where": where, "compared": compared,
            "text": text, "differing": differing, "only_ours": sorted(a.keys() - b.keys()),
            "only_before": sorted(b.keys() - a.keys())}


def fit(exe: Path, spec: Path, out: Path) -> dict | str:
    """posterior.json of ``exe fit spec``, or the error's last line."""
    proc = subprocess.run([str(exe), "fit", str(spec), "--out", str(out), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return f"exit {proc.returncode}: {lines[-1] if lines else ''}"
    return json.loads((out / "posterior.json").read_text())


def check(exe: Path, spec: Path, out: Path) -> dict:
    """summary.json of ``exe check spec`` (with the process's wall seconds), or its error."""
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "check", str(spec), "--out", str(out), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    summary = out / "summary.json"
    if not summary.exists():
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return {"verdict": f"exit {proc.returncode}: {lines[-1] if lines else ''}",
                "wall": seconds}
    return {**json.loads(summary.read_text()), "wall": seconds, "exit": proc.returncode}


def _attempts(summary: dict) -> str:
    return " -> ".join(f"{a.get('verdict')} ({a.get('draws')}/{a.get('tune')})"
                       for a in summary.get("attempts", []))


def _health(summary: dict) -> str:
    d = summary.get("diagnostics") or {}
    if not d:
        return ""
    return (f"r_hat {d.get('max_r_hat', math.nan):.3f}, ESS {d.get('min_ess_bulk', 0):.0f}/"
            f"{d.get('min_ess_tail', 0):.0f}, div {d.get('divergences')}")


def _parameter_verdicts(summary: dict) -> dict:
    return {p.get("name"): p.get("verdict") for p in summary.get("parameters", [])}


def compare_checks(specs: list[Path], args) -> dict:
    """Run ``check`` on each spec with both executables and print the verdicts' table."""
    print()
    print("| example | verdict before | verdict after | attempts before | attempts after "
          "| health before | health after | parameters differing | wall before / after |")
    print("|---|---|---|---|---|---|---|---|---|")
    found = {}
    for spec in specs:
        name = _name(spec)
        slug = name.removesuffix(".toml").replace("/", "-")
        before = check(args.baseline, spec, args.work / "check-before" / slug)
        ours = check(args.ours, spec, args.work / "check-ours" / slug)
        a, b = _parameter_verdicts(ours), _parameter_verdicts(before)
        moved = [f"{k}: {b.get(k)} -> {a.get(k)}" for k in sorted(a.keys() | b.keys(),
                                                                  key=str)
                 if a.get(k) != b.get(k)]
        print(f"| {name} | {before.get('verdict')} | {ours.get('verdict')} | "
              f"{_attempts(before)} | {_attempts(ours)} | {_health(before)} | "
              f"{_health(ours)} | {_short(moved)} | {before['wall']:.0f} / "
              f"{ours['wall']:.0f} s |", flush=True)
        found[name] = {"before": before.get("verdict"), "ours": ours.get("verdict"),
                       "parameters_moved": moved, "wall": [before["wall"], ours["wall"]]}
    return found


def _name(spec: Path) -> str:
    examples = ROOT / "examples"
    return str(spec.relative_to(examples) if spec.is_relative_to(examples) else spec)


def _short(paths: list[str], limit: int = 4) -> str:
    more = f" (+{len(paths) - limit})" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the other installation's bayescheck executable")
    parser.add_argument("--ours", type=Path, default=Path(sys.executable).parent / "bayescheck",
                        help="this installation's bayescheck (default: beside this python)")
    parser.add_argument("--examples", nargs="+", default=["examples/**/*.toml"],
                        help="globs under the repository root")
    parser.add_argument("--work", type=Path, default=ROOT / "bench-output" / "compare")
    parser.add_argument("--rtol", type=float, default=1e-12)
    parser.add_argument("--json", type=Path, help="write every difference here")
    parser.add_argument("--check", action="store_true",
                        help="also run check with both and compare the verdicts (slow)")
    parser.add_argument("--only", nargs="+", default=[],
                        help="examples whose path holds one of these words")
    parser.add_argument("--no-fit", action="store_true", help="skip the fit comparison")
    args = parser.parse_args(argv)
    specs = sorted({p for pattern in args.examples for p in ROOT.glob(pattern)})
    if args.only:
        specs = [s for s in specs if any(word in str(s) for word in args.only)]
    report, bad = ({}, False) if args.no_fit else compare_fits(specs, args)
    if args.check:
        checks = compare_checks(specs, args)
        report["check"] = checks
        bad |= any(v["before"] != v["ours"] for v in checks.values())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 1 if bad else 0


def compare_fits(specs: list[Path], args) -> tuple[dict, bool]:
    """Fit each spec with both executables; print the table; (every difference, any beyond
    ``args.rtol`` or a failed fit)."""
    report, bad = {}, False
    print("| example | numbers | max abs diff | max rel diff | where | text differs "
          "| keys one side only |")
    print("|---|---|---|---|---|---|---|")
    for spec in specs:
        name = _name(spec)
        slug = name.removesuffix(".toml").replace("/", "-")
        ours = fit(args.ours, spec, args.work / "ours" / slug)
        before = fit(args.baseline, spec, args.work / "before" / slug)
        if isinstance(ours, str) or isinstance(before, str):
            bad = True
            print(f"| {name} | fit failed: ours {ours if isinstance(ours, str) else 'ok'}; "
                  f"before {before if isinstance(before, str) else 'ok'} | | | | | |")
            report[name] = {"error": {"ours": ours if isinstance(ours, str) else None,
                                      "before": before if isinstance(before, str) else None}}
            continue
        diff = compare(ours, before)
        bad |= diff["max_rel"] > args.rtol
        one_side = "; ".join(filter(None, [
            diff["only_ours"] and f"ours: {_short(diff['only_ours'])}",
            diff["only_before"] and f"before: {_short(diff['only_before'])}"]))
        print(f"| {name} | {diff['compared']} | {diff['max_abs']:.3g} | {diff['max_rel']:.3g} | "
              f"{diff['where']} | {_short(diff['text'])} | {one_side} |", flush=True)
        report[name] = {**diff, "differing": [
            {"path": k, "relative": r, "ours": x, "before": y}
            for r, k, x, y in diff["differing"]]}
    return report, bad


if __name__ == "__main__":
    sys.exit(main())
