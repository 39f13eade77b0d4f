"""Results as files: strict JSON (no NaN) written, and read back, by every command."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from bayescheck.data.output_files import write_file
from bayescheck.models.errors import BayescheckError

__all__ = ["clean_json", "first_non_finite", "json_text", "read_json", "rows_and_batches",
           "write_csv_rows", "write_json", "write_netcdf", "write_text_atomic"]


def clean_json(value):
    """Replace NaN and infinities, which JSON lacks, by None, in nested dicts and lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def first_non_finite(value, where: str = "") -> str | None:
    """The dotted path of the first NaN or infinity in nested dicts and lists, else None."""
    if isinstance(value, float):  # numpy float64 is a float subclass
        return None if math.isfinite(value) else (where or "(top level)")
    if isinstance(value, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for path, item in items:
        found = first_non_finite(item, path)
        if found is not None:
            return found
    return None


def write_text_atomic(path: Path, text: str, *, manifest: bool = True) -> None:
    """Write ``text`` to ``path`` by a temporary file and a rename, never through a link.

    A reader (or a crash) sees the old file or the new one, never half of one
    (:func:`bayescheck.data.output_files.write_file`; ``manifest`` as there: False for a
    file the user named).

    Raises
    ------
    BayescheckError
        When the file cannot be written, naming it.
    """
    write_file(path, text, manifest=manifest)


def write_json(path: Path, content: dict) -> None:
    """Write ``content`` as strict JSON (NaN and inf become null), atomically."""
    write_text_atomic(path, json_text(content) + "\n")


#: Lists of at least this many objects are written one compact object per line.
LONG_LIST = 20


def json_text(content) -> str:
    """``content`` as strict JSON, indented by 2, NaN and inf written as null.

    As ``json.dumps(clean_json(content), indent=2)``, except that a list of
    :data:`LONG_LIST` or more objects (a stream's trajectory: one record per batch) has one
    object per line, written compactly. json's indenting encoder is pure Python: 0.5 s for the
    trajectory of 1000 batches of 50 coefficients, against about 0.1 s this way.
    """
    lists: list[list] = []
    # Each long list is first written as a string holding this run's random token, then
    # replaced by its lines; no string in the content can hold the token by chance.
    token = os.urandom(8).hex()

    def skeleton(value):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: skeleton(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            if len(value) >= LONG_LIST and all(isinstance(v, dict) for v in value):
                lists.append(value)
                return f"\0{token}:{len(lists) - 1}\0"
            return [skeleton(v) for v in value]
        return value

    text = json.dumps(skeleton(content), indent=2, allow_nan=False)
    if not lists:
        return text

    def one_line(item) -> str:
        try:
            return json.dumps(item, allow_nan=False)
        except ValueError:  # a NaN or an infinity: null, as everywhere else
            return json.dumps(clean_json(item), allow_nan=False)

    def expand(match) -> str:
        indent, before, index = match.group(1), match.group(2), int(match.group(3))
        inner = ",\n".join(f"{indent}  {one_line(item)}" for item in lists[index])
        return f"{indent}{before}[\n{inner}\n{indent}]"

    placeholder = re.compile(rf'^( *)(.*)"\\u0000{token}:(\d+)\\u0000"', re.MULTILINE)
    return placeholder.sub(expand, text)


def read_json(path: Path) -> dict | None:
    """The JSON in ``path``, or None when there is no such file.

    An unreadable file raises a :class:`~bayescheck.models.errors.BayescheckError` naming it.
    """
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BayescheckError(f"{path}: cannot read: {exc}") from None


def rows_and_batches(n_rows: int, n_batches: int) -> str:
    """How much data a fit read, for a sentence: ``"150 rows"``, ``"1 row in 3 batches"``.

    A model whose data are in the spec (no batches, no rows) reads ``"no data rows (the
    model is given in the spec)"``; one batch is not mentioned.
    """
    if not n_batches and not n_rows:
        return "no data rows (the model is given in the spec)"
    rows = f"{n_rows} row{'' if n_rows == 1 else 's'}"
    return rows if n_batches <= 1 else f"{rows} in {n_batches} batches"


def write_netcdf(tree, path: str | Path) -> None:
    """Write an ArviZ ``DataTree`` to ``path`` (netCDF-4 through h5netcdf), atomically."""
    write_file(path, lambda fh: tree.to_netcdf(fh, engine="h5netcdf"))


def write_csv_rows(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as CSV (the header is the union of their keys, in order), atomically."""
    import csv
    import io

    fields = list(dict.fromkeys(k for row in rows for k in row))  # rows may differ in keys
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    write_file(path, text.getvalue())
