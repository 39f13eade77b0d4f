"""Rendering the HTML report and the demo index with Jinja2 (auto-escaped)."""

from __future__ import annotations

import math

from .writers import rows_and_batches

__all__ = ["render_index", "render_report"]

VERDICT_SENTENCES = {
    "pass": "the closed-form posterior and the NUTS draws agree on every parameter, "
            "within their Monte Carlo error.",
    "fail": "at least one parameter's closed-form posterior disagrees with the NUTS draws "
            "by more than Monte Carlo error allows.",
    "inconclusive": "the sampler's own diagnostics failed, so its draws cannot judge the "
                    "closed form; no verdict.",
}


_ENVIRONMENT = []


def _environment():
    """The Jinja2 environment, made once per process.

    Compiled templates are kept in Jinja2's bytecode cache (a folder of the temporary
    directory, keyed by the template's source), so that a new process does not compile
    the report template again (about 0.05-0.1 s).
    """
    if _ENVIRONMENT:
        return _ENVIRONMENT[0]
    from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, select_autoescape

    class QuietCache(FileSystemBytecodeCache):
        """A bytecode cache that never fails a report: a folder it cannot use is skipped."""

        def load_bytecode(self, bucket):
            try:
                super().load_bytecode(bucket)
            except (OSError, ValueError, EOFError):
                bucket.reset()

        def dump_bytecode(self, bucket):
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

    try:
        cache = QuietCache()
    except (OSError, RuntimeError):  # no usable temporary directory: compile every time
        cache = None
    env = Environment(loader=PackageLoader("bayescheck.reports", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      bytecode_cache=cache)
    env.globals["fmt"] = _fmt
    env.globals["rows_and_batches"] = rows_and_batches
    _ENVIRONMENT.append(env)
    return env


def _fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if digits else f"{value:.0f}"
    return str(value)


def render_report(context: dict) -> str:
    """Render ``report.html`` from the structured results in ``context``."""
    context = {"verdict_sentence": VERDICT_SENTENCES[context["verdict"]], **context}
    return _environment().get_template("report.html.j2").render(**context)


def render_index(entries: list[dict]) -> str:
    """Render the demo's ``index.html``: one row per example with its verdict."""
    return _environment().get_template("index.html.j2").render(entries=entries)

