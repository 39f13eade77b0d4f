"""Results as files: strict JSON (no NaN) written, and read back, by every command."""

from __future__ import annotations

import json
import math
from pathlib import Path

from models.errors import BayescheckError

__all__ = ["clean_json", "read_json", "rows_and_batches", "write_json"]


def clean_json(value):
    """Replace NaN and infinities, which JSON lacks, by None, in nested dicts and lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def write_json(path: Path, content: dict) -> None:
    """Write ``content`` as strict JSON (NaN and inf become null)."""
    Path(path).write_text(json.dumps(clean_json(content), indent=2, allow_nan=False) + "\n")


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
