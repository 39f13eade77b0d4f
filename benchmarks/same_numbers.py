"""Every example fitted by this checkout and by another one: the same numbers, to the last digit.

    .venv/bin/python benchmarks/same_numbers.py CHECKOUT

Runs ``python -m reports fit SPEC --out DIR`` for every ``examples/*/*.toml`` with the code of
this checkout and of ``CHECKOUT`` (for example ``git worktree add /tmp/base main``) and
compares ``posterior.json`` (parsed: every number exactly, the fit's ``seconds`` aside), the
printed summary (times and the output folder aside) and ``checkpoint.npz`` (every array, byte
for byte). Prints one line per example and exits 1 on any difference: a change meant to leave
the numbers alone (start-up, readers, layout) is shown to. Where they differ, every differing
number of posterior.json is listed (its place, both values, the relative difference and the
distance in units in the last place), then the printed lines and the checkpoint's arrays
(largest relative difference) that differ.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]


def _without_seconds(value):
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


def _fit(checkout: Path, spec: Path, out: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "reports", "fit", str(spec), "--out", str(out)],
                          cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)},
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{checkout}: fit {spec} failed:\n{done.stderr}")
    return re.sub(r"\d+(\.\d+)? s\b", "<t> s", done.stdout.replace(str(out), "<out>"))


def _ulps(x: float, y: float) -> int:
    """How many doubles lie between ``x`` and ``y`` (same sign; else -1)."""
    if (x < 0) != (y < 0):
        return -1
    ix, iy = (int(np.array(abs(v), dtype=np.float64).view(np.int64)) for v in (x, y))
    return abs(ix - iy)


def number_differences(a, b, where: str = "") -> list[str]:
    """One line per number that differs between two parsed JSON documents."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(set(a) | set(b)) if k != "seconds"
                for line in number_differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b, strict=True))
                for line in number_differences(x, y, f"{where}[{i}]")]
    if a == b:
        return []
    if isinstance(a, float) and isinstance(b, float):
        rel = abs(a - b) / max(abs(a), abs(b))
        return [f"  {where}: {a!r} -> {b!r} (relative {rel:.1e}, {_ulps(a, b)} ulp)"]
    return [f"  {where}: {a!r} -> {b!r}"]


def _details(out_a: Path, out_b: Path, print_a: str, print_b: str) -> list[str]:
    """The differing numbers, printed lines and checkpoint arrays of two fits."""
    pa, pb = (json.loads((o / "posterior.json").read_text()) for o in (out_a, out_b))
    lines = number_differences(pb, pa)  # other checkout -> this one
    lines += [f"  printed: {x!r} -> {y!r}" for x, y in
              zip(print_b.splitlines(), print_a.splitlines(), strict=False) if x != y]
    ca, cb = out_a / "checkpoint.npz", out_b / "checkpoint.npz"
    if ca.exists() and cb.exists():
        with np.load(ca, allow_pickle=True) as za, np.load(cb, allow_pickle=True) as zb:
            for k in sorted(set(za.files) & set(zb.files)):
                x, y = za[k], zb[k]
                if x.tobytes() == y.tobytes():
                    continue
                if x.dtype.kind == "f" and x.shape == y.shape:
                    rel = np.max(np.abs(x - y) / np.maximum(np.abs(y), np.finfo(float).tiny))
                    lines.append(f"  checkpoint.npz {k}: largest relative difference {rel:.1e}")
                else:
                    lines.append(f"  checkpoint.npz {k}: differs")
    return lines


def differences(a: Path, b: Path, out_a: Path, out_b: Path, print_a: str,
                print_b: str) -> list[str]:
    """What differs between two fits of one spec: empty when every number is the same."""
    found = []
    pa, pb = (json.loads((o / "posterior.json").read_text()) for o in (out_a, out_b))
    if _without_seconds(pa) != _without_seconds(pb):
        found.append("posterior.json")
    if print_a != print_b:
        found.append("printed summary")
    ca, cb = out_a / "checkpoint.npz", out_b / "checkpoint.npz"
    if ca.exists() != cb.exists():
        found.append("checkpoint.npz (one side only)")
    elif ca.exists():
        with np.load(ca, allow_pickle=True) as za, np.load(cb, allow_pickle=True) as zb:
            if set(za.files) != set(zb.files) or any(
                    za[k].tobytes() != zb[k].tobytes() for k in za.files):
                found.append("checkpoint.npz")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="the other checkout")
    args = parser.parse_args()
    other = args.checkout.resolve()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((HERE / "examples").glob("*/*.toml")):
            name = f"{spec.parent.name}/{spec.name}"
            outs = [Path(tmp) / side / spec.parent.name / spec.stem for side in ("a", "b")]
            # The spec named relative to each checkout (its working folder): posterior.json
            # and the checkpoint record the data files' paths, the same on both sides.
            relative = spec.relative_to(HERE)
            printed = [_fit(HERE, relative, outs[0]), _fit(other, relative, outs[1])]
            found = differences(HERE, other, *outs, *printed)
            print(f"{name}: {'same numbers' if not found else 'DIFFERENT ' + ', '.join(found)}")
            if found:
                print("\n".join(_details(*outs, *printed)))
            bad += bool(found)
    print("every example gives the same numbers" if not bad else f"{bad} example(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
