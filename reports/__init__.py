"""What the user sees: the ``bayescheck`` command, the check run and its report files."""

from .check import EXIT_CODES, CheckResult, run_check, write_json
from .cli import main
from .html import render_index, render_report

__all__ = ["EXIT_CODES", "CheckResult", "main", "render_index", "render_report", "run_check",
           "write_json"]
