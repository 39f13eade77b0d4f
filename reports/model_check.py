"""A check of a user's own PyMC model: its files and the report ``check`` draws for a spec.

:func:`check_model` (``bayescheck.check_model``) runs
:func:`bayescheck.inference.conjugacy.check_model` and, with ``out``, :func:`write_model_check`
writes ``posterior.json`` (the exact posterior, sealed as ``fit`` seals it),
``comparison.csv``, ``posterior.nc`` (the NUTS draws and their posterior predictive),
``calibration.json`` (with ``simulations``), ``report.json``, ``report.html`` and
``summary.json``. The report is :func:`bayescheck.reports.report.render_run`'s, drawn from
those files, so ``bayescheck report DIR`` re-draws it without sampling.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from bayescheck.inference.checking.compare import Thresholds
from bayescheck.inference.checking.cost import DEFAULT_MAX_HOURS

from .calibration_report import CALIBRATION_JSON
from .posterior_file import PYMC_MODEL, sealed
from .report import model_report_data, render_run, write_report_data
from .writers import write_csv_rows, write_json, write_netcdf

__all__ = ["check_model", "check_model_file", "write_model_check"]

#: ``spec_path`` of a model given as a Python object rather than a file.
IN_PYTHON = "(Python)"


def check_model(model, *, out=None, draws: int = 1000, tune: int = 1000, chains: int = 4,
                random_seed: int = 1, sampler: str = "nutpie", simulations: int | None = None,
                thresholds: Thresholds | None = None, posterior=None, progress: bool = False,
                max_hours: float | None = DEFAULT_MAX_HOURS, report: bool = True,
                adaptation: str = "diag"):
    """Sample a PyMC model with NUTS, judge the draws against its exact posterior, write it.

    Parameters
    ----------
    model : pymc.Model
        The user's model, with its observed data.
    out : str or pathlib.Path, optional
        Folder for the files :func:`write_model_check` writes; None writes nothing.
    draws, tune, chains, random_seed, sampler, simulations, thresholds, posterior, progress,
    max_hours, adaptation
        As :func:`bayescheck.inference.conjugacy.check_model`.
    report : bool
        Render ``report.html`` (seconds of figures); ``report.json`` is written either way.

    Returns
    -------
    bayescheck.inference.conjugacy.ModelCheck
        ``verdict``, the comparison, the draws and the exact posterior; ``out`` set.

    Raises
    ------
    bayescheck.NotConjugate
        When the model has no exact posterior here (before anything is sampled).
    bayescheck.models.resources.TooLarge
        A sampling estimated above ``max_hours`` (before it starts).
    """
    from bayescheck.inference.conjugacy.check import check_model as judge

    result = judge(model, draws=draws, tune=tune, chains=chains, random_seed=random_seed,
                   sampler=sampler, simulations=simulations, thresholds=thresholds,
                   posterior=posterior, progress=progress, max_hours=max_hours,
                   adaptation=adaptation)
    if out is not None:
        write_model_check(result, Path(out), report=report)
    return result


def check_model_file(path, *, name: str | None = None, out=None, draws: int | None = None,
                     tune: int | None = None, chains: int | None = None,
                     seed: int | None = None, sampler: str = "nutpie",
                     simulations: int | None = None, progress: bool = False,
                     max_hours: float | None = DEFAULT_MAX_HOURS, report: bool = True,
                     adaptation: str = "diag"):
    """``bayescheck check model.py [--model NAME]``: :func:`check_model` on a file's model.

    The report names the model by its name in the file and shows the file's text.

    Parameters
    ----------
    path : str or pathlib.Path
        A Python file defining a ``pm.Model``
        (:func:`bayescheck.inference.conjugacy.find_model_file`).
    name : str, optional
        The model's name in the file, when it defines several.
    out, simulations, sampler, progress, max_hours, report, adaptation
        As :func:`check_model`.
    draws, tune, chains, seed : int, optional
        The command line's options; None takes :func:`check_model`'s defaults (1000, 1000,
        4, 1).

    Raises
    ------
    bayescheck.BayescheckError
        Naming the file (no model, several, it raised), or :class:`NotConjugate` naming the
        variable: exit code 2.
    """
    from bayescheck.inference.conjugacy.loader import find_model_file

    label, model = find_model_file(path, name)
    options = {k: v for k, v in dict(draws=draws, tune=tune, chains=chains,
                                     random_seed=seed).items() if v is not None}
    result = check_model(model, sampler=sampler, simulations=simulations, progress=progress,
                         max_hours=max_hours, adaptation=adaptation, **options)
    if out is not None:
        write_model_check(result, Path(out), name=label, path=Path(path), report=report)
    return result


def write_model_check(check, out: Path, *, name: str | None = None, path: Path | None = None,
                      report: bool = True) -> None:
    """Write a model check's files into ``out`` (created when missing); set ``check.out``.

    Parameters
    ----------
    check : bayescheck.inference.conjugacy.ModelCheck
        A finished check.
    out : pathlib.Path
        The folder.
    name : str, optional
        The model's name (default: the ``pm.Model``'s own name, or ``"pymc model"``).
    path : pathlib.Path, optional
        The file the model came from: the report shows its text. Without it the report
        shows the model as PyMC prints it (``model.str_repr()``).
    report : bool
        Render ``report.html``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    timings = check.timings
    model = check.exact.model
    name = name or getattr(model, "name", "") or PYMC_MODEL
    source = str(path) if path is not None else IN_PYTHON
    source_text = path.read_text(encoding="utf-8") if path is not None else model.str_repr()
    data_fingerprints = _observed_fingerprints(check.exact)
    write_json(out / "posterior.json", sealed(check.exact.to_json()))
    write_csv_rows(out / "comparison.csv", check.comparison.rows())
    write_netcdf(check.sample.idata, out / "posterior.nc")
    if check.calibration is not None:
        write_json(out / CALIBRATION_JSON, {
            "model": name, "engine": "exact", "seed": check.settings["seed"],
            "seconds": timings.get("calibration"), "spec_path": source,
            "spec_text": source_text, "data_fingerprints": data_fingerprints,
            "pair": "the PyMC model and its recognised exact posterior",
            "design": "the model's own prior predictive",
            **check.calibration.to_json()})
    timings["writing files"] = time.perf_counter() - began
    rendering = time.perf_counter()
    check.out = out
    write_report_data(out, model_report_data(check, model=name, source=source,
                                             source_text=source_text,
                                             data_fingerprints=data_fingerprints))
    if report:
        render_run(out, posteriors={"posterior.nc": check.sample.idata})
    timings["report"] = time.perf_counter() - rendering
    timings["total"] = timings.get("total", 0.0) + time.perf_counter() - began
    write_json(out / "summary.json", {**check.summary(), "model": name, "source": source})


def _observed_fingerprints(ex) -> list[str]:
    """One fingerprint per observed variable: its name, dtype, shape and values."""
    from bayescheck.data.fingerprints import fingerprint

    found = []
    for name in ex.graph.observed:
        values = np.ascontiguousarray(ex.graph.nodes[name].data)
        head = f"{name}\0{values.dtype.str}\0{values.shape}\0".encode()
        found.append(fingerprint(head + values.tobytes()))
    return found
