"""Results as files: strict JSON (no NaN) written, and read back, by every command."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from models.errors import BayescheckError

__all__ = ["clean_json", "first_non_finite", "read_json", "rows_and_batches", "write_json",
           "write_text_atomic"]


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


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` by a temporary file and a rename.

    A reader (or a crash) sees the old file or the new one, never half of one.

    Raises
    ------
    BayescheckError
        When the file cannot be written, naming it.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BayescheckError(f"{path}: cannot write: {exc.strerror}") from None


def write_json(path: Path, content: dict) -> None:
    """Write ``content`` as strict JSON (NaN and inf become null), atomically."""
    write_text_atomic(path, json.dumps(clean_json(content), indent=2, allow_nan=False) + "\n")


def read_json(path: Path) -> dict | None:
    """The JSON in ``path``, or None when there is no such file.

    An unreadable file raises a :class:`~models.errors.BayescheckError` naming it.
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
