"""The files of a model check: what ``check`` writes for a spec, for a user's PyMC model."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from bayescheck.data.output_files import write_file

__all__ = ["write_check_files"]


def _clean(value):
    """NaN and infinities (which JSON lacks) as None; numpy scalars and arrays as Python."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_check_files(check, out: Path) -> None:
    """Write ``summary.json``, ``comparison.csv``, ``posterior.json``, ``posterior.nc``.

    And ``calibration.json`` when the check ran a calibration. ``out`` is created.

    Parameters
    ----------
    check : ModelCheck
        A finished :func:`~bayescheck.inference.conjugacy.check_model`.
    out : pathlib.Path
        The folder.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = check.comparison.rows()
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
    writer.writeheader()
    writer.writerows(rows)
    write_file(out / "comparison.csv", table.getvalue())
    write_file(out / "posterior.json", json.dumps(_clean(check.exact.to_json()), indent=2)
               + "\n")
    write_file(out / "posterior.nc",
               lambda fh: check.sample.idata.to_netcdf(fh, engine="h5netcdf"))
    if check.calibration is not None:
        write_file(out / "calibration.json",
                   json.dumps(_clean(check.calibration.to_json()), indent=2) + "\n")
    write_file(out / "summary.json", json.dumps(_clean(check.summary()), indent=2) + "\n")
