"""Packaging: the repository's folders install under one import name, ``bayescheck``.

``data/``, ``models/``, ``inference/`` and ``reports/`` stay at the top of the repository (see
docs/architecture.md) and install as ``bayescheck.data``, ``bayescheck.models``,
``bayescheck.inference`` and ``bayescheck.reports``; ``examples/`` ships as
``bayescheck/examples`` (the data of ``bayescheck demo``). Packages are discovered, so a new
subpackage cannot be left out of the wheel. Everything else about the distribution is in
pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = ("data", "models", "inference", "reports", "examples")


def discovered(folder: str) -> list[str]:
    """``folder`` and every folder below it, as packages named under ``bayescheck``."""
    found = find_namespace_packages(include=[folder, f"{folder}.*"], exclude=["*__pycache__*"])
    return [f"bayescheck.{name}" for name in found]


setup(
    packages=["bayescheck", "bayescheck.estimators"] + sum(map(discovered, FOLDERS), []),
    package_dir={f"bayescheck.{folder}": folder for folder in FOLDERS},
    package_data={"bayescheck.reports.templates": ["*.j2"],
                  "bayescheck.examples": ["**/*.toml", "**/*.csv", "**/*.parquet", "**/*.py"]},
)
