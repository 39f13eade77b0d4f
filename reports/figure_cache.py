"""The figures of a report, kept beside it so that re-drawing unchanged inputs is free.

A report's figures depend only on the run's files (``report.json``, ``posterior.nc``,
``posterior_full.nc``, ``calibration.json``) and on the code that draws them. ``check``
draws them once; ``bayescheck report DIR`` used to draw the same PNGs again, and most of
its time was importing and running the plotting stack (benchmarks/REPORTS.md). The drawn
figures are stored in ``DIR/report_figures.json`` under a key: a hash of the bytes of
those files, of this package's source and of the versions of the libraries that draw.
Any change to one of them (a new check, a calibration added, another bayescheck or
matplotlib) is a different key, and the figures are drawn again; a figure that could not
be drawn (an exception) is never stored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

__all__ = ["CACHE_FILE", "cache_key", "load", "store"]

#: Where a run folder keeps its drawn figures.
CACHE_FILE = "report_figures.json"
#: The libraries whose versions change how a figure looks.
DRAWING_LIBRARIES = ("numpy", "scipy", "matplotlib", "arviz_stats", "arviz_plots", "xarray",
                     "h5netcdf", "h5py")

_code: str | None = None


def _installed(names: tuple[str, ...]) -> list[str]:
    """The ``NAME-VERSION.dist-info`` folders of ``names`` on ``sys.path``.

    The folder names carry the versions; listing the folders is a few milliseconds, where
    ``importlib.metadata.version`` costs about 0.1 s of imports and scanning.
    """
    import os
    import sys

    found = []
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        found += sorted(e for e in entries if e.endswith(".dist-info")
                        and e.split("-", 1)[0].lower().replace(".", "_") in names)
    return found


def _code_version() -> str:
    """A hash of this package's Python source and the drawing libraries' versions."""
    global _code
    if _code is None:
        digest = hashlib.blake2b(digest_size=16)
        for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        for name in _installed(DRAWING_LIBRARIES):
            digest.update(name.encode() + b"\0")
        _code = digest.hexdigest()
    return _code


def cache_key(out: Path, part: str, files: tuple[str, ...]) -> str:
    """The key of one part of a report (``"check"``, ``"calibration"``) drawn from ``files``.

    A file that does not exist counts as such, so that its appearing changes the key.
    """
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{part}\0{_code_version()}".encode())
    for name in files:
        path = Path(out) / name
        digest.update(b"\0" + name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except FileNotFoundError:
            digest.update(b"(missing)")
    return digest.hexdigest()


def _read(out: Path) -> dict:
    try:
        content = json.loads((Path(out) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: draw again
        return {}
    return content if isinstance(content, dict) else {}


def load(out: Path, key: str):
    """The value stored under ``key`` in ``out``'s cache, or None."""
    entry = _read(out).get(key)
    return entry if isinstance(entry, dict) else None


def store(out: Path, key: str, value: dict, keep: tuple[str, ...] = ()) -> None:
    """Store ``value`` under ``key``; of the older entries only those in ``keep`` stay.

    A folder that cannot be written keeps no cache; the report itself is not affected.
    """
    from bayescheck.models.errors import BayescheckError

    from .writers import write_text_atomic

    old = _read(out)
    content = {k: v for k, v in old.items() if k in keep}
    content[key] = value
    try:
        write_text_atomic(Path(out) / CACHE_FILE, json.dumps(content))
    except BayescheckError:
        pass
