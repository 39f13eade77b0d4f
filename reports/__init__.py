"""What the user sees: the ``bayescheck`` command, the check run and its report files.

Names are imported on first use, so ``bayescheck fit`` never pays for the plotting stack.
"""

from importlib import import_module

_EXPORTS = {
    "EXIT_CODES": "check", "CheckResult": "check", "run_check": "check", "write_json": "writers",
    "main": "cli", "render_index": "html", "render_report": "html", "render_run": "report",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
